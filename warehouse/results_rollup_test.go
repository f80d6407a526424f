package warehouse_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/liftab/lift/warehouse"
)

// rollupPopulation writes, in three inserts (so the rollup has several
// parts), a test whose visitors exercise what the rollup must get right:
// several sessions each, replayed page loads, events and orders, edited
// orders, re-assignments, bots (by flag and by device), excluded visitors,
// orders of unassigned visitors, of visitors in another group and without
// a visitor, and UTM tags and click ids for every breakdown.
func rollupPopulation(t *testing.T, w *warehouse.Warehouse, seed uint64, merge bool) {
	t.Helper()
	const shop, exp, visitors = 1, "31", 600
	start := at("2026-06-01 00:00:00")
	ctx := context.Background()
	devices := []string{"desktop", "mobile", "tablet", "bot"}
	for batch := range 3 {
		rng := rand.New(rand.NewPCG(seed, uint64(batch)))
		b := &warehouse.Batch{}
		for n := range visitors {
			if rng.IntN(3) != batch && n%7 != 0 { // each batch touches about a third of the visitors
				continue
			}
			vid := "v" + strconv.Itoa(n)
			group := int16(n%3) - map[bool]int16{true: 1, false: 0}[n%29 == 0] // some excluded (-1)
			when := start.Add(time.Duration(rng.IntN(5*24*60)) * time.Minute)
			if batch == 0 || rng.IntN(10) == 0 {
				b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: shop, ExperimentID: exp, VisitorID: vid,
					AssignmentID: vid + "-a" + strconv.Itoa(batch), SessionID: vid + "-s0", TestGroup: group,
					Device: devices[rng.IntN(len(devices))], Country: []string{"US", "GB", "DE"}[rng.IntN(3)],
					VisitorType: []string{"new", "returning"}[rng.IntN(2)], UTMSource: []string{"", "google", "news"}[rng.IntN(3)],
					UTMMedium: []string{"", "cpc", "email"}[rng.IntN(3)], UTMCampaign: []string{"", "spring"}[rng.IntN(2)],
					Gclid: []string{"", "g1"}[rng.IntN(2)], AssignedAt: when, ReceivedAt: when.Add(time.Duration(batch) * time.Hour),
					IsBot: n%31 == 0})
			}
			sessions := 1 + rng.IntN(3)
			for s := range sessions {
				sid := vid + "-s" + strconv.Itoa(s+batch*3)
				loads := 1 + rng.IntN(3)
				for r := range loads {
					seen := when.Add(time.Duration(s*90+r*2) * time.Minute)
					row := warehouse.Session{ShopID: shop, ExperimentID: exp, SessionID: sid, RecordID: sid + "-r" + strconv.Itoa(r),
						VisitorID: vid, SeenAt: seen, PagePath: "/p" + strconv.Itoa(r), IsBot: n%37 == 0 && r == 0}
					b.Sessions = append(b.Sessions, row)
					if rng.IntN(8) == 0 {
						b.Sessions = append(b.Sessions, row) // replayed
					}
				}
				if rng.IntN(4) == 0 {
					b.PageViews = append(b.PageViews, warehouse.PageView{ShopID: shop, ExperimentID: exp, ProductID: "1001",
						ViewID: sid + "-pv", SessionID: sid, VisitorID: vid, ViewedAt: when.Add(time.Duration(s*90+1) * time.Minute)})
				}
			}
			for e, typ := range []string{"product_added_to_cart", "checkout_started", "checkout_completed", "page_viewed"} {
				if rng.IntN(3) == 0 {
					ev := warehouse.Event{ShopID: shop, ExperimentID: exp, EventID: fmt.Sprintf("%s-e%d-%d", vid, batch, e),
						SessionID: vid + "-s0", VisitorID: vid, EventType: typ, CreatedAt: when.Add(3 * time.Minute),
						ReceivedAt: when.Add(3 * time.Minute), IsBot: rng.IntN(10) == 0}
					b.Events = append(b.Events, ev, ev) // the second is a replay
				}
			}
			if rng.IntN(5) == 0 { // a custom event, sometimes replayed, sometimes a bot's or an unassigned visitor's
				name := []string{"signup", "quiz"}[rng.IntN(2)]
				fired := vid
				if rng.IntN(8) == 0 {
					fired = "ghost" + vid
				}
				ev := warehouse.Event{ShopID: shop, ExperimentID: exp, EventID: fmt.Sprintf("%s-c%d", vid, batch),
					SessionID: vid + "-s0", VisitorID: fired, EventType: "lift:custom_event:" + name, CustomName: name,
					CreatedAt: when.Add(4 * time.Minute), ReceivedAt: when.Add(4 * time.Minute), IsBot: rng.IntN(12) == 0}
				b.Events = append(b.Events, ev)
				if rng.IntN(3) == 0 {
					b.Events = append(b.Events, ev)
				}
			}
			if rng.IntN(4) == 0 {
				named, stated := vid, group
				switch rng.IntN(6) {
				case 0:
					named = "" // a legacy order without its visitor
				case 1:
					named = "ghost" + vid // a visitor the test never assigned
				case 2:
					stated = (group + 1) % 3 // the buyer saw another group
				}
				revenue := float64(10+rng.IntN(200)) + 0.25
				for version := uint64(1); version <= uint64(1+rng.IntN(2)); version++ {
					b.Orders = append(b.Orders, warehouse.Order{ShopID: shop, ExperimentID: exp,
						OrderID: fmt.Sprintf("o%d-%d", n, batch), Version: version, TestGroup: stated, VisitorID: named,
						Revenue: revenue / float64(version), Cost: revenue / 4, Currency: "USD",
						CreatedAt: when.Add(5 * time.Minute), IsBot: n%41 == 0})
				}
			}
		}
		if err := w.Insert(ctx, b); err != nil {
			t.Fatal(err)
		}
		if merge && batch == 1 {
			if err := w.Conn().Exec(ctx, "OPTIMIZE TABLE agg_visitors FINAL"); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRollupMatchesRawPath holds the rollup to the raw path's numbers on
// every breakdown it serves, with the rollup's rows in one part, several
// parts, and a merged base with later parts beside it.
func TestRollupMatchesRawPath(t *testing.T) {
	for _, layout := range []struct {
		name  string
		merge bool
		final bool
		copy  bool // reads write and use the finalized copy of the base
	}{{"parts", false, false, false}, {"base and parts", true, false, false}, {"one part", false, true, false},
		{"copied base and parts", true, false, true}, {"copied one part", false, true, true}} {
		t.Run(layout.name, func(t *testing.T) {
			if layout.copy {
				defer warehouse.SetCopyMinVisitors(0)()
			} else {
				defer warehouse.SetCopyMinVisitors(1 << 62)()
			}
			w := openTestWarehouse(t)
			rollupPopulation(t, w, 7, layout.merge)
			if layout.final {
				if err := w.Conn().Exec(context.Background(), "OPTIMIZE TABLE agg_visitors FINAL"); err != nil {
					t.Fatal(err)
				}
			}
			var parts uint64
			if err := w.Conn().QueryRow(context.Background(), "SELECT uniqExact(_part) FROM agg_visitors").Scan(&parts); err != nil {
				t.Fatal(err)
			}
			t.Logf("agg_visitors parts: %d", parts)
			defer func() {
				var copies uint64
				if err := w.Conn().QueryRow(context.Background(), "SELECT count() FROM agg_visitors_copy_builds").Scan(&copies); err != nil {
					t.Fatal(err)
				}
				if layout.copy != (copies > 0) {
					t.Errorf("%d finished copies, want some: %v", copies, layout.copy)
				}
			}()
			for _, dims := range [][]warehouse.Dimension{nil, {"device"}, {"device", "country"}, {"traffic_source"},
				{"utm_campaign", "visitor_type"}, {"date"}} {
				for _, tz := range []string{"UTC", "America/New_York"} {
					q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "31", Timezone: tz, From: "2026-05-30", To: "2026-06-30",
						Basis: warehouse.BasisVisitors, Breakdown: dims, Caps: &warehouse.Caps{Revenue: 120, Profit: 80}}
					fast, ok, err := w.RollupGroupMetrics(q)
					if err != nil || !ok {
						t.Fatalf("%v %s: rollup ok=%v err=%v", dims, tz, ok, err)
					}
					raw, err := w.RawGroupMetrics(q)
					if err != nil {
						t.Fatal(err)
					}
					if len(raw) == 0 {
						t.Fatal("the raw path found no units")
					}
					if d := cmp.Diff(raw, fast, cmpopts.EquateApprox(0, 1e-9)); d != "" {
						t.Errorf("%v %s: rollup differs from the raw path (-raw +rollup):\n%s", dims, tz, d)
					}
					if layout.copy && !slices.Contains(dims, "date") {
						cubeMatchesWinsorCaps(t, w, q)
					}
					if layout.copy && len(dims) == 0 {
						customEventsMatch(t, w, q)
						narrow := q
						narrow.From, narrow.To = "2026-06-02", "2026-06-03"
						customEventsMatch(t, w, narrow)
					}
				}
			}
		})
	}
}

