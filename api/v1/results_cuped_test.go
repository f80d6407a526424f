package v1_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// TestResultsCUPEDApplied: a running test PATCHed to ask for CUPED, whose
// visitors bought before their assignment (orders of an earlier test),
// serves a snapshot whose analysis lists cuped under applied, with θ.
func TestResultsCUPEDApplied(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	x := e.started(t, s, "cuped")
	if r := s.patch(t, x, `{"analysis":{"cuped":true}}`); r.Status != 200 {
		t.Fatalf("patch = %d %s", r.Status, r.Raw)
	}
	plantVisitors(t, e.wh, s.shop.ID, x, epoch, 300, []float64{0.1, 0.15})
	var b warehouse.Batch
	for g := 0; g < 2; g++ {
		for i := 0; i < 300; i += 2 {
			b.Orders = append(b.Orders, warehouse.Order{ShopID: s.shop.ID, ExperimentID: x + "-earlier",
				OrderID: fmt.Sprintf("pre-%d-%d", g, i), Version: 1, VisitorID: fmt.Sprintf("v%d-%d", g, i),
				Revenue: float64(10 + i%50), Currency: "USD", CreatedAt: epoch.Add(-5 * 24 * time.Hour)})
		}
	}
	if err := e.wh.Insert(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(epoch.Add(time.Hour))
	e.snapshot(t, s, x)

	r := s.do(t, "GET", "/v1/experiments/"+x+"/results", "")
	if r.Status != 200 {
		t.Fatalf("GET results = %d %s", r.Status, r.Raw)
	}
	a, _ := r.Body["analysis"].(map[string]any)
	applied, _ := a["applied"].([]any)
	if a["cuped"] != true || !slices.Contains(applied, any("cuped")) || len(a["not_applied"].([]any)) != 0 {
		t.Fatalf("analysis = %s", mustJSON(a))
	}
	adj, _ := a["cuped_adjustment"].(map[string]any)
	metrics, _ := adj["metrics"].(map[string]any)
	rpv, _ := metrics["revenue_per_visitor"].(map[string]any)
	if _, ok := rpv["cuped_theta"].(float64); !ok || rpv["covariate"] != "pre_exposure_revenue" || adj["units_with_history"] != 300.0 {
		t.Fatalf("cuped_adjustment = %s", mustJSON(adj))
	}
}
