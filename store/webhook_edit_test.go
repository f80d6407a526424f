package store_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// TestOrderEditWaitsOnlyForARecentCreate runs the webhook use case on the
// real stores (Postgres deliveries, ClickHouse orders): an ORDERS_EDITED of
// an order placed days before it was received, which no test counts, is
// final on its first try; one of an order placed a minute before is
// retried until its create has written the attribution, then lands as the
// order's new version (review 4, item 5; storefront audit 2, S2).
func TestOrderEditWaitsOnlyForARecentCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	addr, chdb := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: addr, Database: chdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	shop := newShop(t, db, "edit-retry.myshopify.com", false)
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	tt := lifttest.RunningTest(shop.ID, "counted", now.AddDate(0, 0, -10))
	lifttest.PutTest(t, db, tt)
	svc := &experiment.WebhookService{Repo: store.WebhookRepo{DB: db}, Orders: warehouse.WebhookOrders{W: wh},
		Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	deliver := func(id, topic, body string) {
		t.Helper()
		if err := inWebhookUnit(ctx, db, shop.ID, func(ctx context.Context, tx experiment.WebhookTx) error {
			_, _, err := tx.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: shop.ID, ID: id, Topic: topic, Body: []byte(body), ReceivedAt: now})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	outcome := func(id string) string {
		t.Helper()
		d, err := db.FindDelivery(ctx, shop.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.ProcessedAt == nil {
			return ""
		}
		return d.Outcome
	}
	// Edits carry no cart attributes: only the create's rows attribute them.
	edit := func(order string, placed time.Time) string {
		return fmt.Sprintf(`{"id":%s,"created_at":%q,"updated_at":%q,"currency":"USD","current_total_price":"30.00"}`,
			order, placed.Format(time.RFC3339), now.Format(time.RFC3339))
	}

	t.Run("PlacedDaysAgo", func(t *testing.T) {
		deliver("old-edit", experiment.TopicOrdersEdited, edit("8001", now.AddDate(0, 0, -3)))
		if err := svc.Process(ctx, shop.ID, "old-edit", experiment.WebhookAttempt{Try: 1}); err != nil {
			t.Fatalf("first try: %v, want final", err)
		}
		if got := outcome("old-edit"); !strings.HasPrefix(got, "unattributed") {
			t.Fatalf("outcome %q, want unattributed on the first try", got)
		}
		if dead, err := db.FindDeadLetters(ctx, shop.ID); err != nil || len(dead) != 0 {
			t.Fatalf("dead letters %v, %v", dead, err)
		}
	})
	t.Run("PlacedAMinuteAgo", func(t *testing.T) {
		placed := now.Add(-time.Minute)
		deliver("new-edit", experiment.TopicOrdersEdited, edit("8002", placed))
		if err := svc.Process(ctx, shop.ID, "new-edit", experiment.WebhookAttempt{Try: 1}); err == nil {
			t.Fatal("an edit of a minute-old order with no attribution yet was not retried")
		}
		if got := outcome("new-edit"); got != "" {
			t.Fatalf("processed as %q before its create", got)
		}
		create := fmt.Sprintf(`{"id":8002,"created_at":%q,"updated_at":%q,"currency":"USD","total_price":"50.00",
			"note_attributes":[{"name":"_lift_visitor_id","value":"v-1"},{"name":"_lift_assignments","value":"%d:1"}]}`,
			placed.Format(time.RFC3339), placed.Format(time.RFC3339), tt.ID)
		deliver("create", experiment.TopicOrdersCreate, create)
		if err := svc.Process(ctx, shop.ID, "create", experiment.WebhookAttempt{Try: 1}); err != nil {
			t.Fatal(err)
		}
		if err := svc.Process(ctx, shop.ID, "new-edit", experiment.WebhookAttempt{Try: 2}); err != nil {
			t.Fatal(err)
		}
		if got := outcome("new-edit"); got != "new version for 1 tests" {
			t.Fatalf("outcome %q after the create", got)
		}
		var rows []warehouse.ExportRow
		if _, err := wh.ExportOrders(ctx, shop.ID, strconv.FormatInt(tt.ID, 10), func(r *warehouse.ExportRow) error {
			rows = append(rows, *r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].OrderID != "8002" || rows[0].TestGroup != 1 || !rows[0].Revenue.Equal(decimal.NewFromInt(30)) {
			t.Fatalf("orders %+v, want 8002 in group 1 at the edit's 30.00", rows)
		}
	})
}
