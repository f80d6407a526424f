package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// headcount is what results and the export must agree on for one group
// (or one device cell of it). Revenue in cents.
type headcount struct {
	Visitors, Sessions, Orders, RevenueCents int64
}

func (h *headcount) add(o headcount) {
	h.Visitors += o.Visitors
	h.Sessions += o.Sessions
	h.Orders += o.Orders
	h.RevenueCents += o.RevenueCents
}

// TestOrdersAgreeAcrossResultsAndExport plays one store's population
// through the real program (storefront, ingest, webhooks, worker, v1 API,
// Postgres, Redis, ClickHouse): loadgen's visitors ordering by signed
// ORDERS_CREATE webhooks, plus visitors tracked as the contract's script
// tracks them (page loads with shop, sessionId and experimentId only),
// legacy orders with and without visitorId, a legacy order of a visitor
// the test never assigned, a crawler's order, every order sent twice on
// its path and two orders sent on both paths. The v1 snapshot, a custom
// query (whole, and by device) and the CSV export must all equal what the
// test sent, counted per group on its own.
func TestOrdersAgreeAcrossResultsAndExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const secret = "truth-test-secret"
	s := newServer(t, func(c *config.Config) {
		c.Role = "all"
		c.Platform.WebhookSecret, c.SigningSecret = secret, secret
	})
	app, stopIngest := s.app, s.stop

	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	shop, _, err := seedShop(ctx, app.DB, demoDomain, f)
	if err != nil {
		t.Fatal(err)
	}
	_, read, err := app.DB.CreateToken(ctx, shop.ID, experiment.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Minute)
	tt := lifttest.RunningTest(shop.ID, "truth", started)
	lifttest.PutTest(t, app.DB, tt)
	stopWorker, err := app.startWorker(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWorker()
	exp := strconv.FormatInt(tt.ID, 10)

	// loadgen's population: every order a signed webhook.
	o := loadgen{target: s.url, shop: demoDomain, experiment: exp, visitors: 240, concurrency: 8, duration: time.Minute,
		split: []float64{50, 50}, conversion: []float64{0.15, 0.25}, addToCart: []float64{0.3, 0.4},
		aov: []float64{60, 70}, seed: 3, webhookSecret: secret}
	lg := runLoadgen(t, &o)
	want := make([]headcount, 2)
	signed := int64(0)
	for g, tally := range lg.groups {
		n := tally.visitors.Load()
		want[g].add(headcount{Visitors: n, Sessions: n, Orders: tally.orders.Load(), RevenueCents: tally.revenueCents.Load()})
		signed += tally.orders.Load()
	}
	byDevice := map[string]*headcount{}
	unseen := func(g int) *headcount {
		k := fmt.Sprintf("/%d", g)
		if byDevice[k] == nil {
			byDevice[k] = &headcount{}
		}
		return byDevice[k]
	}

	// The contract's storefront, played by hand.
	p := &contractPlayer{t: t, lg: &loadgen{target: s.url, shop: demoDomain, experiment: exp, webhookSecret: secret,
		client: &http.Client{Timeout: 10 * time.Second}, run_: "truth"}}
	p.res = &loadgenResult{o: p.lg}
	catalog, err := demoCatalog()
	if err != nil {
		t.Fatal(err)
	}
	lines := []lgLine{{v: catalog[0], qty: 1}, {v: catalog[1], qty: 2}}
	lineCents := total(lines, false)
	nextOrder := 7_000_000
	order := func() string { nextOrder++; return strconv.Itoa(nextOrder) }
	for g := range 2 {
		for i := range 6 {
			device := []string{"mobile", "desktop"}[i%2]
			visitor := fmt.Sprintf("tv-%d-%d", g, i)
			sid := p.visit(visitor, g, device, browserUA)
			want[g].add(headcount{Visitors: 1, Sessions: 1})
			switch i {
			case 0: // a legacy order naming its visitor, posted twice
				id, rev := order(), 11.5+float64(g)
				p.legacyOrder(id, visitor, g, rev, browserUA)
				p.legacyOrder(id, visitor, g, rev, browserUA)
				want[g].add(headcount{Orders: 1, RevenueCents: cents100(rev)})
			case 1: // signed twice, and posted as a legacy order of the other group in between
				id := order()
				p.signedOrder(id, visitor, sid, g, lines)
				p.legacyOrder(id, "", 1-g, 999, browserUA)
				p.signedOrder(id, visitor, sid, g, lines)
				want[g].add(headcount{Orders: 1, RevenueCents: lineCents})
				signed++
			case 2: // posted as a legacy order without visitor first, then signed
				id := order()
				p.legacyOrder(id, "", g, 5, browserUA)
				p.signedOrder(id, visitor, sid, g, lines)
				want[g].add(headcount{Orders: 1, RevenueCents: lineCents})
				signed++
			}
		}
		// Legacy orders with the contract's body (no visitorId), each posted
		// twice: each an unseen visitor of its group.
		for k := range 2 {
			id, rev := order(), 20+float64(10*g+k)
			p.legacyOrder(id, "", g, rev, browserUA)
			p.legacyOrder(id, "", g, rev, browserUA)
			want[g].add(headcount{Visitors: 1, Orders: 1, RevenueCents: cents100(rev)})
			unseen(g).add(headcount{Visitors: 1, Orders: 1, RevenueCents: cents100(rev)})
		}
		// A legacy order naming a visitor the test never assigned.
		rev := 33.25 + float64(g)
		p.legacyOrder(order(), fmt.Sprintf("ghost-%d", g), g, rev, browserUA)
		want[g].add(headcount{Visitors: 1, Orders: 1, RevenueCents: cents100(rev)})
		unseen(g).add(headcount{Visitors: 1, Orders: 1, RevenueCents: cents100(rev)})
		// A crawler: assigned, browsing, ordering; counted nowhere.
		crawler := fmt.Sprintf("bot-%d", g)
		p.visit(crawler, g, "desktop", crawlerUA)
		p.legacyOrder(order(), crawler, g, 50, crawlerUA)
	}
	if p.res.failures.Load() != 0 {
		t.Fatalf("%d storefront requests failed: %v", p.res.failures.Load(), p.res.firstErr.Load())
	}

	// The worker applies the webhooks; ingest drains its log on close.
	waitSignedOrders(t, app.Warehouse, exp, signed)
	if err := stopIngest(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("sent per group: %+v; unseen visitors %+v %+v", want, *unseen(0), *unseen(1))

	t.Run("Snapshot", func(t *testing.T) {
		if err := app.results().TakeSnapshot(ctx, shop.ID, tt.ID, false); err != nil {
			t.Fatal(err)
		}
		r := s.do("GET", "/v1/experiments/"+exp+"/results", read, "")
		if r.status != 200 {
			t.Fatalf("GET results = %d %s", r.status, r.raw)
		}
		var doc struct {
			TestGroups []metricsRow `json:"test_groups"`
			Breakdown  struct {
				Rows []metricsRow `json:"rows"`
			} `json:"breakdown"`
		}
		if err := json.Unmarshal(r.raw, &doc); err != nil {
			t.Fatal(err)
		}
		checkHeadcounts(t, "snapshot", perGroup(doc.TestGroups), want)
		checkHeadcounts(t, "snapshot device rows", perGroup(doc.Breakdown.Rows), want)
		checkUnseen(t, "snapshot", doc.Breakdown.Rows, byDevice)
	})

	for _, breakdown := range []string{"", "device"} {
		t.Run("Query"+breakdown, func(t *testing.T) {
			body := `{}`
			if breakdown != "" {
				body = `{"breakdown":["` + breakdown + `"]}`
			}
			r := s.do("POST", "/v1/experiments/"+exp+"/results", read, body, "Content-Type", "application/json")
			if r.status != 202 {
				t.Fatalf("POST results = %d %s", r.status, r.raw)
			}
			raw := waitFor(t, s, read, "/v1/experiments/"+exp+"/results/"+r.body["id"].(string), "completed")
			var doc struct {
				TestGroups []metricsRow `json:"test_groups"`
				Breakdown  *struct {
					Rows []metricsRow `json:"rows"`
				} `json:"breakdown"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			if breakdown == "" {
				checkHeadcounts(t, "query", perGroup(doc.TestGroups), want)
				return
			}
			checkHeadcounts(t, "query by device", perGroup(doc.Breakdown.Rows), want)
			checkUnseen(t, "query by device", doc.Breakdown.Rows, byDevice)
		})
	}

	t.Run("Export", func(t *testing.T) {
		r := s.do("POST", "/v1/experiments/"+exp+"/exports", read, "")
		if r.status != 202 {
			t.Fatalf("POST exports = %d %s", r.status, r.raw)
		}
		raw := waitFor(t, s, read, "/v1/exports/"+r.body["id"].(string), "completed")
		var x struct {
			DownloadURL string `json:"download_url"`
		}
		json.Unmarshal(raw, &x)
		u, err := url.Parse(x.DownloadURL)
		if err != nil {
			t.Fatal(err)
		}
		d := s.do("GET", u.RequestURI(), "", "")
		rows, err := csv.NewReader(strings.NewReader(string(d.raw))).ReadAll()
		if d.status != 200 || err != nil || len(rows) < 2 {
			t.Fatalf("download = %d, %v: %s", d.status, err, d.raw)
		}
		got := make([]headcount, 2)
		seen := map[string]bool{}
		for _, row := range rows[1:] {
			g, _ := strconv.Atoi(row[2])
			rev, _ := strconv.ParseFloat(row[6], 64)
			if g < 0 || g > 1 || seen[row[0]] {
				t.Fatalf("export row %v: group out of the test, or an order listed twice", row)
			}
			seen[row[0]] = true
			got[g].Orders++
			got[g].RevenueCents += cents100(rev)
			if row[9] != shop.Currency {
				t.Errorf("order %s (visitor %q): currency %q, want the shop's %s", row[0], row[4], row[9], shop.Currency)
			}
		}
		for g := range want {
			if got[g].Orders != want[g].Orders || got[g].RevenueCents != want[g].RevenueCents {
				t.Errorf("export group %d: %d orders, %d cents; sent %d orders, %d cents", g, got[g].Orders,
					got[g].RevenueCents, want[g].Orders, want[g].RevenueCents)
			}
		}
	})
}

// metricsRow is the part of a results row (group or breakdown cell) the
// headcounts read.
type metricsRow struct {
	DimensionValue string           `json:"dimension_value"`
	TestGroupIndex int              `json:"test_group_index"`
	SampleSize     int64            `json:"sample_size"`
	SessionCount   int64            `json:"session_count"`
	Orders         int64            `json:"orders"`
	Revenue        experiment.Money `json:"revenue"`
}

func (m metricsRow) headcount() headcount {
	rev, _ := strconv.ParseFloat(m.Revenue.Amount, 64)
	return headcount{Visitors: m.SampleSize, Sessions: m.SessionCount, Orders: m.Orders, RevenueCents: cents100(rev)}
}

// perGroup adds the rows up per group (the cells of a breakdown add up to
// the whole).
func perGroup(rows []metricsRow) []headcount {
	out := make([]headcount, 2)
	for _, r := range rows {
		if r.TestGroupIndex >= 0 && r.TestGroupIndex < len(out) {
			out[r.TestGroupIndex].add(r.headcount())
		}
	}
	return out
}

func checkHeadcounts(t *testing.T, what string, got, want []headcount) {
	t.Helper()
	for g := range want {
		if got[g] != want[g] {
			t.Errorf("%s group %d: %+v, sent %+v", what, g, got[g], want[g])
		}
	}
}

// checkUnseen: the visitors no assignment names (legacy orders without
// visitorId, or of a visitor the test never saw) have no device.
func checkUnseen(t *testing.T, what string, rows []metricsRow, unseen map[string]*headcount) {
	t.Helper()
	want := maps.Clone(unseen)
	for _, r := range rows {
		k := fmt.Sprintf("%s/%d", r.DimensionValue, r.TestGroupIndex)
		if w, ok := want[k]; ok && r.headcount() != *w {
			t.Errorf("%s device %q group %d: %+v, sent %+v", what, r.DimensionValue, r.TestGroupIndex, r.headcount(), *w)
		}
		delete(want, k)
	}
	for k, w := range want {
		t.Errorf("%s: no row %s for the unseen visitors %+v", what, k, *w)
	}
}

func cents100(x float64) int64 { return int64(math.Round(x * 100)) }

// waitFor polls a v1 resource until its status is status, and returns it.
func waitFor(t *testing.T, s *server, token, path, status string) []byte {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := s.do("GET", path, token, "")
		if r.status == 200 && r.body["status"] == status {
			return r.raw
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %d %s, want status %s", path, r.status, r.raw, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSignedOrders waits until the worker has written n signed orders of
// the test.
func waitSignedOrders(t *testing.T, wh *warehouse.Warehouse, exp string, n int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var got uint64
		if err := wh.Conn().QueryRow(context.Background(), `SELECT uniqExact(order_id) FROM orders
			WHERE experiment_id = ? AND version >= ?`, exp, warehouse.SignedOrderBit).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if int64(got) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d signed orders written, %d sent", got, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// contractPlayer plays storefront calls as the contract's script makes
// them, through loadgen's HTTP client (which counts failures).
type contractPlayer struct {
	t   *testing.T
	lg  *loadgen
	res *loadgenResult
	n   int
}

// visit assigns visitor to group on device and loads two pages of one
// session, recorded as the contract says (shop, sessionId, experimentId:
// no visitor), with a page_viewed event that names the visitor. It
// returns the session id.
func (p *contractPlayer) visit(visitor string, group int, device, ua string) string {
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if !p.lg.get(p.res, ua, "/api/get-session", &sess) || sess.SessionID == "" {
		p.t.Fatalf("get-session failed: %v", p.res.firstErr.Load())
	}
	o := p.lg
	o.post(p.res, ua, "/api/track/assignment?shop="+url.QueryEscape(o.shop), map[string]any{
		"sessionId": sess.SessionID, "visitorId": visitor, "experimentId": o.experiment, "testGroup": group,
		"createdAt": time.Now().UnixMilli(), "assignmentReason": "random_split", "device": device}, nil)
	q := url.Values{"shop": {o.shop}, "sessionId": {sess.SessionID}, "experimentId": {o.experiment}}
	o.get(p.res, ua, "/api/observe/session?"+q.Encode(), nil)
	o.get(p.res, ua, "/api/observe/session?"+q.Encode(), nil)
	o.post(p.res, ua, "/api/track/event?shop="+url.QueryEscape(o.shop), map[string]any{
		"sessionId": sess.SessionID, "visitorId": visitor, "eventType": "page_viewed", "source": "webpixel",
		"createdAt": time.Now().UnixMilli(), "experimentIds": []string{o.experiment}, "pagePath": "/"}, nil)
	return sess.SessionID
}

// legacyOrder posts the legacy order body; visitorId only when visitor is
// not empty (the contract's body has none).
func (p *contractPlayer) legacyOrder(id, visitor string, group int, revenue float64, ua string) {
	body := map[string]any{"shop": p.lg.shop, "experimentId": p.lg.experiment, "orderId": id, "testGroup": group, "revenue": revenue}
	if visitor != "" {
		body["visitorId"] = visitor
	}
	p.lg.post(p.res, ua, "/api/analytics/order", body, nil)
}

// signedOrder delivers a signed ORDERS_CREATE for the visitor (a new
// delivery id each time: a second one is the same order sent again).
func (p *contractPlayer) signedOrder(id, visitor, session string, group int, lines []lgLine) {
	p.n++
	if !p.lg.sendOrderWebhook(p.res, p.n, id, visitor, session, group, lines) {
		p.t.Fatalf("webhook for order %s failed: %v", id, p.res.firstErr.Load())
	}
}
