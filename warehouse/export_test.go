package warehouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/money"
	"github.com/liftab/lift/warehouse"
)

func openWarehouse(t *testing.T) *warehouse.Warehouse {
	t.Helper()
	addr, db := lifttest.ClickHouse(t)
	w, err := warehouse.Open(context.Background(), warehouse.Config{Addr: addr, Database: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// The export and the webhook lookups read the latest version of each order
// and the first assignment of each visitor, without waiting for merges.
func TestExportAndAttributionReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openWarehouse(t)
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	order := func(id, exp string, version uint64, group int16, revenue float64, bot bool) warehouse.Order {
		return warehouse.Order{ShopID: 7, ExperimentID: exp, OrderID: id, Version: version, TestGroup: group,
			VisitorID: "v-" + id, SessionID: "s-" + id, Revenue: revenue, Cost: 1, Currency: "USD",
			LineProductIDs: []string{"1", "2"}, LineVariantIDs: []string{"11", "22"}, LineQuantities: []uint32{1, 3},
			LinePrices: []float64{10, 5}, CreatedAt: t0.Add(time.Duration(version%100) * time.Minute), Source: "webhook", IsBot: bot}
	}
	b := &warehouse.Batch{
		Orders: []warehouse.Order{
			order("o1", "42", 1, 1, 25, false),
			order("o1", "42", 5, 1, 20, false), // an edit: the latest version stands
			order("o1", "43", 1, 0, 25, false),
			order("o2", "42", 2, 0, 8, false),
			order("o3", "42", 3, 0, 9, true), // a bot's order is left out
			order("o4", "42", 4, 1, 1, false),
		},
		Assignments: []warehouse.Assignment{
			{ShopID: 7, ExperimentID: "42", VisitorID: "vis", TestGroup: 1, SessionID: "first", ReceivedAt: t0},
			{ShopID: 7, ExperimentID: "42", VisitorID: "vis", TestGroup: 0, SessionID: "later", ReceivedAt: t0.Add(time.Hour)},
			{ShopID: 7, ExperimentID: "43", VisitorID: "vis", TestGroup: -1, SessionID: "x", ReceivedAt: t0},
			{ShopID: 8, ExperimentID: "44", VisitorID: "vis", TestGroup: 1, ReceivedAt: t0},
		},
	}
	b.Orders = append(b.Orders, order("o4", "42", 4, 1, 1, false)) // a replayed copy folds
	if err := w.Insert(ctx, b); err != nil {
		t.Fatal(err)
	}

	t.Run("ExportOrders", func(t *testing.T) {
		var got []warehouse.ExportRow
		n, err := w.ExportOrders(ctx, 7, "42", func(r *warehouse.ExportRow) error { got = append(got, *r); return nil })
		if err != nil {
			t.Fatal(err)
		}
		row := func(id string, version uint64, group int16, revenue float64) warehouse.ExportRow {
			return warehouse.ExportRow{OrderID: id, CreatedAt: t0.Add(time.Duration(version) * time.Minute), TestGroup: group,
				VisitorID: "v-" + id, SessionID: "s-" + id, Revenue: money.FromFloat(revenue), Cost: decimal.NewFromInt(1), Currency: "USD", LineItems: 2, Quantity: 4, Version: version}
		}
		want := []warehouse.ExportRow{row("o2", 2, 0, 8), row("o4", 4, 1, 1), row("o1", 5, 1, 20)}
		if n != 3 {
			t.Errorf("rows = %d, want 3", n)
		}
		if d := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
			cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); d != "" {
			t.Errorf("mismatch (-want +got):\n%s", d)
		}
	})
	t.Run("OrderAttributions", func(t *testing.T) {
		got, err := w.OrderAttributions(ctx, 7, "o1")
		if err != nil {
			t.Fatal(err)
		}
		want := []warehouse.Attribution{
			{ExperimentID: "42", TestGroup: 1, VisitorID: "v-o1", SessionID: "s-o1", CreatedAt: t0.Add(5 * time.Minute), Version: 5},
			{ExperimentID: "43", TestGroup: 0, VisitorID: "v-o1", SessionID: "s-o1", CreatedAt: t0.Add(time.Minute), Version: 1},
		}
		if d := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); d != "" {
			t.Errorf("mismatch (-want +got):\n%s", d)
		}
	})
	t.Run("VisitorAssignments", func(t *testing.T) {
		got, err := w.VisitorAssignments(ctx, 7, "vis")
		if err != nil {
			t.Fatal(err)
		}
		want := []warehouse.VisitorGroup{{ExperimentID: "42", TestGroup: 1, SessionID: "first"}, {ExperimentID: "43", TestGroup: -1, SessionID: "x"}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("mismatch (-want +got):\n%s", d)
		}
	})
}
