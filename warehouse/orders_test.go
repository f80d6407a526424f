package warehouse_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/liftab/lift/clickhouse"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/warehouse"
)

// standing is the test's orders as results and exports read them.
func standing(t *testing.T, w *warehouse.Warehouse, exp string) []warehouse.ExportRow {
	t.Helper()
	var out []warehouse.ExportRow
	if _, err := w.ExportOrders(context.Background(), 9, exp, func(r *warehouse.ExportRow) error {
		out = append(out, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func legacyRow(exp, id string, at time.Time, group int16, revenue float64) warehouse.Order {
	return warehouse.Order{ShopID: 9, ExperimentID: exp, OrderID: id, Version: uint64(at.UnixMilli()), TestGroup: group,
		Revenue: revenue, Currency: "USD", CreatedAt: at, Source: "legacy"}
}

// A signed row stands over every legacy row of the order, and its version
// reads back as the order's update time in ms.
func TestSignedOrdersStandAboveLegacy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openWarehouse(t)
	orders := warehouse.WebhookOrders{W: w}
	updated := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	later := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) // a legacy receipt long after the update
	if err := w.Insert(ctx, &warehouse.Batch{Orders: []warehouse.Order{legacyRow("1", "o1", later, 0, 1)}}); err != nil {
		t.Fatal(err)
	}
	err := orders.WriteSignedOrders(ctx, []experiment.SignedOrder{{ShopID: 9, ExperimentID: "1", OrderID: "o1",
		Version: uint64(updated.UnixMilli()), TestGroup: 1, VisitorID: "v", Revenue: decimal.NewFromInt(154), Currency: "USD", CreatedAt: updated}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Insert(ctx, &warehouse.Batch{Orders: []warehouse.Order{legacyRow("1", "o1", later.Add(time.Hour), 0, 2)}}); err != nil {
		t.Fatal(err)
	}
	got := standing(t, w, "1")
	if len(got) != 1 || !got[0].Revenue.Equal(decimal.NewFromInt(154)) || got[0].TestGroup != 1 || got[0].Version != uint64(updated.UnixMilli()) {
		t.Fatalf("standing = %+v", got)
	}
	t.Run("attributions read signed rows only", func(t *testing.T) {
		if err := w.Insert(ctx, &warehouse.Batch{Orders: []warehouse.Order{legacyRow("2", "o2", later, 0, 3)}}); err != nil {
			t.Fatal(err)
		}
		a, err := orders.SignedOrderAttributions(ctx, 9, "o2")
		if err != nil || len(a) != 0 {
			t.Fatalf("legacy-only order: %+v, %v", a, err)
		}
		a, err = orders.SignedOrderAttributions(ctx, 9, "o1")
		if err != nil || len(a) != 1 || a[0].TestGroup != 1 || a[0].Version != uint64(updated.UnixMilli()) || !a[0].CreatedAt.Equal(updated) {
			t.Fatalf("signed order: %+v, %v", a, err)
		}
	})
}

// clickhouse/0400 lifts webhook rows written before the priority existed
// above the legacy rows that replaced them; run twice it changes nothing.
func TestSignedPriorityMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openWarehouse(t)
	updated := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	old := warehouse.Order{ShopID: 9, ExperimentID: "5", OrderID: "o5", Version: uint64(updated.UnixMilli()), TestGroup: 1,
		Revenue: 154, Currency: "USD", CreatedAt: updated, Source: "webhook"}
	b := &warehouse.Batch{Orders: []warehouse.Order{old, legacyRow("5", "o5", updated.Add(time.Hour), 0, 1)}}
	if err := w.Insert(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := standing(t, w, "5"); len(got) != 1 || !got[0].Revenue.Equal(decimal.NewFromInt(1)) {
		t.Fatalf("before: %+v (the legacy row replaced the signed one)", got)
	}
	stmts, err := clickhouse.All()
	if err != nil {
		t.Fatal(err)
	}
	var sql string
	for _, s := range stmts {
		if s.Version == 400 {
			sql = strings.ReplaceAll(s.SQL, "{db}", w.Database())
		}
	}
	if sql == "" {
		t.Fatal("no statement 0400")
	}
	for i := 0; i < 2; i++ {
		if err := w.Conn().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		got := standing(t, w, "5")
		if len(got) != 1 || !got[0].Revenue.Equal(decimal.NewFromInt(154)) || got[0].TestGroup != 1 || got[0].Version != uint64(updated.UnixMilli()) {
			t.Fatalf("run %d: %+v", i+1, got)
		}
	}
}
