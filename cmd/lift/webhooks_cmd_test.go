package main

import (
	"context"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

// `lift webhooks dead-letters` lists what the worker gave up on and `lift
// webhooks replay` reopens and queues it, as an operator runs them.
func TestWebhooksCommand(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, _ := s.shop(true)
	ctx := context.Background()
	_, err := store.WebhookRepo{DB: s.app.DB}.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "webhook.dead_letter", ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx experiment.WebhookTx) (experiment.WriteResult, error) {
			body := []byte(`{"id":1,"name":"Replayed"}`)
			if _, _, err := tx.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: shop.ID, ID: "gave-up-1", Topic: experiment.TopicShopUpdate, Body: body}); err != nil {
				return experiment.WriteResult{}, err
			}
			if err := tx.InsertDeadLetter(ctx, experiment.WebhookDeadLetter{ShopID: shop.ID, DeliveryID: "gave-up-1", Topic: experiment.TopicShopUpdate,
				Body: body, LastError: "store.SetShopName: timeout:\n  the pool was exhausted", Tries: 5}); err != nil {
				return experiment.WriteResult{}, err
			}
			return experiment.WriteResult{}, tx.MarkDeliveryProcessed(ctx, shop.ID, "gave-up-1", "dead-lettered: timeout")
		})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (stdout, stderr string, err error) {
		t.Helper()
		return s.command(newWebhooksCmd(), append(args, "--shop", shop.Domain)...)
	}

	stdout, stderr, err := run("dead-letters")
	if err != nil || !strings.Contains(stdout, "gave-up-1") || !strings.Contains(stdout, "SHOP_UPDATE") || !strings.Contains(stdout, " dead ") ||
		!strings.Contains(stdout, "store.SetShopName: timeout: the pool was exhausted") || !strings.Contains(stderr, "1 dead-lettered deliveries") {
		t.Fatalf("dead-letters: %v\n%s%s", err, stdout, stderr)
	}
	if _, _, err := run("replay"); err == nil || !strings.Contains(err.Error(), "--all") {
		t.Fatalf("replay of nothing = %v", err)
	}
	stdout, stderr, err = run("replay", "--all")
	if err != nil || stdout != "gave-up-1 queued\n" || !strings.Contains(stderr, "1 of 1 deliveries queued") {
		t.Fatalf("replay --all: %v\n%s%s", err, stdout, stderr)
	}
	d, err := s.app.DB.FindDelivery(ctx, shop.ID, "gave-up-1")
	if err != nil || d.ProcessedAt != nil {
		t.Fatalf("after the replay the delivery is %+v (%v), want it reopened", d, err)
	}
	// No worker runs here: the delivery waits in the queue, and its dead
	// letter stays listed until it is processed.
	if stdout, _, err := run("dead-letters"); err != nil || !strings.Contains(stdout, "replaying") {
		t.Fatalf("dead letters after the replay: %v\n%s", err, stdout)
	}
	if n := s.countWhere("SELECT count(*) FROM audit_log WHERE action = 'webhook.replay' AND resource_id = $1", "gave-up-1"); n != 1 {
		t.Fatalf("%d audit records of the replay, want 1", n)
	}
}
