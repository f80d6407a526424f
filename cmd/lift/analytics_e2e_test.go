package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// groupTotals are the numbers every surface must agree on per group.
type groupTotals struct {
	visitors int64
	orders   int64
	revenue  float64
}

// snapshotPlanted puts a test of shop that has run for two hours, with n
// planted visitors a group (conversion 10% and 20%), and takes its snapshot.
func snapshotPlanted(t *testing.T, s *server, shopID int64, name string, n int) *experiment.Test {
	t.Helper()
	started := time.Now().UTC().Add(-2 * time.Hour)
	tt := lifttest.RunningTest(shopID, name, started)
	lifttest.PutTest(t, s.app.DB, tt)
	lifttest.PlantVisitors(t, s.app.Warehouse, shopID, tt.ID, started.Add(time.Minute), n, []float64{0.1, 0.2}, 40)
	if err := s.app.results().TakeSnapshot(t.Context(), shopID, tt.ID, false); err != nil {
		t.Fatal(err)
	}
	return tt
}

// TestSessionAnalyticsTotalsMatchResultsAndExport: on one planted
// population, the session analytics (per test, storewide, per type), the
// v1 results snapshot and the CSV export give the same visitors, orders and
// revenue per group. The engine is lift serve's (role all), so the legacy
// POST /api/analytics/order and /api/analytics/checkout of the storefront
// answer next to the session analytics' /api/analytics/… routes.
func TestSessionAnalyticsTotalsMatchResultsAndExport(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(c *config.Config) { c.Platform.APIKey, c.Platform.APISecret = "key", "secret" })
	shop, read, write := s.shop(true)
	tt := snapshotPlanted(t, s, shop.ID, "planted", 300)
	id := strconv.FormatInt(tt.ID, 10)
	r := s.do("GET", "/v1/experiments/"+id+"/results", read, "")
	if r.status != 200 {
		t.Fatalf("v1 results = %d %s", r.status, r.raw)
	}
	snapshot := snapshotTotals(t, r.body)
	window := r.body["date_range"].(map[string]any)
	exported := exportTotals(t, s, shop.ID, id, read, write)

	tok := sessionToken(t, shop.Domain)
	body := fmt.Sprintf(`{"dateStart":%q,"dateFinish":%q}`, window["gte"], window["lte"])
	for _, path := range []string{"v1/", "v2/", "v1/storewide/", "v2/storewide/"} {
		r := s.do("POST", "/api/analytics/"+path+id, tok, body)
		if r.status != 200 || r.body["status"] != "success" {
			t.Fatalf("%s = %d %s", path, r.status, r.raw)
		}
		d := r.body["data"].(map[string]any)
		got := totalsOf(t, d["totalViews"], d["totalOrders"], d["totalRevenue"])
		compareTotals(t, path+" vs v1 results", got, snapshot, true)
		compareTotals(t, path+" vs export", got, exported, false)
	}
	for _, path := range []string{"shipping/", "redirect/", "template/", "theme/", "checkout/"} {
		r := s.do("POST", "/api/analytics/"+path+id, tok, body)
		d, _ := r.body["data"].(map[string]any)
		if r.status != 200 || d == nil {
			t.Fatalf("%s = %d %s", path, r.status, r.raw)
		}
		compareTotals(t, path+" vs v1 results", totalsOf(t, d["visitors"], d["orders"], d["revenue"]), snapshot, true)
	}

	// The storefront's legacy routes share the prefix and still answer.
	legacy := map[string]string{
		"/api/analytics/order":    fmt.Sprintf(`{"shop":%q,"experimentId":%q,"orderId":"9001","testGroup":1,"revenue":5}`, shop.Domain, id),
		"/api/analytics/checkout": fmt.Sprintf(`{"shop":%q,"experimentId":%q,"sessionId":"00000000-0000-4000-8000-000000000001","testGroup":1,"revenue":5}`, shop.Domain, id),
	}
	for path, b := range legacy {
		if r := s.do("POST", path, "", b, "Content-Type", "text/plain"); r.status != 202 || r.body["accepted"] != true {
			t.Fatalf("legacy %s = %d %s", path, r.status, r.raw)
		}
	}
	// And an analytics path without a session token is the session surface's 401.
	if r := s.do("POST", "/api/analytics/v1/"+id, "", body); r.status != 401 || r.body["status"] != "error" {
		t.Fatalf("analytics without a session = %d %s", r.status, r.raw)
	}
}

func snapshotTotals(t *testing.T, body map[string]any) []groupTotals {
	t.Helper()
	var out []groupTotals
	for _, g := range body["test_groups"].([]any) {
		m := g.(map[string]any)
		rev, err := strconv.ParseFloat(m["revenue"].(map[string]any)["amount"].(string), 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, groupTotals{visitors: int64(m["sample_size"].(float64)), orders: int64(m["orders"].(float64)), revenue: rev})
	}
	return out
}

// exportTotals creates, runs and downloads the test's CSV export and sums
// its orders and revenue per group.
func exportTotals(t *testing.T, s *server, shopID int64, id, read, write string) []groupTotals {
	t.Helper()
	r := s.do("POST", "/v1/experiments/"+id+"/exports", write, "")
	if r.status != 202 {
		t.Fatalf("create export = %d %s", r.status, r.raw)
	}
	xid := r.body["id"].(string)
	if err := s.app.results().RunExport(t.Context(), shopID, xid, true); err != nil {
		t.Fatal(err)
	}
	r = s.do("GET", "/v1/exports/"+xid, read, "")
	u, err := url.Parse(r.body["download_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	d := s.do("GET", u.RequestURI(), "", "")
	recs, err := csv.NewReader(strings.NewReader(string(d.raw))).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("export = %d %s (%v)", d.status, d.raw, err)
	}
	out := make([]groupTotals, 2)
	for _, rec := range recs[1:] {
		g, _ := strconv.Atoi(rec[2])
		rev, _ := strconv.ParseFloat(rec[6], 64)
		out[g].orders++
		out[g].revenue += rev
	}
	return out
}

func totalsOf(t *testing.T, visitors, orders, revenue any) []groupTotals {
	t.Helper()
	v, o, r := visitors.([]any), orders.([]any), revenue.([]any)
	out := make([]groupTotals, len(v))
	for i := range v {
		out[i] = groupTotals{visitors: int64(v[i].(float64)), orders: int64(o[i].(float64)), revenue: r[i].(float64)}
	}
	return out
}

// compareTotals: revenue to the cent (the export rounds each order).
func compareTotals(t *testing.T, name string, got, want []groupTotals, visitors bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d groups, want %d", name, len(got), len(want))
	}
	for g := range got {
		if visitors && got[g].visitors != want[g].visitors || got[g].orders != want[g].orders ||
			math.Abs(got[g].revenue-want[g].revenue) > 0.005*float64(want[g].orders+1) {
			t.Errorf("%s group %d: got %+v, want %+v", name, g, got[g], want[g])
		}
		if want[g].orders == 0 {
			t.Errorf("%s group %d: the planted population has no orders; the comparison proves nothing", name, g)
		}
	}
}
