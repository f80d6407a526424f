package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/ingest"
)

// legacyOrder posts an order through the legacy storefront path (ingest:
// validation, WAL, flusher) and waits until it is in ClickHouse.
func (b *bundle) legacyOrder(t *testing.T, shop *experiment.Shop, test *experiment.Test, orderID string, group, revenue float64, at time.Time) {
	t.Helper()
	in, err := ingest.New(ingest.Config{Dir: t.TempDir(), FlushInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, b.wh)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(); err != nil {
		t.Fatal(err)
	}
	req := &ingest.LegacyRequest{ExperimentID: ingest.FlexString(fmt.Sprint(test.ID)), VisitorID: "legacy-visitor",
		OrderID: ingest.FlexString(orderID), TestGroup: &group, Revenue: &revenue, Currency: "USD"}
	if err := in.TrackLegacy(context.Background(), ingest.LegacyOrder, shop.ID, shop.Currency, req, ingest.Meta{ReceivedAt: at}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := in.Close(ctx); err != nil { // drains the WAL into ClickHouse
		t.Fatal(err)
	}
}

// revenueByGroup is each group's revenue over the test's orders as they
// stand (the latest version of each, as results and exports read them).
func (b *bundle) revenueByGroup(t *testing.T, shop *experiment.Shop, test *experiment.Test) map[int16]float64 {
	t.Helper()
	out := map[int16]float64{}
	for _, o := range b.orders(t, shop.ID, test.ID) {
		out[o.TestGroup] += o.Revenue.InexactFloat64()
	}
	return out
}

// standingAfterMerge is the revenue ReplacingMergeTree keeps for the order
// once its parts are merged: the engine agrees with the queries.
func (b *bundle) standingAfterMerge(t *testing.T, shop *experiment.Shop, test *experiment.Test, orderID string) float64 {
	t.Helper()
	ctx := context.Background()
	if err := b.wh.Conn().Exec(ctx, fmt.Sprintf("OPTIMIZE TABLE %s.orders FINAL", b.wh.Database())); err != nil {
		t.Fatal(err)
	}
	var rev float64
	err := b.wh.Conn().QueryRow(ctx, fmt.Sprintf(`SELECT toFloat64(revenue) FROM %s.orders FINAL
		WHERE shop_id = ? AND experiment_id = ? AND order_id = ?`, b.wh.Database()), shop.ID, fmt.Sprint(test.ID), orderID).Scan(&rev)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// TestSignedOrderAlwaysWins: an unauthenticated legacy order never changes
// an order a signed webhook wrote, whichever arrives last; between legacy
// orders the latest receipt still stands. The signed order (updated
// 2026-06-01) is older than any legacy receipt (now), so receipt time alone
// would let the legacy one win.
func TestSignedOrderAlwaysWins(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	now := time.Now().UTC()
	signed := func(t *testing.T, test *experiment.Test, orderID, delivery string) {
		body := orderJSON(orderID, "2026-06-01T10:00:00Z", "", attrs("vis-s", fmt.Sprintf("%d:1", test.ID)))
		if d := b.process(t, shop, experiment.TopicOrdersCreate, delivery, body); d.Outcome != "attributed to 1 tests" {
			t.Fatalf("outcome = %q", d.Outcome)
		}
	}
	cases := []struct {
		name     string
		steps    func(t *testing.T, test *experiment.Test, orderID string)
		want     map[int16]float64
		standing float64
	}{
		{"signed then legacy", func(t *testing.T, test *experiment.Test, id string) {
			signed(t, test, id, "sl-"+id)
			b.legacyOrder(t, shop, test, id, 0, 1, now)
		}, map[int16]float64{1: 154}, 154},
		{"legacy then signed", func(t *testing.T, test *experiment.Test, id string) {
			b.legacyOrder(t, shop, test, id, 0, 5, now)
			signed(t, test, id, "ls-"+id)
		}, map[int16]float64{1: 154}, 154},
		{"legacy then legacy", func(t *testing.T, test *experiment.Test, id string) {
			b.legacyOrder(t, shop, test, id, 0, 10, now)
			b.legacyOrder(t, shop, test, id, 1, 20, now.Add(time.Second))
		}, map[int16]float64{1: 20}, 20},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			test := b.newTest(t, shop, priceBody(c.name), experiment.StatusActive)
			id := fmt.Sprint(9001 + i)
			c.steps(t, test, id)
			got := b.revenueByGroup(t, shop, test)
			if len(got) != len(c.want) || got[0] != c.want[0] || got[1] != c.want[1] {
				t.Fatalf("revenue by group = %v, want %v", got, c.want)
			}
			if rev := b.standingAfterMerge(t, shop, test, id); rev != c.standing {
				t.Fatalf("after merge the order stands at %v, want %v", rev, c.standing)
			}
		})
	}
	t.Run("an edit never takes a legacy group", func(t *testing.T) {
		// Only a legacy row exists: the edit attributes from its own cart
		// attributes, as a create would, rather than inheriting group 0.
		test := b.newTest(t, shop, priceBody("edit"), experiment.StatusActive)
		b.legacyOrder(t, shop, test, "9101", 0, 5, now)
		body := orderJSON("9101", "2026-06-01T10:00:00Z", "", attrs("vis-s", fmt.Sprintf("%d:1", test.ID)))
		if d := b.process(t, shop, experiment.TopicOrdersEdited, "edit-9101", body); d.Outcome != "attributed to 1 tests" {
			t.Fatalf("outcome = %q", d.Outcome)
		}
		if got := b.revenueByGroup(t, shop, test); len(got) != 1 || got[1] != 154 {
			t.Fatalf("revenue by group = %v", got)
		}
	})
}
