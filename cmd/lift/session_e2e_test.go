package main

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
)

// TestSessionAPIWired: lift serve mounts the admin panel's session API with
// the configured platform key and secret, on the same service as /v1, with
// reset analytics erasing through the warehouse, and the admin tools behind
// admin.api_key.
func TestSessionAPIWired(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(c *config.Config) {
		c.Platform.APIKey, c.Platform.APISecret, c.Admin.APIKey = "key", "secret", "admin"
	})
	shop, read, _ := s.shop(true)
	features, yes := []string{"price"}, true
	if _, err := s.app.DB.UpdateShop(t.Context(), shop.ID, store.ShopUpdate{Features: &features, SubscriptionActive: &yes}); err != nil {
		t.Fatal(err)
	}
	tok := sessionToken(t, shop.Domain)
	body := `{"name":"Wired","products":[{"productId":"8101","variants":[{"variantId":"44001","price":"19.00"}]}],
		"testGroups":[{"name":"Control","weight":50},{"name":"Variant","weight":50}]}`
	if r := s.do("POST", "/api/price-experiments/v1/create", tok, body); r.status != 200 || string(r.raw) != `"success"` {
		t.Fatalf("session create = %d %s", r.status, r.raw)
	}
	r := s.do("GET", "/v1/experiments", read, "")
	items, _ := r.body["data"].([]any)
	if r.status != 200 || len(items) != 1 {
		t.Fatalf("v1 list = %d %s", r.status, r.raw)
	}
	id := items[0].(map[string]any)["id"].(string)
	if r := s.do("POST", "/api/experiments/reset-analytics/"+id, tok, ""); r.status != 200 {
		t.Fatalf("reset analytics = %d %s", r.status, r.raw)
	}
	if r := s.do("GET", "/api/experiments", "wrong", ""); r.status != http.StatusUnauthorized || r.body["status"] != "error" {
		t.Fatalf("bad token = %d %s", r.status, r.raw)
	}
	order := fmt.Sprintf(`{"shop":%q,"orderId":"1"}`, shop.Domain)
	if r := s.do("POST", "/api/get-order", "", order, "x-api-key", "admin"); r.status != http.StatusNotFound || r.body["status"] != "error" {
		t.Fatalf("get-order of an unknown order = %d %s", r.status, r.raw)
	}
	if r := s.do("POST", "/api/get-order", "", order, "x-api-key", "nope"); r.status != http.StatusUnauthorized {
		t.Fatalf("get-order with a wrong key = %d %s", r.status, r.raw)
	}
}

// TestResetAnalyticsForgetsResults: the session API's reset analytics
// erases the test's numbers everywhere they were kept. The v1 snapshot
// goes (202 until the next one, which the scheduler lists at once) and a
// custom query computed before the reset fails with the reason, instead of
// showing the erased counts (session audit 2, S2-3).
func TestResetAnalyticsForgetsResults(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newServer(t, func(c *config.Config) { c.Platform.APIKey, c.Platform.APISecret = "key", "secret" })
	shop, read, write := s.shop(true)
	tt := snapshotPlanted(t, s, shop.ID, "reset", 100)
	id := strconv.FormatInt(tt.ID, 10)
	svc := s.app.results()
	q, err := svc.CreateQuery(ctx, shop, tt.ID, results.QueryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RunQuery(ctx, q.ID, false); err != nil {
		t.Fatal(err)
	}
	before := s.do("GET", "/v1/experiments/"+id+"/results", read, "")
	if before.status != http.StatusOK {
		t.Fatalf("results before the reset = %d %s", before.status, before.raw)
	}
	window := before.body["date_range"].(map[string]any)
	analytics := fmt.Sprintf(`{"dateStart":%q,"dateFinish":%q}`, window["gte"], window["lte"])
	tok := sessionToken(t, shop.Domain)
	if r := s.do("POST", "/api/analytics/v1/"+id, tok, analytics); r.status != http.StatusOK {
		t.Fatalf("analytics before the reset = %d %s", r.status, r.raw) // and now cached
	}

	if r := s.do("POST", "/api/experiments/reset-analytics/"+id, tok, ""); r.status != http.StatusOK {
		t.Fatalf("reset analytics = %d %s", r.status, r.raw)
	}
	// Reads right after the reset wait for its deletes: the panel and an
	// export show nothing of what was erased, not the numbers of a moment ago.
	r := s.do("POST", "/api/analytics/v1/"+id, tok, analytics)
	d, _ := r.body["data"].(map[string]any)
	if r.status != http.StatusOK || d == nil {
		t.Fatalf("analytics after the reset = %d %s", r.status, r.raw)
	}
	for _, g := range totalsOf(t, d["totalViews"], d["totalOrders"], d["totalRevenue"]) {
		if g != (groupTotals{}) {
			t.Fatalf("analytics right after the reset = %+v, want nothing", d)
		}
	}
	x := s.do("POST", "/v1/experiments/"+id+"/exports", write, "")
	if x.status != http.StatusAccepted {
		t.Fatalf("export after the reset = %d %s", x.status, x.raw)
	}
	if err := svc.RunExport(ctx, shop.ID, x.body["id"].(string), true); err != nil {
		t.Fatal(err)
	}
	if x = s.do("GET", "/v1/exports/"+x.body["id"].(string), read, ""); x.body["status"] != "completed" || x.body["row_count"] != 0.0 {
		t.Fatalf("export right after the reset = %s, want completed with no rows", x.raw)
	}
	if r := s.do("GET", "/v1/experiments/"+id+"/results", read, ""); r.status != http.StatusAccepted {
		t.Fatalf("results after the reset = %d %s, want 202 until a snapshot of what is left", r.status, r.raw)
	}
	r = s.do("GET", "/v1/experiments/"+id+"/results/"+q.ID, read, "")
	if r.status != http.StatusOK || r.body["status"] != "failed" || !strings.Contains(fmt.Sprint(r.body["failure_reason"]), "reset") {
		t.Fatalf("query computed before the reset = %d %s, want failed with the reason", r.status, r.raw)
	}
	due, err := svc.SnapshotsDue(ctx, time.Now(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(due, func(d results.SnapshotDue) bool { return d.TestID == tt.ID }) {
		t.Fatalf("a running test reset is not due a snapshot: %v", due)
	}
	if err := svc.TakeSnapshot(ctx, shop.ID, tt.ID, false); err != nil {
		t.Fatal(err)
	}
	r = s.do("GET", "/v1/experiments/"+id+"/results", read, "")
	if r.status != http.StatusOK {
		t.Fatalf("results after a fresh snapshot = %d %s", r.status, r.raw)
	}
	for _, g := range r.body["test_groups"].([]any) {
		if n := g.(map[string]any)["sample_size"]; n != 0.0 {
			t.Fatalf("a group of the erased test has sample_size %v", n)
		}
	}
}
