package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// TestResultsMatchRawRows plays loadgen's visitors (known true effects:
// variant converts 3× as often) through the real storefront endpoints and
// ingest, then checks that the snapshot and a custom query equal the same
// numbers recomputed a second way: raw rows read out of ClickHouse and
// aggregated in Go (first assignment, events once, latest order versions,
// bots out, the local-date window). And the planted winner is found.
func TestResultsMatchRawRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testDB(t)
	shop, err := db.CreateShop(ctx, experiment.Shop{Domain: demoDomain, Name: "Demo", Timezone: "Asia/Tokyo", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Minute)
	tt := lifttest.RunningTest(shop.ID, "planted", started)
	lifttest.PutTest(t, db, tt)
	addr, chDB := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: addr, Database: chDB})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	app := &App{Config: &config.Config{DataDir: t.TempDir()}, DB: db, Warehouse: wh, Now: time.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	engine, stopIngest, err := app.router("ingest")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serveLoopback(engine)
	if err != nil {
		t.Fatal(err)
	}
	exp := strconv.FormatInt(tt.ID, 10)
	o := loadgen{target: "http://" + srv.Addr, shop: demoDomain, experiment: exp, visitors: 1200, concurrency: 8,
		duration: time.Minute, split: []float64{50, 50}, conversion: []float64{0.05, 0.15}, addToCart: []float64{0.15, 0.3},
		aov: []float64{50, 60}, botShare: 0.05, seed: 11}
	res := runLoadgen(t, &o)
	srv.Close()
	if err := stopIngest(ctx); err != nil { // drains the WAL into ClickHouse
		t.Fatal(err)
	}

	now := time.Now().UTC()
	window := results.Window(shop, tt, now)
	want := recompute(t, wh, exp, shop.Timezone, window)

	raddr, rdb := lifttest.Redis(t)
	jc := jobs.NewClient(jobs.Redis{Addr: raddr, DB: rdb})
	defer jc.Close()
	svc := results.New(results.Config{Repo: store.ResultsRepository{DB: db}, Tests: db, Warehouse: wh,
		Jobs: jobs.ResultsQueue{Client: jc}, Now: func() time.Time { return now }})

	t.Run("Snapshot", func(t *testing.T) {
		snap, err := svc.ComputeSnapshot(ctx, shop, tt, now, false)
		if err != nil {
			t.Fatal(err)
		}
		var doc results.SnapshotDoc
		if err := json.Unmarshal(snap.Body, &doc); err != nil {
			t.Fatal(err)
		}
		for g, lg := range res.groups {
			if got, sent := doc.TestGroups[g].SampleSize, lg.visitors.Load()-lg.bots.Load(); got != sent {
				t.Errorf("group %d: sample_size %d, loadgen sent %d human visitors", g, got, sent)
			}
			checkGroup(t, fmt.Sprintf("snapshot group %d", g), doc.TestGroups[g].GroupMetrics, want.groups[g])
		}
		cr := doc.TestGroups[1].VsControl["conversion_rate"]
		t.Logf("snapshot: n %d/%d, conversion %.4f/%.4f, lift %.3f, P(beat) %.4f, p %.2g, outcome %s %v, srm %s",
			doc.TestGroups[0].SampleSize, doc.TestGroups[1].SampleSize, doc.TestGroups[0].ConversionRate,
			doc.TestGroups[1].ConversionRate, *cr.Lift, cr.Bayesian.ProbBeatControl, cr.Frequentist.PValue,
			doc.Outcome, *doc.WinningTestGroupIndex, doc.SRMStatus)
		if doc.Outcome != "winner" || doc.WinningTestGroupIndex == nil || *doc.WinningTestGroupIndex != 1 {
			t.Errorf("outcome %s %v, want the planted winner 1", doc.Outcome, doc.WinningTestGroupIndex)
		}
		lift := *doc.TestGroups[1].VsControl["conversion_rate"].Lift
		c0, c1 := float64(want.groups[0].converted)/float64(want.groups[0].n), float64(want.groups[1].converted)/float64(want.groups[1].n)
		if math.Abs(lift-(c1/c0-1)) > 1e-9 {
			t.Errorf("conversion lift %v, recomputed %v", lift, c1/c0-1)
		}
		for _, row := range doc.Breakdown.Rows {
			checkGroup(t, "snapshot device "+row.DimensionValue, row.GroupMetrics, want.byDevice[row.DimensionValue][row.TestGroupIndex])
		}
		if len(doc.Breakdown.Rows) != 2*len(want.byDevice) {
			t.Errorf("%d device rows, recomputed %d devices", len(doc.Breakdown.Rows), len(want.byDevice))
		}
	})

	t.Run("WarehouseSums", func(t *testing.T) {
		rows, err := wh.GroupMetrics(ctx, warehouse.MetricsQuery{ShopID: shop.ID, ExperimentID: exp, Timezone: shop.Timezone,
			From: window.GTE, To: window.LTE, Basis: warehouse.BasisVisitors})
		if err != nil || len(rows) != 2 {
			t.Fatalf("GroupMetrics = %+v, %v", rows, err)
		}
		for _, r := range rows {
			w := want.groups[r.TestGroup]
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if r.N != w.n || r.Converted != w.converted || !close(r.Revenue, w.revenue) || !close(r.Profit, w.profit) ||
				!close(r.Staying, w.staying) || r.Orders != float64(w.orders) {
				t.Errorf("group %d sums %+v, recomputed %+v", r.TestGroup, r.Sums, *w)
			}
		}
	})

	t.Run("Query", func(t *testing.T) {
		// The core and engagement registries together carry every metric.
		rows := map[string]*results.GroupMetrics{}
		for _, set := range []string{"core", "engagement"} {
			q, err := svc.CreateQuery(ctx, shop, tt.ID, results.QueryRequest{Breakdown: []string{"device", "country"}, MetricSet: &set})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.RunQuery(ctx, q.ID, true); err != nil {
				t.Fatal(err)
			}
			got, err := db.FindResultQuery(ctx, shop.ID, tt.ID, q.ID)
			if err != nil || got.Status != results.QueryCompleted {
				t.Fatalf("query = %+v, %v", got, err)
			}
			var doc struct {
				Breakdown struct {
					Rows []json.RawMessage `json:"rows"`
				} `json:"breakdown"`
			}
			if err := json.Unmarshal(got.Body, &doc); err != nil {
				t.Fatal(err)
			}
			for _, raw := range doc.Breakdown.Rows {
				var key struct {
					DimensionValue string `json:"dimension_value"`
					Index          int    `json:"test_group_index"`
				}
				if err := json.Unmarshal(raw, &key); err != nil {
					t.Fatal(err)
				}
				k := fmt.Sprintf("%s/%d", key.DimensionValue, key.Index)
				if rows[k] == nil {
					rows[k] = &results.GroupMetrics{}
				}
				if err := json.Unmarshal(raw, rows[k]); err != nil {
					t.Fatal(err)
				}
			}
		}
		wantCells := 0
		for value, gs := range want.byDeviceCountry {
			for g, w := range gs {
				wantCells++
				got := rows[fmt.Sprintf("%s/%d", value, g)]
				if got == nil {
					t.Errorf("no row %s/%d", value, g)
					continue
				}
				checkGroup(t, "query "+value, *got, w)
			}
		}
		if len(rows) != wantCells {
			var extra []string
			for k := range rows {
				value, g, _ := strings.Cut(k, "/")
				if i, _ := strconv.Atoi(g); want.byDeviceCountry[value][i] == nil {
					extra = append(extra, fmt.Sprintf("%s %+v", k, *rows[k]))
				}
			}
			t.Errorf("%d rows, recomputed %d; rows not recomputed: %v", len(rows), wantCells, extra)
		}
	})
}

