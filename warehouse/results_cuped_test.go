package warehouse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/results"
	"github.com/liftab/lift/warehouse"
)

// TestCovariates works CUPED's covariates out by hand: pre-exposure orders
// recorded under another test (once more as its checkout event, which must
// not count twice), a legacy checkout and an add-to-cart recorded outside
// any test (replayed), and activity that is too old or after the
// assignment, which must not count.
func TestCovariates(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	const shop, exp, other = 4, "88", "87"
	assigned := at("2026-06-10 15:00:00")
	var b warehouse.Batch
	devices := map[string]string{"v2": "mobile", "v3": "tablet"}
	visitor := func(v string, group int16) {
		device := devices[v]
		if device == "" {
			device = "desktop"
		}
		b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: shop, ExperimentID: exp, VisitorID: v,
			AssignmentID: "a-" + v, SessionID: "s-" + v, TestGroup: group, Device: device, AssignedAt: assigned,
			ReceivedAt: assigned})
	}
	order := func(e, id, v string, group int16, revenue float64, when time.Time) {
		b.Orders = append(b.Orders, warehouse.Order{ShopID: shop, ExperimentID: e, OrderID: id, Version: 1,
			TestGroup: group, VisitorID: v, SessionID: "s-" + v, Revenue: revenue, Currency: "USD", CreatedAt: when})
	}
	event := func(e, id, v, typ, orderID string, revenue float64, when time.Time) {
		b.Events = append(b.Events, warehouse.Event{ShopID: shop, ExperimentID: e, EventID: id, ReceivedAt: when,
			CreatedAt: when, SessionID: "old-" + v, VisitorID: v, EventType: typ, Source: "script", OrderID: orderID, Revenue: revenue})
	}
	day := func(d string) time.Time { return at("2026-" + d + " 12:00:00") }

	visitor("v1", 0)
	order(other, "p1", "v1", 1, 100, day("06-05"))
	event(other, "e-p1", "v1", "checkout_completed", "p1", 999, day("06-05")) // the orders row's amount wins
	event("", "atc1", "v1", "product_added_to_cart", "", 0, day("06-04"))
	event("", "atc1", "v1", "product_added_to_cart", "", 0, day("06-04")) // a replay
	order(exp, "t1", "v1", 0, 50, day("06-11"))

	visitor("v2", 1)
	event("", "e-l1", "v2", "checkout_completed", "l1", 30, day("06-09"))
	order(other, "old", "v2", 0, 500, day("04-01"))  // before the lookback
	order(other, "late", "v2", 0, 700, day("06-12")) // after the assignment
	order(exp, "t2", "v2", 1, 80, day("06-11"))

	visitor("v3", 1)
	visitor("v4", 0)
	order(exp, "t4", "v4", 0, 20, day("06-11"))
	if err := w.Insert(context.Background(), &b); err != nil {
		t.Fatal(err)
	}

	q := warehouse.MetricsQuery{ShopID: shop, ExperimentID: exp, Timezone: "America/New_York",
		From: "2026-06-10", To: "2026-06-12", Basis: warehouse.BasisVisitors}
	capped := q
	capped.Caps = &results.Caps{Percentile: 0.5, Revenue: 60, Profit: 60}
	byDevice := q
	byDevice.Breakdown = []warehouse.Dimension{"device"}
	for _, c := range []struct {
		name string
		q    warehouse.MetricsQuery
		want []results.CovariateRow
	}{
		// v1: X = 100 (one order p1), activity 2 (p1 and one add-to-cart),
		// one order of 50 in the test. v2: X = 30 (legacy l1), activity 1,
		// one order of 80. v3, v4: no history.
		{"Plain", q, []results.CovariateRow{
			{TestGroup: 0, N: 2, WithHistory: 1, PreRevenue: 100, PreRevenueSq: 10000, RevenueCross: 5000, RevenueCappedCross: 5000,
				ProfitCross: 5000, ProfitCappedCross: 5000, PreActivity: 2, PreActivitySq: 4, ConvertedCross: 2,
				CheckoutCross: 2, PreOrders: 1, PreOrdersSq: 1, OrdersPreOrdersCross: 1, PreRevenuePreOrdersCross: 100,
				RevenuePreOrdersCross: 50, RevenueCappedPreOrdersCross: 50, OrdersPreRevenueCross: 100},
			{TestGroup: 1, N: 2, WithHistory: 1, PreRevenue: 30, PreRevenueSq: 900, RevenueCross: 2400, RevenueCappedCross: 2400,
				ProfitCross: 2400, ProfitCappedCross: 2400, PreActivity: 1, PreActivitySq: 1, ConvertedCross: 1,
				CheckoutCross: 1, PreOrders: 1, PreOrdersSq: 1, OrdersPreOrdersCross: 1, PreRevenuePreOrdersCross: 30,
				RevenuePreOrdersCross: 80, RevenueCappedPreOrdersCross: 80, OrdersPreRevenueCross: 30},
		}},
		{"Capped", capped, []results.CovariateRow{
			{TestGroup: 0, N: 2, WithHistory: 1, PreRevenue: 100, PreRevenueSq: 10000, RevenueCross: 5000, RevenueCappedCross: 5000,
				ProfitCross: 5000, ProfitCappedCross: 5000, PreActivity: 2, PreActivitySq: 4, ConvertedCross: 2,
				CheckoutCross: 2, PreOrders: 1, PreOrdersSq: 1, OrdersPreOrdersCross: 1, PreRevenuePreOrdersCross: 100,
				RevenuePreOrdersCross: 50, RevenueCappedPreOrdersCross: 50, OrdersPreRevenueCross: 100},
			{TestGroup: 1, N: 2, WithHistory: 1, PreRevenue: 30, PreRevenueSq: 900, RevenueCross: 2400, RevenueCappedCross: 1800,
				ProfitCross: 2400, ProfitCappedCross: 1800, PreActivity: 1, PreActivitySq: 1, ConvertedCross: 1,
				CheckoutCross: 1, PreOrders: 1, PreOrdersSq: 1, OrdersPreOrdersCross: 1, PreRevenuePreOrdersCross: 30,
				RevenuePreOrdersCross: 80, RevenueCappedPreOrdersCross: 60, OrdersPreRevenueCross: 30},
		}},
		// By device: v1 and v4 on desktop keep group 0's sums; v2 on
		// mobile keeps its own, v3 on tablet has none.
		{"ByDevice", byDevice, []results.CovariateRow{
			{Key: "desktop", TestGroup: 0, N: 2, WithHistory: 1, PreRevenue: 100, PreRevenueSq: 10000, RevenueCross: 5000, RevenueCappedCross: 5000,
				ProfitCross: 5000, ProfitCappedCross: 5000, PreActivity: 2, PreActivitySq: 4, ConvertedCross: 2,
				CheckoutCross: 2, PreOrders: 1, PreOrdersSq: 1, OrdersPreOrdersCross: 1, PreRevenuePreOrdersCross: 100,
				RevenuePreOrdersCross: 50, RevenueCappedPreOrdersCross: 50, OrdersPreRevenueCross: 100},
			{Key: "mobile", TestGroup: 1, N: 1, WithHistory: 1, PreRevenue: 30, PreRevenueSq: 900, RevenueCross: 2400, RevenueCappedCross: 2400,
				ProfitCross: 2400, ProfitCappedCross: 2400, PreActivity: 1, PreActivitySq: 1, ConvertedCross: 1,
				CheckoutCross: 1, PreOrders: 1, PreOrdersSq: 1, OrdersPreOrdersCross: 1, PreRevenuePreOrdersCross: 30,
				RevenuePreOrdersCross: 80, RevenueCappedPreOrdersCross: 80, OrdersPreRevenueCross: 30},
			{Key: "tablet", TestGroup: 1, N: 1},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := w.Covariates(context.Background(), c.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("covariates mismatch (-want +got):\n%s", diff)
			}
		})
	}

	// On either basis, with or without a breakdown, the covariates cover
	// exactly the units GroupMetrics counts in each cell, which is what
	// lets results pair them.
	for _, bq := range []warehouse.MetricsQuery{q, byDevice} {
		for _, basis := range []warehouse.Basis{warehouse.BasisVisitors, warehouse.BasisSessions} {
			bq.Basis = basis
			checkCovariatesCoverUnits(t, w, bq)
		}
	}
}

