package webhooks_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

func TestSignatureRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	body := `{"id":1,"name":"x","domain":"x.example"}`
	cases := []struct{ name, sig, body string }{
		{"missing", "-", body},
		{"wrong secret", webhooks.Sign([]byte("other"), []byte(body)), body},
		{"tampered body", webhooks.Sign([]byte(secret), []byte(body)), `{"id":1,"name":"y","domain":"x.example"}`},
		{"not base64", "%%%", body},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sig := c.sig
			if sig == "-" {
				sig = " "
			}
			id := fmt.Sprintf("bad-%d", i)
			status, raw := b.deliver(t, shop, experiment.TopicShopUpdate, id, c.body, sig)
			if status != http.StatusUnauthorized || !strings.Contains(raw, `"status":"error"`) || !strings.Contains(raw, `"message"`) {
				t.Fatalf("got %d %s, want 401 in the session envelope", status, raw)
			}
			if _, err := b.db.FindDelivery(context.Background(), shop.ID, id); err == nil {
				t.Fatal("a refused delivery was recorded")
			}
		})
	}
	t.Run("missing headers", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/api/webhooks", strings.NewReader(body))
		req.Header.Set(webhooks.HeaderSignature, webhooks.Sign([]byte(secret), []byte(body)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("got %d, want 400", res.StatusCode)
		}
	})
	t.Run("unknown shop is acknowledged", func(t *testing.T) {
		other := &experiment.Shop{Domain: "nobody.myshopify.com"}
		if status, raw := b.deliver(t, other, experiment.TopicShopUpdate, "u1", body, ""); status != http.StatusOK || raw != "" {
			t.Fatalf("got %d %q", status, raw)
		}
	})
}

// What the stores would refuse, or no topic could read, is answered at
// once and never recorded; a body over the limit is 413.
func TestBodyRefusedAtReceipt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	fits := `{"name":"` + strings.Repeat("a", maxBody-11) + `"}`
	cases := []struct {
		name   string
		body   string
		sig    string
		status int
	}{
		{"NUL escape", `{"id":1,"name":"a\u0000b"}`, "", http.StatusBadRequest},
		{"NUL byte", "{\"id\":1,\"name\":\"a\x00b\"}", "", http.StatusBadRequest},
		{"invalid UTF-8", "{\"id\":1,\"name\":\"a\xffb\"}", "", http.StatusBadRequest},
		{"not JSON", `{"id":1,`, "", http.StatusBadRequest},
		{"over the limit", fits + " ", "", http.StatusRequestEntityTooLarge},
		{"bad signature before the body", `{"name":"a\u0000b"}`, "AAAA", http.StatusUnauthorized},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := "refused-" + string(rune('a'+i))
			status, raw := b.deliver(t, shop, experiment.TopicShopUpdate, id, c.body, c.sig)
			if status != c.status || !strings.Contains(raw, `"status":"error"`) || !strings.Contains(raw, `"message":`) {
				t.Fatalf("got %d %s, want %d in the session envelope", status, raw, c.status)
			}
			if _, err := b.db.FindDelivery(context.Background(), shop.ID, id); err == nil {
				t.Fatal("a refused delivery was recorded")
			}
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		if len(fits) != maxBody {
			t.Fatalf("body is %d bytes, want %d", len(fits), maxBody)
		}
		if status, raw := b.deliver(t, shop, experiment.TopicShopUpdate, "fits", fits, ""); status != http.StatusOK || raw != "" {
			t.Fatalf("got %d %q", status, raw)
		}
	})
}

