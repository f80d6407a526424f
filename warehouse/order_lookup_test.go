package warehouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/warehouse"
)

// FindOrder reads every version of an order per test, oldest first, and
// the Eraser deletes one test's rows and no other's.
func TestOrderLookupAndErase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openWarehouse(t)
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	row := func(exp string, version uint64, revenue int64) experiment.SignedOrder {
		return experiment.SignedOrder{ShopID: 9, ExperimentID: exp, OrderID: "77", Version: version, TestGroup: 1,
			Revenue: decimal.NewFromInt(revenue), Currency: "USD", LineProductIDs: []string{"p"}, LineVariantIDs: []string{"v"},
			LineQuantities: []uint32{1}, LinePrices: []decimal.Decimal{decimal.NewFromInt(revenue)}, CreatedAt: at}
	}
	if err := (warehouse.WebhookOrders{W: w}).WriteSignedOrders(ctx, []experiment.SignedOrder{
		row("1", 2000, 30), row("1", 1000, 50), row("2", 1000, 50)}); err != nil {
		t.Fatal(err)
	}
	look := warehouse.OrderLookup{W: w}
	got, err := look.FindOrder(ctx, 9, "77")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ExperimentID != "1" || !got[0].Revenue.Equal(decimal.NewFromInt(50)) || !got[1].Revenue.Equal(decimal.NewFromInt(30)) || got[2].ExperimentID != "2" ||
		got[0].Source != "webhook" || got[0].LineItems != 1 || warehouse.OrderVersionMillis(got[1].Version) != 2000 || !got[0].CreatedAt.Equal(at) {
		t.Fatalf("FindOrder = %+v", got)
	}
	for _, c := range []struct {
		shop  int64
		order string
	}{{9, "78"}, {10, "77"}} {
		if _, err := look.FindOrder(ctx, c.shop, c.order); !experiment.IsNotFound(err) {
			t.Fatalf("FindOrder(%d, %s) = %v, want not found", c.shop, c.order, err)
		}
	}

	if err := (warehouse.Eraser{W: w}).EraseTest(ctx, 9, 1); err != nil {
		t.Fatal(err)
	}
	// The delete is a ClickHouse mutation that finishes in the background;
	// 18.16 has no way to wait on it but to read again.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for {
		got, err = look.FindOrder(ctx, 9, "77")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("test 1's rows still there: %+v", got)
		}
	}
	if got[0].ExperimentID != "2" {
		t.Fatalf("erased the wrong test: %+v", got)
	}
}
