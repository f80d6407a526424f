package v1_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// plantVisitors inserts n visitors a group straight into the warehouse,
// converting with the given probabilities; every third visitor views
// product 8101 (the test's product).
func plantVisitors(t *testing.T, w *warehouse.Warehouse, shopID int64, exp string, at time.Time, n int, conv []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var b warehouse.Batch
	devices := []string{"desktop", "mobile"}
	for g := range conv {
		for i := range n {
			v := fmt.Sprintf("v%d-%d", g, i)
			sid := fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", g, i)
			ts := at.Add(time.Duration(rng.IntN(1800)) * time.Second)
			b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: shopID, ExperimentID: exp, VisitorID: v,
				AssignmentID: v, SessionID: sid, TestGroup: int16(g), Device: devices[i%2], Country: []string{"US", "DE", "FR"}[i%3],
				VisitorType: "new", AssignedAt: ts, ReceivedAt: ts})
			b.Sessions = append(b.Sessions, warehouse.Session{ShopID: shopID, ExperimentID: exp, SessionID: sid,
				RecordID: v + "-r", VisitorID: v, SeenAt: ts, PagePath: "/"})
			if i%3 == 0 {
				b.PageViews = append(b.PageViews, warehouse.PageView{ShopID: shopID, ExperimentID: exp, ProductID: "8101",
					ViewID: v + "-pv", SessionID: sid, VisitorID: v, ViewedAt: ts})
			}
			if rng.Float64() < conv[g] {
				b.Orders = append(b.Orders, warehouse.Order{ShopID: shopID, ExperimentID: exp, OrderID: v + "-o", Version: 1,
					TestGroup: int16(g), VisitorID: v, Revenue: 30, Currency: "USD", CreatedAt: ts,
					LineProductIDs: []string{"8101"}, LineVariantIDs: []string{"44001"}, LineQuantities: []uint32{1}, LinePrices: []float64{30}})
			}
		}
	}
	if err := w.Insert(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
}

func (e *resultsEnv) snapshot(t *testing.T, s *shopEnv, x string) {
	t.Helper()
	var testID int64
	fmt.Sscan(x, &testID)
	if err := e.results.TakeSnapshot(context.Background(), s.shop.ID, testID, false); err != nil {
		t.Fatal(err)
	}
}

func TestResultsSnapshotStatuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	other := e.newShop(store.ShopUpdate{})

	t.Run("DraftIsNotAvailable", func(t *testing.T) {
		x := id(s.create(t, priceTest("draft")))
		for i := 0; i < 2; i++ {
			wantError(t, s.do(t, "GET", "/v1/experiments/"+x+"/results", ""), 422, "validation_error", "results_not_available", "id")
		}
	})
	t.Run("PreviewIsNotAvailable", func(t *testing.T) {
		x := id(s.create(t, priceTest("preview")))
		if r := s.do(t, "POST", "/v1/experiments/"+x+"/test_groups/1/preview", ""); r.Status != 200 {
			t.Fatalf("preview = %d %s", r.Status, r.Raw)
		}
		wantError(t, s.do(t, "GET", "/v1/experiments/"+x+"/results", ""), 422, "validation_error", "results_not_available", "id")
	})
	t.Run("UnknownAndOtherShopAreNotFound", func(t *testing.T) {
		wantError(t, s.do(t, "GET", "/v1/experiments/999999/results", ""), 404, "not_found_error", "experiment_not_found", "")
		x := e.started(t, other, "theirs")
		wantError(t, s.do(t, "GET", "/v1/experiments/"+x+"/results", ""), 404, "not_found_error", "experiment_not_found", "")
	})
	t.Run("RunningWithNothingYetIs202WithNoBody", func(t *testing.T) {
		x := e.started(t, s, "fresh")
		r := s.do(t, "GET", "/v1/experiments/"+x+"/results", "")
		if r.Status != http.StatusAccepted || len(r.Raw) != 0 {
			t.Fatalf("GET results = %d %q, want 202 with no body", r.Status, r.Raw)
		}
	})
	t.Run("EndedWithNothingKeepsAnswering202", func(t *testing.T) {
		x := e.started(t, s, "short")
		if r := s.do(t, "POST", "/v1/experiments/"+x+"/end", ""); r.Status != 200 {
			t.Fatalf("end = %d %s", r.Status, r.Raw)
		}
		for i := 0; i < 3; i++ {
			e.clock.Set(e.clock.Now().Add(7 * time.Hour))
			r := s.do(t, "GET", "/v1/experiments/"+x+"/results", "")
			if r.Status != http.StatusAccepted || len(r.Raw) != 0 {
				t.Fatalf("GET results of an ended test with nothing = %d %q, want 202", r.Status, r.Raw)
			}
		}
	})
}

func TestResultsSnapshotServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	x := e.started(t, s, "served")
	plantVisitors(t, e.wh, s.shop.ID, x, epoch, 400, []float64{0.05, 0.2})
	e.clock.Set(epoch.Add(time.Hour))
	e.snapshot(t, s, x)

	first := s.do(t, "GET", "/v1/experiments/"+x+"/results", "")
	if first.Status != 200 {
		t.Fatalf("GET results = %d %s", first.Status, first.Raw)
	}
	b := first.Body
	for _, k := range []string{"experiment_id", "computed_at", "test_groups", "outcome", "winning_test_group_index",
		"srm_status", "analysis", "customEvents", "warnings", "filterStale", "isRefreshing", "date_range", "breakdown",
		"next_refresh_at"} {
		if _, ok := b[k]; !ok {
			t.Errorf("snapshot has no %s: %s", k, first.Raw)
		}
	}
	if b["object"] != "experiment_results" || b["experiment_id"] != x || b["outcome"] != "winner" ||
		b["winning_test_group_index"] != 1.0 || b["srm_status"] != "ok" || b["isRefreshing"] != false {
		t.Fatalf("snapshot = %s", first.Raw)
	}
	if b["computed_at"] != epoch.Add(time.Hour).Format(time.RFC3339) || b["next_refresh_at"] != epoch.Add(7*time.Hour).Format(time.RFC3339) {
		t.Errorf("computed_at %v, next_refresh_at %v; want the refresh 6 hours after the computation", b["computed_at"], b["next_refresh_at"])
	}
	groups := b["test_groups"].([]any)
	variant := groups[1].(map[string]any)
	vs := variant["vs_control"].(map[string]any)
	for _, m := range []string{"conversion_rate", "revenue_per_visitor", "average_order_value", "profit_per_visitor",
		"add_to_cart_rate", "reached_checkout_rate", "click_through_rate", "bounce_rate", "avg_staying_time"} {
		if _, ok := vs[m]; !ok {
			t.Errorf("vs_control has no %s", m)
		}
	}
	if rpv := variant["revenue_per_visitor"].(map[string]any); rpv["currency"] != "USD" {
		t.Errorf("revenue_per_visitor = %v, want money", rpv)
	}
	if bd := b["breakdown"].(map[string]any); bd["dimension"] != "device" || len(bd["rows"].([]any)) != 4 {
		t.Errorf("breakdown = %v", bd)
	}
	// Part 2.8: every breakdown row carries vs_control, null on the control's.
	for _, x := range b["breakdown"].(map[string]any)["rows"].([]any) {
		row := x.(map[string]any)
		vs, has := row["vs_control"]
		if !has || (row["test_group_index"] == float64(0)) != (vs == nil) {
			t.Errorf("breakdown row %v: vs_control %v (present %v)", row["dimension_value"], vs, has)
		}
	}

	t.Run("PollingReturnsTheSameComputedAt", func(t *testing.T) {
		e.clock.Set(epoch.Add(3 * time.Hour))
		again := s.do(t, "GET", "/v1/experiments/"+x+"/results", "")
		if again.Status != 200 || again.Body["computed_at"] != b["computed_at"] || string(again.Raw) != string(first.Raw) {
			t.Fatalf("second read differs:\n%s\n%s", first.Raw, again.Raw)
		}
	})
	t.Run("IsRefreshingOnceDue", func(t *testing.T) {
		e.clock.Set(epoch.Add(7*time.Hour + time.Minute))
		r := s.do(t, "GET", "/v1/experiments/"+x+"/results", "")
		if r.Body["computed_at"] != b["computed_at"] || r.Body["isRefreshing"] != true {
			t.Fatalf("stale snapshot = %s", r.Raw)
		}
	})
	t.Run("IncludeResultsSummary", func(t *testing.T) {
		r := s.do(t, "GET", "/v1/experiments/"+x+"?include=results_summary", "")
		sum, _ := r.Body["results_summary"].(map[string]any)
		if r.Status != 200 || sum == nil || sum["outcome"] != "winner" || sum["computed_at"] != b["computed_at"] {
			t.Fatalf("results_summary = %s", r.Raw)
		}
		y := e.startedWith(t, s, priceTestOf("no snapshot yet", sweater, sweaterS)) // x has the tee
		r = s.do(t, "GET", "/v1/experiments/"+y+"?include=results_summary", "")
		if v, ok := r.Body["results_summary"]; !ok || v != nil {
			t.Fatalf("results_summary before a snapshot = %s, want null", r.Raw)
		}
	})
	t.Run("PausedReturnsThePausedNumbers", func(t *testing.T) {
		if r := s.do(t, "POST", "/v1/experiments/"+x+"/pause", ""); r.Status != 200 {
			t.Fatalf("pause = %d %s", r.Status, r.Raw)
		}
		plantVisitors(t, e.wh, s.shop.ID, x, epoch.Add(5*time.Hour), 50, []float64{0.5, 0.5})
		e.clock.Set(epoch.Add(20 * time.Hour))
		e.snapshot(t, s, x) // a job enqueued before the pause changes nothing
		r := s.do(t, "GET", "/v1/experiments/"+x+"/results", "")
		if r.Status != 200 || r.Body["computed_at"] != b["computed_at"] || r.Body["isRefreshing"] != false {
			t.Fatalf("paused results = %s", r.Raw)
		}
		if v, ok := r.Body["next_refresh_at"]; !ok || v != nil {
			t.Fatalf("a paused test's next_refresh_at = %v, want null (no refresh comes)", v)
		}
	})
}

