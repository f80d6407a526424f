package experiment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
)

// A dead-lettered delivery, once its cause is mended, is replayed: it is
// reopened and queued as a task named by its dead letter, processed as if
// it had just arrived, and only then does its dead letter go.
func TestWebhookReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newWebhookFakes()
	f.renameErr = errors.New("the store refuses it")
	svc := f.service()
	for _, id := range []string{"p", "in-flight"} {
		if _, _, err := f.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: 1, ID: id, Topic: experiment.TopicShopUpdate, Body: []byte(`{"name":"Mended"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Process(ctx, 1, "p", experiment.WebhookAttempt{Try: 5, Last: true}); err != nil {
		t.Fatal(err)
	}
	if l, _ := svc.DeadLetters(ctx, 1); len(l) != 1 || l[0].DeliveryID != "p" {
		t.Fatalf("dead letters = %+v", l)
	}
	code := func(err error) string {
		if e, ok := experiment.AsError(err); ok {
			return e.Code
		}
		return ""
	}

	t.Run("OnlyDeadLetters", func(t *testing.T) {
		if err := svc.Replay(ctx, 1, "nope"); kindOf(err) != experiment.KindNotFound {
			t.Fatalf("replay of an unknown delivery = %v", err)
		}
		// Still in its normal tries: a replay would run it twice at once.
		if err := svc.Replay(ctx, 1, "in-flight"); code(err) != "delivery_pending" {
			t.Fatalf("replay of a delivery still being tried = %v", err)
		}
	})
	t.Run("QueueDownThenAgain", func(t *testing.T) {
		f.enqueueErr = errors.New("redis down")
		err := svc.Replay(ctx, 1, "p")
		f.enqueueErr = nil
		if err == nil || !strings.Contains(err.Error(), "replay it again") {
			t.Fatalf("replay with the queue down = %v", err)
		}
		// Reopened, and still listed: nothing is lost.
		if d, _ := f.FindDelivery(ctx, 1, "p"); d.ProcessedAt != nil || len(f.dead) != 1 {
			t.Fatalf("after a half-done replay: delivery %+v, dead letters %+v", d, f.dead)
		}
		for range 2 { // the second replay of the same dead letter queues nothing more
			if err := svc.Replay(ctx, 1, "p"); err != nil {
				t.Fatal(err)
			}
		}
		if got := f.enqueued; len(got) != 1 || !strings.HasPrefix(got[0], "replay 1/p@") {
			t.Fatalf("queued %v, want one replay", got)
		}
	})
	t.Run("ProcessedAfterTheFix", func(t *testing.T) {
		f.renameErr = nil
		if err := svc.Process(ctx, 1, "p", experiment.WebhookAttempt{Try: 1}); err != nil {
			t.Fatal(err)
		}
		d, _ := f.FindDelivery(ctx, 1, "p")
		if d.ProcessedAt == nil || strings.HasPrefix(d.Outcome, "dead-lettered") || f.names[1] != "Mended" || len(f.dead) != 0 {
			t.Fatalf("delivery %+v, shop name %q, dead letters %+v", d, f.names[1], f.dead)
		}
	})
	t.Run("ProcessedIsNotReplayed", func(t *testing.T) {
		if err := svc.Replay(ctx, 1, "p"); code(err) != "delivery_processed" {
			t.Fatalf("replay of a processed delivery = %v", err)
		}
		if len(f.enqueued) != 1 {
			t.Fatalf("queued %v", f.enqueued)
		}
	})
}