// checkCovariatesCoverUnits holds that the covariate rows of q have the
// units of GroupMetrics' rows, cell by cell.
func checkCovariatesCoverUnits(t *testing.T, w *warehouse.Warehouse, bq warehouse.MetricsQuery) {
	t.Helper()
	basis := string(bq.Basis) + fmt.Sprint(bq.Breakdown)
	rows, err := w.GroupMetrics(context.Background(), bq)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := w.Covariates(context.Background(), bq)
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		key   string
		group int
	}
	units := map[cell]int64{}
	for _, r := range rows {
		units[cell{r.Key, r.TestGroup}] += r.N
	}
	for _, c := range cov {
		if got := units[cell{c.Key, c.TestGroup}]; got != c.N {
			t.Errorf("%s: cell %q group %d has %d units, covariates %d", basis, c.Key, c.TestGroup, got, c.N)
		}
	}
	if len(cov) != len(units) {
		t.Errorf("%s: %d covariate rows for %d cells", basis, len(cov), len(units))
	}
}

// TestCovariatesSQLRunsOnClickHouse runs CUPED's covariates statement in
// every shape the results queries generate (each basis, every dimension,
// the longest breakdowns, the product scope) on the real ClickHouse
// (18.16), checking each cell against GroupMetrics'. With LIFT_DUMP_SQL it
// writes each statement, for current ClickHouse through chDB (as
// TestResultsSQLRunsOnClickHouse does).
func TestCovariatesSQLRunsOnClickHouse(t *testing.T) {
	w := openTestWarehouse(t)
	resultsFixture(t, w)
	dir := os.Getenv("LIFT_DUMP_SQL")
	for name, q := range resultsShapes() {
		t.Run(name, func(t *testing.T) {
			checkCovariatesCoverUnits(t, w, q)
			caps, err := w.WinsorCaps(context.Background(), q, 0.99)
			if err != nil {
				t.Fatal(err)
			}
			capped := q
			capped.Caps = &caps
			checkCovariatesCoverUnits(t, w, capped)
			if dir != "" {
				dump(t, filepath.Join(dir, name+"-covariates.sql"), warehouse.CovariatesSQL(q), q)
				dump(t, filepath.Join(dir, name+"-covariates-capped.sql"), warehouse.CovariatesSQL(capped), q)
			}
		})
	}
}
