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
// visitors bought before their assignment (orders of an earlier test) and
// spend in the test in step with it, serves a snapshot whose analysis lists
// cuped under applied, with θ; a custom query by device applies it in each
// cell with the cell's θ, and each cell's interval is narrower than
// without CUPED.
func TestResultsCUPEDApplied(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withWorker)
	s := e.newShop(store.ShopUpdate{})
	x := e.started(t, s, "cuped")
	if r := s.patch(t, x, `{"analysis":{"cuped":true}}`); r.Status != 200 {
		t.Fatalf("patch = %d %s", r.Status, r.Raw)
	}
	plantVisitors(t, e.wh, s.shop.ID, x, epoch, 300, []float64{0.1, 0.15})
	var b warehouse.Batch
	for g := 0; g < 2; g++ {
		// Half the visitors of each device bought before; in the test they
		// buy again for about twice as much.
		for i := 0; i < 300; i++ {
			if i%4 >= 2 {
				continue
			}
			pre := float64(10 + i%50)
			b.Orders = append(b.Orders, warehouse.Order{ShopID: s.shop.ID, ExperimentID: x + "-earlier",
				OrderID: fmt.Sprintf("pre-%d-%d", g, i), Version: 1, VisitorID: fmt.Sprintf("v%d-%d", g, i),
				Revenue: pre, Currency: "USD", CreatedAt: epoch.Add(-5 * 24 * time.Hour)},
				warehouse.Order{ShopID: s.shop.ID, ExperimentID: x, OrderID: fmt.Sprintf("again-%d-%d", g, i), Version: 1,
					TestGroup: int16(g), VisitorID: fmt.Sprintf("v%d-%d", g, i), Revenue: 2*pre + float64(i%7),
					Currency: "USD", CreatedAt: epoch.Add(40 * time.Minute)})
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

	q := s.do(t, "POST", "/v1/experiments/"+x+"/results", `{"breakdown":["device"],"analysis":{"cuped":true,"winsorize":0}}`)
	if q.Status != 202 {
		t.Fatalf("POST query = %d %s", q.Status, q.Raw)
	}
	done := waitQuery(t, s, x, q.Body["id"].(string))
	a, _ = done.Body["analysis"].(map[string]any)
	adj, _ = a["cuped_adjustment"].(map[string]any)
	cells, _ := adj["cells"].([]any)
	if a["cuped"] != true || len(cells) != 2 {
		t.Fatalf("query analysis = %s, want cuped applied in the cells desktop and mobile", mustJSON(a))
	}
	for _, c := range cells {
		cell := c.(map[string]any)
		m, _ := cell["metrics"].(map[string]any)["revenue_per_visitor"].(map[string]any)
		theta, _ := m["cuped_theta"].(float64)
		ratios, _ := m["interval_width_ratio"].([]any)
		if theta < 1 || cell["units_with_history"] != 150.0 || len(ratios) != 1 {
			t.Errorf("cell %s: want θ near 2, 150 units with history, one variant's ratio", mustJSON(cell))
			continue
		}
		r := ratios[0].(map[string]any)["ratio"].(float64)
		if !(r < 1) {
			t.Errorf("cell %s: CUPED interval not narrower (ratio %v)", cell["dimension_value"], r)
		}
		t.Logf("%s: θ %.3f, interval width ratio %.3f", cell["dimension_value"], theta, r)
	}
}