// cubeMatchesWinsorCaps holds the cube's one read of caps and capped sums
// to the two reads of the raw path: WinsorCaps, then the capped sums.
func cubeMatchesWinsorCaps(t *testing.T, w *warehouse.Warehouse, q warehouse.MetricsQuery) {
	t.Helper()
	const percentile = 0.8 // low enough that the caps bind for some units
	q.Caps = nil
	rows, caps, ok, err := w.CubeCapped(q, percentile)
	if err != nil || !ok {
		t.Fatalf("%v %s: cube with caps ok=%v err=%v", q.Breakdown, q.Timezone, ok, err)
	}
	want, err := w.WinsorCaps(context.Background(), q, percentile)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, caps, cmpopts.EquateApprox(1e-12, 0)); d != "" || caps.Revenue == 0 {
		t.Errorf("%v %s: caps from the cube differ from WinsorCaps (-want +got):\n%s", q.Breakdown, q.Timezone, d)
	}
	q.Caps = &want
	raw, err := w.RawGroupMetrics(q)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(raw, rows, cmpopts.EquateApprox(1e-12, 1e-9)); d != "" {
		t.Errorf("%v %s: capped sums from the cube differ from the raw path (-raw +cube):\n%s", q.Breakdown, q.Timezone, d)
	}
}

