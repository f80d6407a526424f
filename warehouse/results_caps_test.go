package warehouse_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/liftab/lift/warehouse"
)

// TestWinsorCapsAndCappedSums works the caps and capped sums out by hand:
// ten buyers of 10…90 and one of 1000 (two orders), a bot's whale order
// that counts nowhere, and visitors without orders, who are no converters.
func TestWinsorCapsAndCappedSums(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	const shop, exp = 3, "77"
	when := at("2026-06-01 15:00:00")
	var b warehouse.Batch
	visitor := func(v string, group int16, bot bool) {
		b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: shop, ExperimentID: exp, VisitorID: v,
			AssignmentID: "a-" + v, SessionID: "s-" + v, TestGroup: group, Device: "desktop", AssignedAt: when,
			ReceivedAt: when, IsBot: bot})
	}
	order := func(id, v string, group int16, revenue, cost float64, bot bool) {
		b.Orders = append(b.Orders, warehouse.Order{ShopID: shop, ExperimentID: exp, OrderID: id, Version: 1,
			TestGroup: group, VisitorID: v, Revenue: revenue, Cost: cost, Currency: "USD", CreatedAt: when, IsBot: bot})
	}
	// Group 0 buys 10, 30, 50, 70, 90; group 1 buys 20, 40, 60, 80 and
	// 600 + 400 in two orders. Profit is revenue minus a cost of 5.
	for i := 1; i <= 9; i++ {
		v, g := fmt.Sprintf("b%d", i), int16((i+1)%2)
		visitor(v, g, false)
		order("o"+v, v, g, float64(10*i), 5, false)
	}
	visitor("whale", 1, false)
	order("w1", "whale", 1, 600, 5, false)
	order("w2", "whale", 1, 400, 5, false)
	visitor("bot", 0, true)
	order("ob", "bot", 0, 1e6, 0, true)
	visitor("idle0", 0, false)
	visitor("idle1", 1, false)
	if err := w.Insert(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	q := warehouse.MetricsQuery{ShopID: shop, ExperimentID: exp, Timezone: "America/New_York",
		From: "2026-06-01", To: "2026-06-01", Basis: warehouse.BasisVisitors}
	caps, err := w.WinsorCaps(context.Background(), q, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	// Ten positive values; quantileExact(0.5) is the one at index 5 sorted:
	// 10 20 30 40 50 [60] … for revenue, 5 15 25 35 45 [55] … for profit.
	if caps.Revenue != 60 || caps.Profit != 55 || caps.Percentile != 0.5 {
		t.Fatalf("caps = %+v, want revenue 60, profit 55", caps)
	}
	// The sessions basis ranks sessions over the full per-unit statement;
	// each buyer here has one session, so the caps agree.
	sq := q
	sq.Basis = warehouse.BasisSessions
	if sc, err := w.WinsorCaps(context.Background(), sq, 0.5); err != nil || sc != caps {
		t.Fatalf("sessions caps = %+v, %v; want %+v", sc, err, caps)
	}
	q.Caps = &caps
	rows, err := w.GroupMetrics(context.Background(), q)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows = %+v, %v", rows, err)
	}
	type want struct{ rc, rcSq, rcOrders, pc, pcSq float64 }
	wants := []want{
		// min(10,60)=10, 30, 50, 60, 60; profit 5, 25, 45, min(65,55)=55, 55.
		{210, 100 + 900 + 2500 + 3600 + 3600, 210, 185, 25 + 625 + 2025 + 3025 + 3025},
		// 20, 40, 60, 60 and the whale's 60 over two orders; profit 15, 35, 55, 55, 55.
		{240, 400 + 1600 + 3600*3, 240 + 60, 215, 225 + 1225 + 3025*3},
	}
	for _, r := range rows {
		w, s := wants[r.TestGroup], r.Sums
		got := []float64{s.RevenueCapped, s.RevenueCappedSq, s.RevenueOrdersCapped, s.ProfitCapped, s.ProfitCappedSq}
		exp := []float64{w.rc, w.rcSq, w.rcOrders, w.pc, w.pcSq}
		for i := range got {
			if math.Abs(got[i]-exp[i]) > 1e-9 {
				t.Errorf("group %d capped sums = %v, want %v", r.TestGroup, got, exp)
				break
			}
		}
	}
	// Without caps the capped sums are zero and the raw sums keep the whale.
	q.Caps = nil
	rows, err = w.GroupMetrics(context.Background(), q)
	if err != nil || rows[1].Revenue != 1200 || rows[1].RevenueCapped != 0 {
		t.Fatalf("uncapped rows = %+v, %v", rows, err)
	}
}
