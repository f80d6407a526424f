package experiment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
)

// A dead-lettered delivery, once its cause is mended, is replayed: its dead
// letter goes, it is reopened and queued as a new task, and it is then
// processed as if it had just arrived, with fresh tries.
func TestWebhookReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newWebhookFakes()
	f.renameErr = errors.New("the store refuses it")
	svc := f.service()
	if _, _, err := f.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: 1, ID: "p", Topic: experiment.TopicShopUpdate, Body: []byte(`{"name":"Mended"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Process(ctx, 1, "p", experiment.WebhookAttempt{Try: 5, Last: true}); err != nil {
		t.Fatal(err)
	}
	if l, _ := svc.DeadLetters(ctx, 1); len(l) != 1 || l[0].DeliveryID != "p" {
		t.Fatalf("dead letters = %+v", l)
	}

	t.Run("UnknownDelivery", func(t *testing.T) {
		if err := svc.Replay(ctx, 1, "nope"); kindOf(err) != experiment.KindNotFound {
			t.Fatalf("replay of an unknown delivery = %v", err)
		}
	})
	t.Run("QueueDownThenAgain", func(t *testing.T) {
		f.enqueueErr = errors.New("redis down")
		err := svc.Replay(ctx, 1, "p")
		f.enqueueErr = nil
		if err == nil || !strings.Contains(err.Error(), "replay it again") {
			t.Fatalf("replay with the queue down = %v", err)
		}
		if d, _ := f.FindDelivery(ctx, 1, "p"); d.ProcessedAt != nil || len(f.dead) != 0 {
			t.Fatalf("after a half-done replay: delivery %+v, dead letters %+v", d, f.dead)
		}
		// Replaying again mends it: the delivery is still unprocessed.
		if err := svc.Replay(ctx, 1, "p"); err != nil {
			t.Fatal(err)
		}
		if got := f.enqueued; len(got) != 1 || got[0] != "again 1/p" {
			t.Fatalf("queued %v", got)
		}
	})
	t.Run("ProcessedAfterTheFix", func(t *testing.T) {
		f.renameErr = nil
		if err := svc.Process(ctx, 1, "p", experiment.WebhookAttempt{Try: 1}); err != nil {
			t.Fatal(err)
		}
		d, _ := f.FindDelivery(ctx, 1, "p")
		if d.ProcessedAt == nil || strings.HasPrefix(d.Outcome, "dead-lettered") || f.names[1] != "Mended" {
			t.Fatalf("delivery %+v, shop name %q", d, f.names[1])
		}
	})
	t.Run("ProcessedIsNotReplayed", func(t *testing.T) {
		err := svc.Replay(ctx, 1, "p")
		if e, ok := experiment.AsError(err); !ok || e.Kind != experiment.KindConflict || e.Code != "delivery_processed" {
			t.Fatalf("replay of a processed delivery = %v", err)
		}
		if len(f.enqueued) != 1 {
			t.Fatalf("queued %v", f.enqueued)
		}
	})
}
