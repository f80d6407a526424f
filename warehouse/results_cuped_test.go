package warehouse_test

import (
	"context"
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
	visitor := func(v string, group int16) {
		b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: shop, ExperimentID: exp, VisitorID: v,
			AssignmentID: "a-" + v, SessionID: "s-" + v, TestGroup: group, Device: "desktop", AssignedAt: assigned,
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
	for _, c := range []struct {
		name string
		q    warehouse.MetricsQuery
		want []results.CovariateRow
	}{
		{"Plain", q, []results.CovariateRow{
			{TestGroup: 0, N: 2, WithHistory: 1, PreRevenue: 100, PreRevenueSq: 10000, RevenueCross: 5000, RevenueCappedCross: 5000,
				ProfitCross: 5000, ProfitCappedCross: 5000, PreActivity: 2, PreActivitySq: 4, ConvertedCross: 2},
			{TestGroup: 1, N: 2, WithHistory: 1, PreRevenue: 30, PreRevenueSq: 900, RevenueCross: 2400, RevenueCappedCross: 2400,
				ProfitCross: 2400, ProfitCappedCross: 2400, PreActivity: 1, PreActivitySq: 1, ConvertedCross: 1},
		}},
		{"Capped", capped, []results.CovariateRow{
			{TestGroup: 0, N: 2, WithHistory: 1, PreRevenue: 100, PreRevenueSq: 10000, RevenueCross: 5000, RevenueCappedCross: 5000,
				ProfitCross: 5000, ProfitCappedCross: 5000, PreActivity: 2, PreActivitySq: 4, ConvertedCross: 2},
			{TestGroup: 1, N: 2, WithHistory: 1, PreRevenue: 30, PreRevenueSq: 900, RevenueCross: 2400, RevenueCappedCross: 1800,
				ProfitCross: 2400, ProfitCappedCross: 1800, PreActivity: 1, PreActivitySq: 1, ConvertedCross: 1},
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

	// On either basis the covariates cover exactly the units GroupMetrics
	// counts, which is what lets results pair them.
	for _, basis := range []warehouse.Basis{warehouse.BasisVisitors, warehouse.BasisSessions} {
		bq := q
		bq.Basis = basis
		rows, err := w.GroupMetrics(context.Background(), bq)
		if err != nil {
			t.Fatal(err)
		}
		cov, err := w.Covariates(context.Background(), bq)
		if err != nil {
			t.Fatal(err)
		}
		units := map[int]int64{}
		for _, r := range rows {
			units[r.TestGroup] += r.N
		}
		for _, c := range cov {
			if units[c.TestGroup] != c.N {
				t.Errorf("%s: group %d has %d units, covariates %d", basis, c.TestGroup, units[c.TestGroup], c.N)
			}
		}
		if len(cov) != len(units) {
			t.Errorf("%s: %d covariate rows for %d groups", basis, len(cov), len(units))
		}
	}
}