// customEventsMatch holds CustomEvents, which looks the fired visitors up
// in the rollup's copy, to the statement that looks them up in the
// assignments.
func customEventsMatch(t *testing.T, w *warehouse.Warehouse, q warehouse.MetricsQuery) {
	t.Helper()
	got, err := w.CustomEvents(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	want, err := w.AssignmentsCustomEvents(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("no custom events in the population")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s..%s %s: custom events from the rollup differ (-assignments +rollup):\n%s", q.From, q.To, q.Timezone, d)
	}
}

// TestRollupCopyCatchesUpWithNewOrders: orders and custom events written
// after the copy's build name visitors the build did not flag (and orders
// create no rollup rows, so these visitors are not in S either); the cube,
// its caps and the custom events still equal the raw path's, with the new
// visitors listed in the statement and, past the list's limit, asked for.
func TestRollupCopyCatchesUpWithNewOrders(t *testing.T) {
	defer warehouse.SetCopyMinVisitors(0)()
	w := openTestWarehouse(t)
	rollupPopulation(t, w, 11, false)
	ctx := context.Background()
	if err := w.Conn().Exec(ctx, "OPTIMIZE TABLE agg_visitors FINAL"); err != nil {
		t.Fatal(err)
	}
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "31", Timezone: "UTC", From: "2026-05-30", To: "2026-06-30",
		Basis: warehouse.BasisVisitors, Breakdown: []warehouse.Dimension{"device"}}
	if _, _, ok, err := w.CubeCapped(q, 0.8); err != nil || !ok { // writes the copy
		t.Fatalf("cube: ok=%v err=%v", ok, err)
	}
	b := &warehouse.Batch{}
	when := at("2026-06-03 12:00:00")
	for n := 0; n < 600; n += 7 {
		vid := "v" + strconv.Itoa(n)
		b.Orders = append(b.Orders, warehouse.Order{ShopID: 1, ExperimentID: "31", OrderID: "late-" + vid, Version: 1,
			TestGroup: int16(n % 3), VisitorID: vid, Revenue: float64(50 + n), Cost: 10, Currency: "USD", CreatedAt: when})
		b.Events = append(b.Events, warehouse.Event{ShopID: 1, ExperimentID: "31", EventID: "late-c-" + vid, SessionID: vid + "-s0",
			VisitorID: vid, EventType: "lift:custom_event:signup", CustomName: "signup", CreatedAt: when, ReceivedAt: when})
	}
	if err := w.Insert(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, listed := range []int{1000, 2} {
		t.Run(fmt.Sprintf("listed up to %d", listed), func(t *testing.T) {
			defer warehouse.SetMaxListedVisitors(listed)()
			fast, ok, err := w.RollupGroupMetrics(q)
			if err != nil || !ok {
				t.Fatalf("rollup ok=%v err=%v", ok, err)
			}
			capped := q
			capped.Caps = &warehouse.Caps{Revenue: 120, Profit: 80}
			raw, err := w.RawGroupMetrics(q)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(raw, fast, cmpopts.EquateApprox(1e-12, 1e-9)); d != "" {
				t.Errorf("rollup differs from the raw path (-raw +rollup):\n%s", d)
			}
			cubeMatchesWinsorCaps(t, w, q)
			all := q
			all.Breakdown = nil
			customEventsMatch(t, w, all)
		})
	}
}

// TestRollupBaseFollowsItsParts: once a copy is built, the base is found
// from the copy's record without reading the base's rows, and it is the
// same base a count of every part gives: while the copied part is active,
// beside new parts, and after a merge has replaced it.
func TestRollupBaseFollowsItsParts(t *testing.T) {
	defer warehouse.SetCopyMinVisitors(0)()
	w := openTestWarehouse(t)
	rollupPopulation(t, w, 13, true)
	startMerges := stopMerges(t, w, "agg_visitors") // the parts stay as the test makes them
	ctx := context.Background()
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "31", Timezone: "UTC", From: "2026-05-30", To: "2026-06-30",
		Basis: warehouse.BasisVisitors}
	counted := func() (part string, rows, others uint64) {
		t.Helper()
		r, err := w.Conn().Query(ctx, `SELECT _part, toUInt64(count()) FROM agg_visitors
			WHERE shop_id = 1 AND experiment_id = '31' GROUP BY _part`)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for r.Next() {
			var p string
			var n uint64
			if err := r.Scan(&p, &n); err != nil {
				t.Fatal(err)
			}
			if n > rows || (n == rows && p < part) {
				part, rows, others = p, n, others+rows
			} else {
				others += n
			}
		}
		return part, rows, others
	}
	check := func(when string) (part string, others, build uint64) {
		t.Helper()
		part, rows, others, build, err := w.RollupBase(q)
		if err != nil {
			t.Fatal(err)
		}
		wantPart, wantRows, wantOthers := counted()
		if part != wantPart || rows != wantRows || others != wantOthers {
			t.Errorf("%s: base %s (%d rows, %d beside), counting every part gives %s (%d rows, %d beside)",
				when, part, rows, others, wantPart, wantRows, wantOthers)
		}
		// The build is the base's copy's first finished build, 0 before one.
		var wantBuild uint64
		if err := w.Conn().QueryRow(ctx, `SELECT min(build) FROM agg_visitors_copy_builds
			WHERE shop_id = 1 AND experiment_id = '31' AND source_part = ?`, part).Scan(&wantBuild); err != nil {
			t.Fatal(err)
		}
		if build != wantBuild {
			t.Errorf("%s: base %s with build %d, its copy's first build is %d", when, part, build, wantBuild)
		}
		return part, others, build
	}
	first, besideFirst, _ := check("before any copy")
	if _, ok, err := w.RollupGroupMetrics(q); err != nil || !ok { // writes the copy of first
		t.Fatalf("rollup: ok=%v err=%v", ok, err)
	}
	if _, _, build := check("with the copy"); build == 0 {
		t.Error("with the copy the base has no build")
	}
	when := at("2026-06-04 12:00:00")
	b := &warehouse.Batch{}
	for n := 0; n < 40; n++ {
		vid := "late-" + strconv.Itoa(n)
		b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: 1, ExperimentID: "31", VisitorID: vid,
			AssignmentID: vid + "-a", SessionID: vid + "-s", TestGroup: int16(n % 2), Device: "mobile", Country: "US",
			VisitorType: "new", AssignedAt: when, ReceivedAt: when})
	}
	if err := w.Insert(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got, beside, _ := check("beside a new part"); got != first || beside != besideFirst+40 {
		t.Errorf("beside a new part: base %s with %d rows beside, want %s with %d", got, beside, first, besideFirst+40)
	}
	startMerges()
	mergeToOnePart(t, w, "agg_visitors")
	if got, beside, _ := check("after a merge"); got == first || beside != 0 {
		t.Errorf("after a merge: base %s with %d rows beside, want the merged part (not %s) alone", got, beside, first)
	}
}

