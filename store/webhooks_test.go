package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// inWebhookUnit runs fn as one unit of work of the webhook repository, as
// the webhook service does.
func inWebhookUnit(ctx context.Context, db *store.DB, shopID int64, fn func(ctx context.Context, tx experiment.WebhookTx) error) error {
	_, err := store.WebhookRepo{DB: db}.Write(ctx, experiment.WriteMeta{ShopID: shopID, Action: "webhook.test", ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx experiment.WebhookTx) (experiment.WriteResult, error) {
			return experiment.WriteResult{}, fn(ctx, tx)
		})
	return err
}

// The delivery record dedupes by shop and id; a dead letter keeps any body
// and an error text whatever it quotes.
func TestWebhookDeliveriesAndDeadLetters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	shop := newShop(t, db, "dead-letters.myshopify.com", false)
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	write := func(fn func(ctx context.Context, tx experiment.WebhookTx) error) {
		t.Helper()
		if err := inWebhookUnit(ctx, db, shop.ID, fn); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("InsertDelivery dedupes", func(t *testing.T) {
		for i, want := range []bool{true, false} {
			write(func(ctx context.Context, tx experiment.WebhookTx) error {
				d, created, err := tx.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: shop.ID, ID: "d1",
					Topic: experiment.TopicShopUpdate, Body: []byte(`{"n":` + string(rune('0'+i)) + `}`), ReceivedAt: at})
				if err != nil {
					return err
				}
				if created != want || string(d.Body) != `{"n":0}` || !d.ReceivedAt.Equal(at) {
					t.Errorf("call %d: created %v, stored %+v", i, created, d)
				}
				return nil
			})
		}
	})
	t.Run("InsertDeadLetter", func(t *testing.T) {
		body := []byte("{\"name\":\"a\x00\xffb\"}")
		write(func(ctx context.Context, tx experiment.WebhookTx) error {
			return tx.InsertDeadLetter(ctx, experiment.WebhookDeadLetter{ShopID: shop.ID, DeliveryID: "d1",
				Topic: experiment.TopicShopUpdate, Body: body, LastError: "refused \x00 and \xff", Tries: 5, At: at})
		})
		got, err := db.FindDeadLetters(ctx, shop.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := experiment.WebhookDeadLetter{ShopID: shop.ID, DeliveryID: "d1", Topic: experiment.TopicShopUpdate, Body: body,
			LastError: "refused  and \uFFFD", Tries: 5, At: at}
		if len(got) != 1 || string(got[0].Body) != string(want.Body) || got[0].LastError != want.LastError ||
			got[0].Tries != 5 || !got[0].At.Equal(at) || got[0].DeliveryID != "d1" {
			t.Fatalf("dead letters = %+v, want %+v", got, want)
		}
		if n, err := db.CountDeadLetters(ctx); err != nil || n != 1 {
			t.Errorf("CountDeadLetters = %d, %v; want 1", n, err)
		}
	})
}

// TestPublishThemeAtOnce: publishes of two themes in concurrent units of
// work leave exactly one published theme; without the shop's row lock each
// unpublished the old main under the other and both stayed main.
func TestPublishThemeAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	shop := newShop(t, db, "publish-race.myshopify.com", false)
	publish := func(id string) error {
		return inWebhookUnit(ctx, db, shop.ID, func(ctx context.Context, tx experiment.WebhookTx) error {
			return tx.PublishTheme(ctx, shop.ID, id, "gid://shopify/OnlineStoreTheme/"+id, "Theme "+id)
		})
	}
	for _, id := range []string{"1", "2", "3"} { // each theme exists before the race
		if err := publish(id); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 20; round++ {
		errs := make(chan error, 2)
		for _, id := range []string{"1", "2"} {
			go func() { errs <- publish(id) }()
		}
		for range 2 {
			// A unit that collides with the other (KindUnavailable) is a
			// retry the platform's redelivery makes; nothing half-done.
			if err := <-errs; err != nil {
				if e, ok := experiment.AsError(err); !ok || e.Kind != experiment.KindUnavailable {
					t.Fatal(err)
				}
			}
		}
		var mains int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM catalog_themes WHERE shop_id = $1 AND role = 'main'`, shop.ID).Scan(&mains); err != nil {
			t.Fatal(err)
		}
		if mains != 1 {
			t.Fatalf("round %d: %d published themes, want 1", round, mains)
		}
	}
}

// TestFindTestsLiveAt: every test that may have run at a moment comes back
// (active or paused, or ended no earlier than a minute before it), and
// Test.LiveAt keeps those that did; a test ended well before is not read.
func TestFindTestsLiveAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	shop := newShop(t, db, "live-at.myshopify.com", false)
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	put := func(name string, status experiment.Status, start, end *time.Time) {
		t.Helper()
		tt := lifttest.RunningTest(shop.ID, name, at.AddDate(0, -1, 0))
		tt.Status, tt.StartedAt, tt.EndedAt = status, start, end
		lifttest.PutTest(t, db, tt)
	}
	ptr := func(d time.Duration) *time.Time { v := at.Add(d); return &v }
	put("active", experiment.StatusActive, ptr(-time.Hour), nil)
	put("ended after", experiment.StatusEnded, ptr(-time.Hour), ptr(time.Hour))
	put("archived after ending after", experiment.StatusArchived, ptr(-time.Hour), ptr(30*time.Second))
	put("ended long before", experiment.StatusEnded, ptr(-3*time.Hour), ptr(-2*time.Hour))
	put("started after", experiment.StatusEnded, ptr(time.Hour), ptr(2*time.Hour))
	put("draft", experiment.StatusDraft, nil, nil)
	// Archived before it ran: no end, so not read at all (review 4).
	put("archived draft", experiment.StatusArchived, nil, nil)

	got, err := db.FindTestsLiveAt(ctx, shop.ID, at)
	if err != nil {
		t.Fatal(err)
	}
	var read, live []string
	for _, tt := range got {
		read = append(read, tt.Name)
		if tt.LiveAt(at) {
			live = append(live, tt.Name)
		}
	}
	slices.Sort(read)
	slices.Sort(live)
	if want := []string{"active", "archived after ending after", "ended after", "started after"}; !slices.Equal(read, want) {
		t.Errorf("read %v, want %v", read, want)
	}
	if want := []string{"active", "archived after ending after", "ended after"}; !slices.Equal(live, want) {
		t.Errorf("live at %s: %v, want %v", at, live, want)
	}
}
