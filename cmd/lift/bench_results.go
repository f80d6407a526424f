package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/ingest"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/warehouse"
)

var _ = registerBench(newResultsBenchCmd)

type resultsBench struct {
	visitors       int
	eventsPer      int
	rounds         int
	keep           bool
	database       string
	insertParallel int
	progress       io.Writer // a terminal gets a progress line
}

func newResultsBenchCmd() *cobra.Command {
	var o resultsBench
	cmd := &cobra.Command{
		Use:   "results",
		Args:  cobra.NoArgs,
		Short: "Snapshot and 2-dimension breakdown times for a test with 1M visitors and 10M events",
		Long: `Loads a synthetic two-group test straight into a scratch ClickHouse database with batched
native inserts (not over HTTP): --visitors visitors with their assignments, sessions, product
page views and orders, and --events-per-visitor behavioral events each (10M by default), then
merges the tables' parts (OPTIMIZE … FINAL), as a real test's days-old rows are. It then prints,
in this order:
  1. the first snapshot after a new base part of the visitor rollup, once (it writes the part's
     finalized copy);
  2. min and median of --rounds runs each of the snapshot computation (whole-run metrics per
     group, the device breakdown, custom events, the statistics of all nine compared metrics),
     a custom query with a 2-dimension breakdown (device × country) as the worker computes it,
     and ClickHouse's bare scan of the same events (SELECT event_type, count() … GROUP BY
     event_type), then each median as a multiple of the bare scan (target ≤ 3×);
  3. one more snapshot's peak memory: the high-water resident set of this process (which
     computes the snapshot as the worker does) and ClickHouse's peak per query (target < 500 MB);
  4. each session analytics view cold (empty cache) and warm (targets 3 s and 1 s);
  5. a live test: --rounds snapshots with 1% of the visitors' rollup rows in a part beside the
     base, as before ClickHouse merges a running test's new rows (not a target).
Targets: snapshot under 2 s, 2-dimension breakdown under 3 s. The database is dropped at the
end unless --keep.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.Flags().IntVar(&o.visitors, "visitors", 1_000_000, "visitors of the synthetic test")
	cmd.Flags().IntVar(&o.eventsPer, "events-per-visitor", 10, "behavioral events per visitor")
	cmd.Flags().IntVar(&o.rounds, "rounds", 3, "timed runs of each computation")
	cmd.Flags().IntVar(&o.insertParallel, "insert-parallel", 2, "concurrent insert streams while loading")
	cmd.Flags().BoolVar(&o.keep, "keep", false, "keep the scratch database (its name is printed)")
	cmd.Flags().StringVar(&o.database, "database", "", "use this database: load it when empty, reuse it when loaded")
	config.BindFlags(cmd.Flags())
	return cmd
}

// benchTestID is the synthetic test's id in the scratch database.
const benchTestID = 4242

func (o *resultsBench) run(cmd *cobra.Command) error {
	if o.visitors < 100 || o.eventsPer < 1 || o.rounds < 1 || o.insertParallel < 1 {
		return fmt.Errorf("bench results: --visitors ≥ 100, --events-per-visitor, --rounds and --insert-parallel ≥ 1")
	}
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	o.progress = out
	cfg, err := localConfig(cmd, false)
	if err != nil {
		return err
	}
	chDB := o.database
	if chDB == "" {
		chDB = "lift_bench_results_" + randomHex(4)
	}
	admin, err := warehouse.Open(ctx, warehouse.Config{Addr: cfg.ClickHouse.Addr, Username: cfg.ClickHouse.Username, Password: cfg.ClickHouse.Password,
		ReadTimeout: warehouse.MigrateReadTimeout})
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := warehouse.Migrate(ctx, admin.Conn(), chDB, ""); err != nil {
		return err
	}
	if !o.keep && o.database == "" {
		defer admin.Conn().Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+chDB)
	}
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: cfg.ClickHouse.Addr, Database: chDB, Username: cfg.ClickHouse.Username,
		Password: cfg.ClickHouse.Password, ReadTimeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer wh.Close()

	start, err := o.prepare(ctx, out, wh, chDB)
	if err != nil {
		return err
	}
	if err := o.report(ctx, out, wh, chDB); err != nil {
		return err
	}

	shop := &experiment.Shop{ID: 1, Timezone: "UTC", Currency: "USD"}
	test := &experiment.Test{ID: benchTestID, Status: experiment.StatusActive, StartedAt: &start, CreatedAt: start,
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}}}
	snapshots := results.New(results.Config{Warehouse: wh})
	now := time.Now().UTC()
	snapshotIn := func(ctx context.Context) error {
		_, err := snapshots.ComputeSnapshot(ctx, shop, test, now, false)
		return err
	}
	snapshot := func() error { return snapshotIn(ctx) }
	window := results.Window(shop, test, now)
	// The breakdown is the custom query a merchant runs (POST
	// /tests/{id}/results/queries), computed as the worker computes it:
	// winsorizing caps, capped sums per cell and custom events.
	spec := results.QuerySpec{DateRange: window, Breakdown: []string{"device", "country"},
		SampleBasis: string(warehouse.BasisVisitors), MetricSet: "core"}
	breakdown := func() error {
		_, err := snapshots.ComputeQuery(ctx, shop, test, spec, now)
		return err
	}
	bare := func() error { return drain(ctx, wh, bareScanSQL) }
	// ClickHouse sizes max_threads by the physical cores it detects (one
	// on some 2-vCPU machines, two on others): the bare scan halves with
	// two, the snapshot's small statements hardly move, so the ratios
	// depend on it and the line says which it was.
	var threads string
	if err := wh.Conn().QueryRow(ctx, "SELECT value FROM system.settings WHERE name = 'max_threads'").Scan(&threads); err != nil {
		return err
	}
	fmt.Fprintf(out, "load before timing: %s; ClickHouse max_threads %s\n", loadAverage(), threads)
	if err := o.firstSnapshot(ctx, out, wh, snapshot); err != nil {
		return err
	}
	scan, err := o.timeTargets(out, snapshot, breakdown, bare)
	if err != nil {
		return err
	}
	if err := o.reportMemory(ctx, out, wh, chDB, snapshotIn); err != nil {
		return err
	}
	if err := benchAnalytics(ctx, out, wh, shop, test, window.GTE, window.LTE); err != nil {
		return err
	}
	if err := liveSnapshot(ctx, out, wh, chDB, o.rounds, scan, snapshot); err != nil {
		return err
	}
	fmt.Fprintf(out, "load after timing: %s\n", loadAverage())
	if o.keep {
		fmt.Fprintf(out, "kept database %s (reuse with --database %s)\n", chDB, chDB)
	}
	return nil
}

// prepare loads the bench test into chDB, or reuses what a kept run left
// there, and merges its parts; it returns when the test started.
func (o *resultsBench) prepare(ctx context.Context, out io.Writer, wh *warehouse.Warehouse, chDB string) (time.Time, error) {
	start := time.Now().UTC().Add(-14 * 24 * time.Hour).Truncate(time.Hour)
	var events uint64
	if err := wh.Conn().QueryRow(ctx, "SELECT count() FROM events").Scan(&events); err != nil {
		return time.Time{}, err
	}
	if events == 0 {
		fmt.Fprintf(out, "loading %d visitors, %d events into %s …\n", o.visitors, o.visitors*o.eventsPer, chDB)
		t0 := time.Now()
		rows, err := o.load(ctx, wh, start)
		if err != nil {
			return time.Time{}, err
		}
		d := time.Since(t0)
		fmt.Fprintf(out, "loaded %d rows in %s (%.0f rows/s)\n", rows, d.Round(time.Millisecond), float64(rows)/d.Seconds())
	} else {
		// The test started when its first visitor was assigned, not 14 days
		// before this run: a window from a later start would leave visitors
		// out (and the rollup would rightly decline it).
		var first time.Time
		if err := wh.Conn().QueryRow(ctx, "SELECT min(assigned_at) FROM assignments").Scan(&first); err != nil {
			return time.Time{}, err
		}
		start = first.UTC().Truncate(time.Hour)
		fmt.Fprintf(out, "reusing %s (%d events, test started %s)\n", chDB, events, start.Format(time.RFC3339))
	}
	// Merge now so the timings measure the queries on a test's rows as
	// ClickHouse keeps them once merged (most of a long test's rows are),
	// not background merges of the freshly loaded parts. A running test's
	// latest rows sit in newer parts beside the base: liveSnapshot times
	// that case at the end.
	t0 := time.Now()
	for _, table := range benchTables {
		if err := wh.Conn().Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			return time.Time{}, fmt.Errorf("optimize %s: %w", table, err)
		}
	}
	fmt.Fprintf(out, "merged parts in %s\n", time.Since(t0).Round(time.Millisecond))

	return start, nil
}

// timeTargets times rounds of the snapshot, the breakdown and the bare
// scan, prints each against its target and the ratios, and returns the
// bare scan's median.
func (o *resultsBench) timeTargets(out io.Writer, snapshot, breakdown, bare func() error) (time.Duration, error) {
	medians := map[string]time.Duration{}
	for _, c := range []struct {
		name   string
		target time.Duration
		fn     func() error
	}{
		{"snapshot", 2 * time.Second, snapshot},
		{"breakdown device×country", 3 * time.Second, breakdown},
		{"bare GROUP BY event_type", 0, bare},
	} {
		times, err := timeRounds(o.rounds, c.fn)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", c.name, err)
		}
		medians[c.name] = times[len(times)/2]
		verdict := ""
		if c.target > 0 {
			verdict = fmt.Sprintf("  (target < %s: %s)", c.target, metOrMissed(times[len(times)/2] < c.target))
		}
		fmt.Fprintf(out, "%-26s min %8s  median %8s%s\n", c.name, times[0].Round(time.Millisecond),
			times[len(times)/2].Round(time.Millisecond), verdict)
	}
	scan := medians["bare GROUP BY event_type"]
	for _, name := range []string{"snapshot", "breakdown device×country"} {
		ratio := float64(medians[name]) / float64(scan)
		fmt.Fprintf(out, "%-26s %6.1f× the bare scan (medians; target ≤ 3×: %s)\n", name, ratio, metOrMissed(ratio <= 3))
	}
	return scan, nil
}

var benchTables = []string{"assignments", "events", "sessions", "page_views", "orders",
	"agg_event_activity", "agg_product_activity", "agg_custom_events", "agg_session_pages", "agg_visitors",
	"agg_storewide_events"}

// firstSnapshot times a snapshot that first writes the finalized copy of
// the rollup's base part, as the first read after ClickHouse merges a new
// base does (warehouse/results_rollup_final.go); the timed rounds after it
// read the copy, as every later snapshot until the next such merge does.
func (o *resultsBench) firstSnapshot(ctx context.Context, out io.Writer, wh *warehouse.Warehouse, snapshot func() error) error {
	for _, table := range []string{"agg_visitors_copy", "agg_visitors_copy_builds"} {
		if err := wh.Conn().Exec(ctx, "TRUNCATE TABLE "+table); err != nil {
			return fmt.Errorf("truncate %s: %w", table, err)
		}
	}
	t0 := time.Now()
	if err := snapshot(); err != nil {
		return fmt.Errorf("first snapshot: %w", err)
	}
	fmt.Fprintf(out, "%-26s %8s  (once per new base part: writes its finalized copy)\n", "first snapshot",
		time.Since(t0).Round(time.Millisecond))
	return nil
}

// report prints what the scratch database holds.
func (o *resultsBench) report(ctx context.Context, out io.Writer, wh *warehouse.Warehouse, db string) error {
	for _, table := range benchTables {
		var n uint64
		if err := wh.Conn().QueryRow(ctx, "SELECT count() FROM "+table).Scan(&n); err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-20s %11d rows\n", table, n)
	}
	return nil
}

// load generates the synthetic test in chunks of visitors and inserts each
// chunk as one batch per table, several streams at once. The variant
// converts 10% better; devices, countries, sources and sessions vary.
func (o *resultsBench) load(ctx context.Context, wh *warehouse.Warehouse, start time.Time) (int64, error) {
	const chunk = 10_000
	var rows, next, visitors atomic.Int64
	stop := startProgress(o.progress, "loading", "visitors", int64(o.visitors), time.Time{}, visitors.Load)
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, o.insertParallel)
	for w := range o.insertParallel {
		wg.Go(func() {
			var b warehouse.Batch
			for {
				first := int(next.Add(chunk)) - chunk
				if first >= o.visitors || ctx.Err() != nil {
					return
				}
				b.Reset()
				o.generate(&b, first, min(first+chunk, o.visitors), start)
				if err := wh.Insert(ctx, &b); err != nil {
					errs[w] = err
					return
				}
				rows.Add(int64(b.Len()))
				visitors.Add(int64(min(first+chunk, o.visitors) - first))
			}
		})
	}
	wg.Wait()
	return rows.Load(), errors.Join(errs...)
}

var (
	benchDevices   = []string{"desktop", "mobile", "mobile", "tablet"}
	benchCountries = []string{"US", "US", "GB", "DE", "FR", "CA", "AU", "NL", "JP", "BR"}
	benchSources   = []string{"", "", "google", "facebook", "newsletter"}
	benchPages     = []string{"/", "/collections/all", "/collections/new", "/pages/about", "/search"}
)

// generate appends visitors [from, to) to b.
func (o *resultsBench) generate(b *warehouse.Batch, from, to int, start time.Time) {
	exp := strconv.Itoa(benchTestID)
	span := time.Since(start)
	for n := from; n < to; n++ {
		rng := rand.New(rand.NewPCG(uint64(n), 42))
		vid := "bv-" + strconv.Itoa(n)
		group := int16(n % 2)
		at := start.Add(time.Duration(rng.Int64N(int64(span - time.Hour))))
		source := benchSources[rng.IntN(len(benchSources))]
		medium := utmMedium(source)
		device, country := benchDevices[rng.IntN(len(benchDevices))], benchCountries[rng.IntN(len(benchCountries))]
		sid := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: 1, ExperimentID: exp, VisitorID: vid,
			AssignmentID: vid, SessionID: sid, TestGroup: group, Reason: "random_split", Country: country, Device: device,
			VisitorType: "new", UTMSource: source, UTMMedium: medium, AssignedAt: at, ReceivedAt: at})
		loads := 1 + rng.IntN(4)
		for i := range loads {
			seen := at.Add(time.Duration(i*40) * time.Second)
			b.Sessions = append(b.Sessions, warehouse.Session{ShopID: 1, ExperimentID: exp, SessionID: sid,
				RecordID: vid + "-r" + strconv.Itoa(i), VisitorID: vid, SeenAt: seen, PagePath: benchPages[(n+i)%len(benchPages)],
				Device: device, Country: country, VisitorType: "new", UTMSource: source, UTMMedium: medium})
		}
		product := strconv.Itoa(1001 + rng.IntN(20))
		if loads > 1 {
			b.PageViews = append(b.PageViews, warehouse.PageView{ShopID: 1, ExperimentID: exp, ProductID: product,
				ViewID: vid + "-pv", SessionID: sid, VisitorID: vid, ViewedAt: at.Add(40 * time.Second)})
		}
		conv := 0.03
		if group == 1 {
			conv = 0.033
		}
		buys := rng.Float64() < conv
		for i := range o.eventsPer {
			typ, custom := "page_viewed", ""
			switch {
			case i == 1:
				typ = "product_viewed"
			case i == 2 && (buys || rng.Float64() < 0.1):
				typ = "product_added_to_cart"
			case i == 3 && buys:
				typ = "checkout_started"
			case i == 4 && buys:
				typ = "checkout_completed"
			case i == 5 && rng.Float64() < 0.05:
				typ, custom = ingest.CustomEventPrefix+"newsletter_signup", "newsletter_signup"
			}
			ts := at.Add(time.Duration(i*15) * time.Second)
			b.Events = append(b.Events, warehouse.Event{ShopID: 1, ExperimentID: exp, EventID: vid + "-e" + strconv.Itoa(i),
				ReceivedAt: ts, CreatedAt: ts, SessionID: sid, VisitorID: vid, EventType: typ, Source: "webpixel",
				PagePath: benchPages[i%len(benchPages)], ProductIDs: []string{product}, CustomName: custom})
		}
		if buys {
			revenue := 40 + rng.Float64()*80
			b.Orders = append(b.Orders, warehouse.Order{ShopID: 1, ExperimentID: exp, OrderID: strconv.Itoa(9_000_000 + n),
				Version: 1, TestGroup: group, VisitorID: vid, SessionID: sid, Revenue: revenue, Cost: revenue * 0.4,
				Currency: "USD", LineProductIDs: []string{product}, LineVariantIDs: []string{product + "0"},
				LineQuantities: []uint32{1}, LinePrices: []float64{revenue}, CreatedAt: at.Add(time.Minute), Source: "webhook"})
		}
	}
}

// bareScanSQL is the floor the results are compared with: ClickHouse
// reading one column of every event of the test and grouping it.
const bareScanSQL = "SELECT event_type, count() FROM events GROUP BY event_type"

func drain(ctx context.Context, wh *warehouse.Warehouse, sql string) error {
	rows, err := wh.Conn().Query(ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// timeRounds runs fn rounds times and returns the durations, sorted.
func timeRounds(rounds int, fn func() error) ([]time.Duration, error) {
	var times []time.Duration
	for range rounds {
		t0 := time.Now()
		if err := fn(); err != nil {
			return nil, err
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	return times, nil
}

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// loadAverage is the machine's 1, 5 and 15-minute load (the bench shares
// its cores with whatever else runs).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ") + fmt.Sprintf(" (%d cores)", runtime.NumCPU())
}

// reportMemory runs one more snapshot and prints its peak memory: this
// process's resident high-water mark over the snapshot (Linux VmHWM, reset
// first through /proc/self/clear_refs so loading does not count; the
// worker computes snapshots the same way, in process), and, from
// system.query_log (logged for this run only), ClickHouse's largest
// per-query peak and the CPU time of the snapshot's statements against the
// bare scan's: a ratio the other load on a shared machine barely moves.
func (o *resultsBench) reportMemory(ctx context.Context, out io.Writer, wh *warehouse.Warehouse, db string, snapshot func(context.Context) error) error {
	debug.FreeOSMemory()
	reset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	since := time.Now().Add(-time.Second)
	logged := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"log_queries": 1}))
	if err := snapshot(logged); err != nil {
		return fmt.Errorf("snapshot for memory: %w", err)
	}
	hwm := vmHWM()
	scope := "during the snapshot"
	if !reset {
		scope = "since the process started (could not reset it)"
	}
	fmt.Fprintf(out, "snapshot peak memory: this process %d MB resident high-water %s (target < 500 MB: %s)\n",
		hwm>>20, scope, metOrMissed(hwm > 0 && hwm < 500<<20))
	bareID := "lift-bench-bare-" + randomHex(4)
	if err := drain(clickhouse.Context(logged, clickhouse.WithQueryID(bareID)), wh, bareScanSQL); err != nil {
		return err
	}
	if err := wh.Conn().Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		return nil // no query log: the process figure stands alone
	}
	const cpu = "ProfileEvents.Values[indexOf(ProfileEvents.Names, 'OSCPUVirtualTimeMicroseconds')]"
	var peak, snapCPU, bareCPU, queries uint64
	var err error
	// The log is written asynchronously even after a flush: retry briefly.
	for try := 0; try < 5 && (err != nil || queries == 0 || bareCPU == 0); try++ {
		time.Sleep(time.Duration(try) * time.Second)
		err = wh.Conn().QueryRow(ctx, `SELECT toUInt64(maxIf(memory_usage, query_id != ?)), toUInt64(sumIf(`+cpu+`, query_id != ?)),
		toUInt64(sumIf(`+cpu+`, query_id = ?)), countIf(query_id != ?)
		FROM system.query_log
		WHERE type = 2 AND event_time >= ? AND (position(query, ?) > 0 OR query_id = ?)`,
			bareID, bareID, bareID, bareID, since.Truncate(time.Second), "`"+db+"`", bareID).Scan(&peak, &snapCPU, &bareCPU, &queries)
	}
	if err != nil || queries == 0 || bareCPU == 0 {
		fmt.Fprintf(out, "ClickHouse query log: no figures (%d queries logged, err %v)\n", queries, err)
		return nil
	}
	fmt.Fprintf(out, "ClickHouse during that snapshot: %d queries, %d MB peak per query, %.2f s CPU; bare scan %.2f s CPU (%.1f×)\n",
		queries, peak>>20, float64(snapCPU)/1e6, float64(bareCPU)/1e6, float64(snapCPU)/float64(bareCPU))
	return nil
}

// vmHWM is this process's peak resident set in bytes (0 if unknown).
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