// stopMerges stops ClickHouse's background merges of table, which would
// otherwise replace parts under a test that names them (a merge that picks
// the base between a read and the next one), and returns what starts them
// again.
func stopMerges(t *testing.T, w *warehouse.Warehouse, table string) (start func()) {
	t.Helper()
	if err := w.Conn().Exec(context.Background(), "SYSTEM STOP MERGES "+table); err != nil {
		t.Fatal(err)
	}
	// A merge already running finishes after the stop: on a loaded box one
	// took the base away after a test chose it (the full suite once failed
	// TestRollupDropsCopiesOfGoneParts so). Wait until none runs.
	for deadline := time.Now().Add(30 * time.Second); ; {
		var running uint64
		if err := w.Conn().QueryRow(context.Background(), "SELECT count() FROM system.merges WHERE database = currentDatabase() AND table = ?",
			table).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a merge of %s still runs after 30 s", table)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return func() {
		t.Helper()
		if err := w.Conn().Exec(context.Background(), "SYSTEM START MERGES "+table); err != nil {
			t.Fatal(err)
		}
	}
}

// mergeToOnePart merges table into one part. OPTIMIZE does nothing while a
// background merge holds some of the parts (an insert may have started
// one), so it is repeated until one part is left.
func mergeToOnePart(t *testing.T, w *warehouse.Warehouse, table string) {
	t.Helper()
	ctx := context.Background()
	for try := 0; ; try++ {
		if err := w.Conn().Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			t.Fatal(err)
		}
		var parts uint64
		if err := w.Conn().QueryRow(ctx, `SELECT toUInt64(count()) FROM system.parts
			WHERE database = currentDatabase() AND table = ? AND active`, table).Scan(&parts); err != nil {
			t.Fatal(err)
		}
		if parts == 1 {
			return
		}
		if try == 50 {
			t.Fatalf("%s still in %d parts after %d OPTIMIZE FINAL", table, parts, try+1)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRollupDeclinesActivityOutsideTheWindow: a window that leaves some of
// the test's activity out is answered by the raw path, which filters each
// row by its local date; GroupMetrics still gives the raw numbers.
func TestRollupDeclinesActivityOutsideTheWindow(t *testing.T) {
	w := openTestWarehouse(t)
	rollupPopulation(t, w, 3, true)
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "31", Timezone: "UTC", From: "2026-06-02", To: "2026-06-03",
		Basis: warehouse.BasisVisitors}
	if _, ok, err := w.RollupGroupMetrics(q); err != nil || ok {
		t.Fatalf("rollup over a narrow window: ok=%v err=%v, want declined", ok, err)
	}
	got, err := w.GroupMetrics(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := w.RawGroupMetrics(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 || !cmp.Equal(raw, got) {
		t.Errorf("GroupMetrics over a narrow window = %+v, raw path %+v", got, raw)
	}
}

// TestRollupDeclinesAnEmptyTest: a test without a visitor has no rollup
// rows; GroupMetrics answers it (no rows) instead of failing.
func TestRollupDeclinesAnEmptyTest(t *testing.T) {
	w := openTestWarehouse(t)
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "404", Timezone: "UTC", From: "2026-06-01", To: "2026-06-30",
		Basis: warehouse.BasisVisitors}
	if _, ok, err := w.RollupGroupMetrics(q); err != nil || ok {
		t.Fatalf("rollup of an empty test: ok=%v err=%v, want declined", ok, err)
	}
	rows, err := w.GroupMetrics(context.Background(), q)
	if err != nil || len(rows) != 0 {
		t.Fatalf("GroupMetrics of an empty test = %v, %v; want no rows", rows, err)
	}
}

// TestRollupDropsCopiesOfGoneParts: a finalized copy whose source part
// ClickHouse no longer lists is dropped; the copy of a listed part stays.
func TestRollupDropsCopiesOfGoneParts(t *testing.T) {
	defer warehouse.SetCopyMinVisitors(0)()
	w := openTestWarehouse(t)
	rollupPopulation(t, w, 5, true)
	// A merge taking the base between its choice and the copy's write would
	// leave the copy empty (the write reads active parts only): correct for
	// reads, whose S then holds every visitor, but not what this test needs.
	stopMerges(t, w, "agg_visitors")
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "31", Timezone: "UTC", From: "2026-05-30", To: "2026-06-30",
		Basis: warehouse.BasisVisitors}
	if _, ok, err := w.RollupGroupMetrics(q); err != nil || !ok {
		t.Fatalf("rollup: ok=%v err=%v", ok, err)
	}
	ctx := context.Background()
	if err := w.Conn().Exec(ctx, `INSERT INTO agg_visitors_copy (shop_id, experiment_id, source_part, build, vid)
		SELECT toInt64(1), '31', 'all_999999_999999_0', toUInt64(1), toUInt64(42)`); err != nil {
		t.Fatal(err)
	}
	if err := w.DropGoneCopies(); err != nil {
		t.Fatal(err)
	}
	var gone, kept uint64
	if err := w.Conn().QueryRow(ctx, `SELECT countIf(source_part = 'all_999999_999999_0'), countIf(source_part != 'all_999999_999999_0')
		FROM agg_visitors_copy`).Scan(&gone, &kept); err != nil {
		t.Fatal(err)
	}
	if gone != 0 || kept == 0 {
		t.Errorf("after dropping gone copies: %d rows of the gone part, %d of the listed one; want 0 and some", gone, kept)
	}
}

// Reads that meet a base without a copy at once write it once between
// them, and all answer from it.
func TestRollupCopyWrittenOnceForConcurrentReads(t *testing.T) {
	defer warehouse.SetCopyMinVisitors(0)()
	w := openTestWarehouse(t)
	rollupPopulation(t, w, 21, true)
	stopMerges(t, w, "agg_visitors") // a merge would make a second base, and rightly a second copy
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "31", Timezone: "UTC", From: "2026-05-30", To: "2026-06-30",
		Basis: warehouse.BasisVisitors}
	want, err := w.RawGroupMetrics(q)
	if err != nil {
		t.Fatal(err)
	}
	const readers = 6
	got := make([][]warehouse.GroupRow, readers)
	errs := make([]error, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			var ok bool
			got[i], ok, errs[i] = w.RollupGroupMetrics(q)
			if errs[i] == nil && !ok {
				errs[i] = fmt.Errorf("the rollup declined")
			}
		})
	}
	wg.Wait()
	for i := range readers {
		if errs[i] != nil {
			t.Fatalf("reader %d: %v", i, errs[i])
		}
		if diff := cmp.Diff(want, got[i], cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("reader %d differs from the raw path (-raw +rollup):\n%s", i, diff)
		}
	}
	var builds, parts uint64
	if err := w.Conn().QueryRow(context.Background(), `SELECT count(), uniqExact(source_part) FROM agg_visitors_copy_builds
		WHERE shop_id = 1 AND experiment_id = '31'`).Scan(&builds, &parts); err != nil {
		t.Fatal(err)
	}
	if builds != 1 || parts != 1 {
		t.Errorf("%d concurrent reads wrote %d builds of %d parts, want 1 of 1", readers, builds, parts)
	}
}