// A delivery whose processing always fails (recorded before bodies were
// checked at receipt: a NUL Postgres refuses) is tried a bounded number of
// times, then dead-lettered and marked processed, and never tried again.
func TestPoisonDeliveryDeadLettered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.newShop(t)
	poison := []byte(`{"id":1,"name":"a\u0000b","domain":""}`)
	record := func(t *testing.T, id string) {
		t.Helper()
		_, err := store.WebhookRepo{DB: b.db}.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "webhook.receive", ResourceType: "webhook_delivery"},
			func(ctx context.Context, tx experiment.WebhookTx) (experiment.WriteResult, error) {
				_, _, err := tx.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: shop.ID, ID: id, Topic: experiment.TopicShopUpdate, Body: poison})
				return experiment.WriteResult{}, err
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	deadLetters := func(t *testing.T) []store.DeadLetter {
		t.Helper()
		l, err := b.db.FindDeadLetters(ctx, shop.ID)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	record(t, "poison-1")
	for try := 1; try < experiment.DefaultWebhookMaxTries; try++ {
		if err := b.svc.Process(ctx, shop.ID, "poison-1", experiment.WebhookAttempt{Try: try}); err == nil {
			t.Fatalf("try %d succeeded", try)
		}
		if d, err := b.db.FindDelivery(ctx, shop.ID, "poison-1"); err != nil || d.ProcessedAt != nil || len(deadLetters(t)) != 0 {
			t.Fatalf("try %d: delivery %+v (%v), dead letters %d", try, d, err, len(deadLetters(t)))
		}
	}
	last := experiment.WebhookAttempt{Try: experiment.DefaultWebhookMaxTries}
	if err := b.svc.Process(ctx, shop.ID, "poison-1", last); err != nil {
		t.Fatalf("the last try returned %v; the queue would retry it", err)
	}
	l := deadLetters(t)
	if len(l) != 1 || l[0].DeliveryID != "poison-1" || l[0].Topic != experiment.TopicShopUpdate || !bytes.Equal(l[0].Body, poison) ||
		l[0].Tries != experiment.DefaultWebhookMaxTries || l[0].LastError == "" || l[0].At.IsZero() {
		t.Fatalf("dead letters = %+v", l)
	}
	d, err := b.db.FindDelivery(ctx, shop.ID, "poison-1")
	if err != nil || d.ProcessedAt == nil || !strings.HasPrefix(d.Outcome, "dead-lettered: ") {
		t.Fatalf("delivery = %+v, %v", d, err)
	}
	if got, err := b.db.FindShopByID(ctx, shop.ID); err != nil || got.Name != "Before" {
		t.Errorf("shop = %+v (%v), want its name unchanged", got, err)
	}

	t.Run("never tried again", func(t *testing.T) {
		if err := b.svc.Process(ctx, shop.ID, "poison-1", experiment.WebhookAttempt{Try: 9}); err != nil {
			t.Fatal(err)
		}
		status, _ := b.deliver(t, shop, experiment.TopicShopUpdate, "poison-1", `{"id":1,"name":"x"}`, "")
		again, err := b.db.FindDelivery(ctx, shop.ID, "poison-1")
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusOK || !again.ProcessedAt.Equal(*d.ProcessedAt) || len(deadLetters(t)) != 1 {
			t.Fatalf("redelivery %d, processed %v (first %v), dead letters %d", status, again.ProcessedAt, d.ProcessedAt, len(deadLetters(t)))
		}
	})
	t.Run("replayed once mended", func(t *testing.T) {
		// The state a dead letter leaves, for a body the stores take: as if
		// its cause (a bug, a long hang) were mended since.
		_, err := store.WebhookRepo{DB: b.db}.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "webhook.dead_letter", ResourceType: "webhook_delivery"},
			func(ctx context.Context, tx experiment.WebhookTx) (experiment.WriteResult, error) {
				if _, _, err := tx.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: shop.ID, ID: "mended-1", Topic: experiment.TopicShopUpdate,
					Body: []byte(`{"id":1,"name":"Replayed"}`)}); err != nil {
					return experiment.WriteResult{}, err
				}
				if err := tx.InsertDeadLetter(ctx, experiment.WebhookDeadLetter{ShopID: shop.ID, DeliveryID: "mended-1", Topic: experiment.TopicShopUpdate,
					Body: []byte(`{"id":1,"name":"Replayed"}`), LastError: "timeout", Tries: 5}); err != nil {
					return experiment.WriteResult{}, err
				}
				return experiment.WriteResult{}, tx.MarkDeliveryProcessed(ctx, shop.ID, "mended-1", "dead-lettered: timeout")
			})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.svc.Replay(ctx, shop.ID, "mended-1"); err != nil {
			t.Fatal(err)
		}
		d := b.waitProcessed(t, shop.ID, "mended-1") // by the worker, from the replay's task
		if d.Outcome == "" || strings.HasPrefix(d.Outcome, "dead-lettered") {
			t.Fatalf("replayed delivery = %+v", d)
		}
		for _, l := range deadLetters(t) {
			if l.DeliveryID == "mended-1" {
				t.Fatalf("the dead letter stayed: %+v", l)
			}
		}
		if got, err := b.db.FindShopByID(ctx, shop.ID); err != nil || got.Name != "Replayed" {
			t.Fatalf("shop = %+v (%v), want the replayed name", got, err)
		}
		if err := b.svc.Replay(ctx, shop.ID, "mended-1"); err == nil || !strings.Contains(err.Error(), "delivery_processed") {
			t.Fatalf("a second replay = %v, want delivery_processed", err)
		}
	})
	t.Run("the queue's last try dead-letters earlier", func(t *testing.T) {
		record(t, "poison-2")
		if err := b.svc.Process(ctx, shop.ID, "poison-2", experiment.WebhookAttempt{Try: 2, Last: true}); err != nil {
			t.Fatal(err)
		}
		if l := deadLetters(t); len(l) != 2 || l[1].DeliveryID != "poison-2" || l[1].Tries != 2 {
			t.Fatalf("dead letters = %+v", l)
		}
	})
}