// unitTotals are one group's numbers recomputed in Go.
type unitTotals struct {
	n, sessions, converted, orders, atc, chk, ct, bounced, pages int64
	revenue, profit, staying                                     float64
}

type recomputed struct {
	groups          []*unitTotals
	byDevice        map[string]map[int]*unitTotals
	byDeviceCountry map[string]map[int]*unitTotals
}

func checkGroup(t *testing.T, name string, got results.GroupMetrics, w *unitTotals) {
	t.Helper()
	if w == nil {
		t.Errorf("%s: not in the recomputation", name)
		return
	}
	n := float64(w.n)
	rate := func(c int64) float64 { return float64(c) / n }
	aov := 0.0
	if w.orders > 0 {
		aov = w.revenue / float64(w.orders)
	}
	for _, p := range []struct {
		what      string
		got, want int64
	}{
		{"sample_size", got.SampleSize, w.n}, {"session_count", got.SessionCount, w.sessions}, {"orders", got.Orders, w.orders},
		{"page_view_count", got.PageViewCount, w.pages}, {"click_through_count", got.ClickThroughCount, w.ct},
	} {
		if p.got != p.want {
			t.Errorf("%s: %s = %d, recomputed %d", name, p.what, p.got, p.want)
		}
	}
	// Money is shown in cents: the amount must be the recomputed value
	// rounded (float sums in another order may land on either side of a
	// half cent).
	for _, p := range []struct {
		what string
		got  experiment.Money
		want float64
	}{
		{"revenue", got.Revenue, w.revenue}, {"revenue_per_visitor", got.RevenuePerVisitor, w.revenue / n},
		{"profit_per_visitor", got.ProfitPerVisitor, w.profit / n}, {"average_order_value", got.AverageOrderValue, aov},
	} {
		amount, err := strconv.ParseFloat(p.got.Amount, 64)
		if err != nil || math.Abs(amount-p.want) > 0.005+1e-6 || p.got.Currency != "USD" {
			t.Errorf("%s: %s = %v, recomputed %v", name, p.what, p.got, p.want)
		}
	}
	for _, p := range []struct {
		what      string
		got, want float64
	}{
		{"conversion_rate", got.ConversionRate, rate(w.converted)}, {"add_to_cart_rate", got.AddToCartRate, rate(w.atc)},
		{"reached_checkout_rate", got.ReachedCheckoutRate, rate(w.chk)}, {"click_through_rate", got.ClickThroughRate, rate(w.ct)},
		{"bounce_rate", got.BounceRate, rate(w.bounced)}, {"avg_staying_time", got.AvgStayingTime, w.staying / n},
	} {
		if math.Abs(p.got-p.want) > 1e-9 {
			t.Errorf("%s: %s = %v, recomputed %v", name, p.what, p.got, p.want)
		}
	}
}