// waitQuery polls a query until it is no longer pending.
func waitQuery(t *testing.T, s *shopEnv, x, q string) resp {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.do(t, "GET", "/v1/experiments/"+x+"/results/"+q, "")
		if r.Status != 200 {
			t.Fatalf("GET query = %d %s", r.Status, r.Raw)
		}
		if r.Body["status"] != "pending" {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %s still pending: %s", q, r.Raw)
		}
		time.Sleep(20 * time.Millisecond) // poll interval; the deadline above bounds the wait
	}
}

func TestResultQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withWorker)
	s := e.newShop(store.ShopUpdate{})
	e.clock.Set(time.Date(2026, 6, 3, 12, 0, 0, 0, time.UTC))
	x := e.started(t, s, "queries")
	if _, err := lifttest.Pool(t, e.pgURL).Exec(context.Background(),
		`UPDATE experiments SET product_group_id = 'pg-tees', product_group_name = 'Tees' WHERE id = $1`, x); err != nil {
		t.Fatal(err)
	}
	plantVisitors(t, e.wh, s.shop.ID, x, e.clock.Now().Add(-time.Hour), 300, []float64{0.1, 0.1})
	draft := id(s.create(t, priceTest("draft")))
	post := func(t *testing.T, path, body string) resp {
		t.Helper()
		return s.do(t, "POST", path, body)
	}
	results := "/v1/experiments/" + x + "/results"

	t.Run("Refusals", func(t *testing.T) {
		for _, c := range []struct{ name, path, body, code, param string }{
			{"UnknownDimension", results, `{"breakdown":["os"]}`, "invalid_breakdown_dimension", "breakdown[0]"},
			{"DuplicateDimension", results, `{"breakdown":["device","device"]}`, "duplicate_breakdown_dimension", "breakdown[1]"},
			{"TooManyDimensions", results, `{"breakdown":["device","country","date","utm_source"]}`, "breakdown_too_many_dimensions", "breakdown"},
			{"MalformedDate", results, `{"date_range":{"gte":"2026-13-01"}}`, "invalid_date_range", "date_range.gte"},
			{"MalformedLTE", results, `{"date_range":{"lte":"June 3"}}`, "invalid_date_range", "date_range.lte"},
			{"ReversedWindow", results, `{"date_range":{"gte":"2026-06-03","lte":"2026-06-02"}}`, "invalid_date_range", "date_range"},
			{"EndsBeforeStart", results, `{"date_range":{"gte":"2026-05-01","lte":"2026-05-31"}}`, "date_range_out_of_bounds", "date_range.lte"},
			{"BeginsAfterToday", results, `{"date_range":{"gte":"2026-06-04"}}`, "date_range_out_of_bounds", "date_range.gte"},
			{"SampleBasis", results, `{"sample_basis":"orders"}`, "sample_basis_unsupported", "sample_basis"},
			{"UnknownProductGroup", results, `{"product_group_id":"pg-other"}`, "product_group_not_found", "product_group_id"},
			{"ProductWithoutGroup", results, `{"product_id":"gid://shopify/Product/8101"}`, "product_id_requires_product_group", "product_id"},
			{"MetricSet", results, `{"metric_set":"all"}`, "invalid_request", "metric_set"},
			{"UnknownNestedField", results, `{"date_range":{"gte":"2026-06-01","foo":1}}`, "invalid_request", "date_range.foo"},
			{"MistypedDimension", results, `{"breakdown":["device",1]}`, "invalid_request", "breakdown[1]"},
			{"NotAnObject", results, `[{"breakdown":["device"]}]`, "invalid_request", ""},
			{"NotRunYet", "/v1/experiments/" + draft + "/results", `{}`, "results_not_available", "id"},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantError(t, post(t, c.path, c.body), 422, "validation_error", c.code, c.param)
			})
		}
		wantError(t, post(t, results, `{"dimensions":["device"]}`), 422, "validation_error", "invalid_request", "dimensions")
		// Archived before it ever started: no snapshot will come, so GET says
		// so as the query does, instead of 202 forever.
		never := id(s.create(t, priceTest("never run")))
		if r := s.do(t, "POST", "/v1/experiments/"+never+"/archive", ""); r.Status != 200 {
			t.Fatalf("archive = %d %s", r.Status, r.Raw)
		}
		wantError(t, s.do(t, "GET", "/v1/experiments/"+never+"/results", ""), 422, "validation_error", "results_not_available", "id")
		wantError(t, post(t, "/v1/experiments/"+never+"/results", `{}`), 422, "validation_error", "results_not_available", "id")
		wantError(t, post(t, "/v1/experiments/999999/results", `{}`), 404, "not_found_error", "experiment_not_found", "")
	})

	t.Run("BreakdownCompletes", func(t *testing.T) {
		r := post(t, results, `{"date_range":{"gte":"2026-05-01"},"breakdown":["device","country"],"metric_set":"engagement"}`)
		if r.Status != http.StatusAccepted || r.Body["status"] != "pending" || r.Body["object"] != "results_query" ||
			r.Body["experiment_id"] != x || r.Body["computed_at"] != nil {
			t.Fatalf("POST = %d %s", r.Status, r.Raw)
		}
		if got := r.Header.Get("X-RateLimit-Limit"); got != fmt.Sprint(queryBudget) {
			t.Errorf("X-RateLimit-Limit = %q, want the result-query budget %d", got, queryBudget)
		}
		q := r.Body["id"].(string)
		done := waitQuery(t, s, x, q)
		b := done.Body
		if b["status"] != "completed" || b["metric_set"] != "engagement" || b["filterStale"] != true || b["test_groups"] != nil {
			t.Fatalf("query = %s", done.Raw)
		}
		if dr := b["date_range"].(map[string]any); dr["gte"] != "2026-06-03" || dr["lte"] != "2026-06-03" {
			t.Errorf("date_range = %v, want the clamped window", dr)
		}
		bd := b["breakdown"].(map[string]any)
		if fmt.Sprint(bd["dimensions"]) != "[device country]" {
			t.Errorf("dimensions = %v", bd["dimensions"])
		}
		rows := bd["rows"].([]any)
		if len(rows) != 12 {
			t.Fatalf("%d rows, want 2 devices × 3 countries × 2 groups: %s", len(rows), done.Raw)
		}
		row := rows[0].(map[string]any)
		if row["dimension_value"] != "desktop::DE" || row["sample_size"] != 50.0 {
			t.Errorf("first row = %v", row)
		}
		for _, k := range []string{"vs_control", "lift", "conversion_rate", "revenue"} {
			if _, ok := row[k]; ok {
				t.Errorf("an engagement row carries %s: %v", k, row)
			}
		}
		for _, k := range []string{"bounce_rate", "click_through_rate", "avg_staying_time", "page_view_count"} {
			if _, ok := row[k]; !ok {
				t.Errorf("an engagement row lacks %s: %v", k, row)
			}
		}

		t.Run("ReadingNeverRecomputes", func(t *testing.T) {
			e.clock.Set(e.clock.Now().Add(48 * time.Hour))
			again := waitQuery(t, s, x, q)
			if string(again.Raw) != string(done.Raw) {
				t.Fatalf("re-read differs:\n%s\n%s", done.Raw, again.Raw)
			}
			e.clock.Set(time.Date(2026, 6, 3, 12, 0, 0, 0, time.UTC))
		})
	})

	t.Run("SameQueryWithinTheHourReusesTheComputation", func(t *testing.T) {
		body := `{"product_group_id":"pg-tees","product_id":"gid://shopify/Product/8101"}`
		first := waitQuery(t, s, x, post(t, results, body).Body["id"].(string))
		if first.Body["status"] != "completed" {
			t.Fatalf("query = %s", first.Raw)
		}
		groups := first.Body["test_groups"].([]any)
		if g := groups[0].(map[string]any); g["sample_size"] != 100.0 || g["revenue"] == nil {
			t.Errorf("scoped control = %v, want the 100 visitors who viewed the product", g)
		}
		e.clock.Set(e.clock.Now().Add(59 * time.Minute))
		second := waitQuery(t, s, x, post(t, results, body).Body["id"].(string))
		if second.Body["id"] == first.Body["id"] || second.Body["computed_at"] != first.Body["computed_at"] {
			t.Fatalf("within the hour: %s vs %s", first.Raw, second.Raw)
		}
		e.clock.Set(e.clock.Now().Add(2 * time.Minute))
		third := waitQuery(t, s, x, post(t, results, body).Body["id"].(string))
		if third.Body["computed_at"] == first.Body["computed_at"] {
			t.Fatalf("over an hour later the computation was reused: %s", third.Raw)
		}
	})

	t.Run("SessionsBasisWithReadToken", func(t *testing.T) {
		r := s.do(t, "POST", results, `{"sample_basis":"sessions"}`, "Authorization", "Bearer "+s.read)
		if r.Status != http.StatusAccepted {
			t.Fatalf("POST with read scope = %d %s", r.Status, r.Raw)
		}
		done := waitQuery(t, s, x, r.Body["id"].(string))
		g := done.Body["test_groups"].([]any)[1].(map[string]any)
		if done.Body["status"] != "completed" || g["sample_size"] != 300.0 || g["session_count"] != 300.0 {
			t.Fatalf("sessions query = %s", done.Raw)
		}
	})

	t.Run("UnknownQueryIsNotFound", func(t *testing.T) {
		wantError(t, s.do(t, "GET", results+"/rq_nope", ""), 404, "not_found_error", "results_query_not_found", "")
		q := post(t, results, `{}`).Body["id"].(string)
		y := e.startedWith(t, s, priceTestOf("another", sweater, sweaterS)) // x has the tee
		wantError(t, s.do(t, "GET", "/v1/experiments/"+y+"/results/"+q, ""), 404, "not_found_error", "results_query_not_found", "")
	})
}

func TestResultQueryFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	x := e.started(t, s, "fails")
	r := s.do(t, "POST", "/v1/experiments/"+x+"/results", "")
	if r.Status != http.StatusAccepted || r.Body["status"] != "pending" {
		t.Fatalf("POST = %d %s", r.Status, r.Raw)
	}
	q := r.Body["id"].(string)
	// The worker's warehouse has lost its database: every attempt fails.
	broken, err := warehouse.Open(context.Background(), warehouse.Config{Addr: lifttest.Stack(t).ClickHouseAddr, Database: "lift_missing_db", Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer broken.Close()
	cfg := e.resultsConfig
	cfg.Warehouse = broken
	worker := results.New(cfg)
	if err := worker.RunQuery(context.Background(), q, false); err == nil {
		t.Fatal("a failing attempt that is not the last must ask for a retry")
	}
	if got := s.do(t, "GET", "/v1/experiments/"+x+"/results/"+q, ""); got.Body["status"] != "pending" {
		t.Fatalf("after a retryable failure: %s", got.Raw)
	}
	if err := worker.RunQuery(context.Background(), q, true); err != nil {
		t.Fatal(err)
	}
	got := s.do(t, "GET", "/v1/experiments/"+x+"/results/"+q, "")
	reason, _ := got.Body["failure_reason"].(string)
	if got.Status != 200 || got.Body["status"] != "failed" || !strings.Contains(reason, "Send the query again") ||
		got.Body["computed_at"] != nil || got.Body["test_groups"] != nil {
		t.Fatalf("failed query = %s", got.Raw)
	}
}

// TestResultsFirstSnapshotThroughTheWorker: 202 until the first snapshot
// is ready, then the scheduler's tick enqueues it, the real worker computes
// it, and the same endpoint answers 200.
func TestResultsFirstSnapshotThroughTheWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withWorker)
	s := e.newShop(store.ShopUpdate{})
	x := e.started(t, s, "via worker")
	plantVisitors(t, e.wh, s.shop.ID, x, epoch, 120, []float64{0.1, 0.1})
	path := "/v1/experiments/" + x + "/results"
	if r := s.do(t, "GET", path, ""); r.Status != http.StatusAccepted {
		t.Fatalf("before the first snapshot: %d %s", r.Status, r.Raw)
	}
	sched := jobs.NewScheduler(e.db, e.jobs, jobs.SchedulerConfig{Now: e.clock.Now}, jobs.SnapshotSource(e.results.SnapshotsDue, 10))
	// The first snapshot comes about 15 minutes after the launch, not at once.
	e.clock.Set(epoch.Add(14 * time.Minute))
	if got, err := sched.Tick(context.Background()); err != nil || got.Enqueued != 0 {
		t.Fatalf("tick 14 minutes after the launch = %+v, %v; want nothing due", got, err)
	}
	e.clock.Set(epoch.Add(15 * time.Minute))
	if got, err := sched.Tick(context.Background()); err != nil || got.Enqueued != 1 {
		t.Fatalf("tick = %+v, %v", got, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.do(t, "GET", path, "")
		if r.Status == http.StatusOK {
			want := epoch.Add(15*time.Minute + 6*time.Hour).Format(time.RFC3339)
			if r.Body["experiment_id"] != x || r.Body["computed_at"] != epoch.Add(15*time.Minute).Format(time.RFC3339) ||
				r.Body["next_refresh_at"] != want {
				t.Fatalf("snapshot = %s, want computed_at 15 minutes after the launch and next_refresh_at %s", r.Raw, want)
			}
			break
		}
		if r.Status != http.StatusAccepted || time.Now().After(deadline) {
			t.Fatalf("GET results = %d %s", r.Status, r.Raw)
		}
		time.Sleep(20 * time.Millisecond) // poll interval; the deadline above bounds the wait
	}
	if got, err := sched.Tick(context.Background()); err != nil || got.Enqueued != 0 {
		t.Fatalf("a second tick right after = %+v, %v; want nothing due", got, err)
	}
}