// recompute reads the test's raw rows out of ClickHouse (plain SELECTs, no
// aggregation) and derives every group's numbers in Go.
func recompute(t *testing.T, wh *warehouse.Warehouse, exp, tz string, window results.DateRange) recomputed {
	t.Helper()
	ctx := context.Background()
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	in := func(ts time.Time) bool {
		d := ts.In(loc).Format(time.DateOnly)
		return d >= window.GTE && d <= window.LTE
	}
	query := func(sql string, scan func(r interface{ Scan(...any) error }) error) {
		rows, err := wh.Conn().Query(ctx, sql, exp)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}

	type visitor struct {
		version         uint64
		group           int16
		bot             bool
		at              time.Time
		device, country string
		atc, chk, ct    bool
		orders          int64
		revenue, profit float64
	}
	visitors := map[string]*visitor{}
	query("SELECT visitor_id, version, test_group, is_bot, assigned_at, device, country FROM assignments WHERE experiment_id = ?",
		func(r interface{ Scan(...any) error }) error {
			var id string
			var v visitor
			var bot uint8
			if err := r.Scan(&id, &v.version, &v.group, &bot, &v.at, &v.device, &v.country); err != nil {
				return err
			}
			v.bot = bot == 1 || v.device == "bot"
			if cur := visitors[id]; cur == nil || v.version > cur.version { // the first assignment has the highest version
				visitors[id] = &v
			}
			return nil
		})
	type session struct {
		visitor     string
		records     map[string]bool
		first, last time.Time
	}
	sessions := map[string]*session{}
	query("SELECT session_id, record_id, visitor_id, seen_at FROM sessions WHERE experiment_id = ? AND is_bot = 0",
		func(r interface{ Scan(...any) error }) error {
			var sid, rid, vid string
			var at time.Time
			if err := r.Scan(&sid, &rid, &vid, &at); err != nil {
				return err
			}
			if !in(at) {
				return nil
			}
			s := sessions[sid]
			if s == nil {
				s = &session{visitor: vid, records: map[string]bool{}, first: at, last: at}
				sessions[sid] = s
			}
			s.records[rid] = true
			if at.Before(s.first) {
				s.first = at
			}
			if at.After(s.last) {
				s.last = at
			}
			return nil
		})
	pages := map[string]int64{}
	bounces := map[string][2]int64{} // visitor → sessions, single-page sessions
	staying := map[string]float64{}
	for _, s := range sessions {
		pages[s.visitor] += int64(len(s.records))
		b := bounces[s.visitor]
		b[0]++
		if len(s.records) == 1 {
			b[1]++
		}
		bounces[s.visitor] = b
		staying[s.visitor] += s.last.Sub(s.first).Seconds()
	}
	query("SELECT visitor_id, event_type, created_at FROM events WHERE experiment_id = ? AND is_bot = 0",
		func(r interface{ Scan(...any) error }) error {
			var vid, typ string
			var at time.Time
			if err := r.Scan(&vid, &typ, &at); err != nil {
				return err
			}
			if v := visitors[vid]; v != nil && in(at) {
				v.atc = v.atc || typ == "product_added_to_cart"
				v.chk = v.chk || typ == "checkout_started" || typ == "checkout_completed"
			}
			return nil
		})
	query("SELECT visitor_id, viewed_at FROM page_views WHERE experiment_id = ? AND is_bot = 0",
		func(r interface{ Scan(...any) error }) error {
			var vid string
			var at time.Time
			if err := r.Scan(&vid, &at); err != nil {
				return err
			}
			if v := visitors[vid]; v != nil && in(at) {
				v.ct = true
			}
			return nil
		})
	type order struct {
		version       uint64
		visitor       string
		revenue, cost float64
		bot           bool
		at            time.Time
	}
	orders := map[string]order{}
	query("SELECT order_id, version, visitor_id, toFloat64(revenue), toFloat64(cost), is_bot, created_at FROM orders WHERE experiment_id = ?",
		func(r interface{ Scan(...any) error }) error {
			var id string
			var o order
			var bot uint8
			if err := r.Scan(&id, &o.version, &o.visitor, &o.revenue, &o.cost, &bot, &o.at); err != nil {
				return err
			}
			o.bot = bot == 1
			if cur, ok := orders[id]; !ok || o.version > cur.version {
				orders[id] = o
			}
			return nil
		})
	for _, o := range orders {
		if v := visitors[o.visitor]; v != nil && !o.bot && in(o.at) {
			v.orders++
			v.revenue += o.revenue
			v.profit += o.revenue - o.cost
		}
	}

	out := recomputed{groups: []*unitTotals{{}, {}}, byDevice: map[string]map[int]*unitTotals{},
		byDeviceCountry: map[string]map[int]*unitTotals{}}
	cell := func(m map[string]map[int]*unitTotals, key string, g int) *unitTotals {
		if m[key] == nil {
			m[key] = map[int]*unitTotals{}
		}
		if m[key][g] == nil {
			m[key][g] = &unitTotals{}
		}
		return m[key][g]
	}
	for id, v := range visitors {
		if v.bot || v.group < 0 || !in(v.at) {
			continue
		}
		g := int(v.group)
		b := bounces[id]
		for _, u := range []*unitTotals{out.groups[g], cell(out.byDevice, v.device, g), cell(out.byDeviceCountry, v.device+"::"+v.country, g)} {
			u.n++
			u.sessions += b[0]
			u.pages += pages[id]
			u.staying += staying[id]
			u.orders += v.orders
			u.revenue += v.revenue
			u.profit += v.profit
			if v.orders > 0 {
				u.converted++
			}
			if v.atc {
				u.atc++
			}
			if v.chk || v.orders > 0 {
				u.chk++
			}
			if v.ct {
				u.ct++
			}
			if b[0] > 0 && b[0] == b[1] {
				u.bounced++
			}
		}
	}
	if out.groups[0].n == 0 || out.groups[1].n == 0 {
		t.Fatalf("recomputation found no visitors: %+v", out.groups)
	}
	return out
}
