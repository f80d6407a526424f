package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
		Short: "Snapshot and 2-dimension breakdown times for a test with 1M visitors and 10M events",
		Long: `Loads a synthetic two-group test straight into a scratch ClickHouse database with batched
native inserts (not over HTTP): --visitors visitors with their assignments, sessions, product
page views and orders, and --events-per-visitor behavioral events each (10M by default). Then it
times, --rounds times each, the snapshot computation (whole-run metrics per group, the device
breakdown, custom events and the statistics of all nine compared metrics) and a custom query's
warehouse work with a 2-dimension breakdown (device × country), and prints min and median. After
loading it merges the tables' parts (OPTIMIZE … FINAL), as a real test's days-old rows are.
Targets: snapshot under 2 s, 2-dimension breakdown under 3 s. The database is dropped
at the end unless --keep.`,
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
	admin, err := warehouse.Open(ctx, warehouse.Config{Addr: cfg.ClickHouse.Addr, Username: cfg.ClickHouse.Username, Password: cfg.ClickHouse.Password})
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

	start := time.Now().UTC().Add(-14 * 24 * time.Hour).Truncate(time.Hour)
	var events uint64
	if err := wh.Conn().QueryRow(ctx, "SELECT count() FROM events").Scan(&events); err != nil {
		return err
	}
	if events == 0 {
		fmt.Fprintf(out, "loading %d visitors, %d events into %s …\n", o.visitors, o.visitors*o.eventsPer, chDB)
		t0 := time.Now()
		rows, err := o.load(ctx, wh, start)
		if err != nil {
			return err
		}
		d := time.Since(t0)
		fmt.Fprintf(out, "loaded %d rows in %s (%.0f rows/s)\n", rows, d.Round(time.Millisecond), float64(rows)/d.Seconds())
		// A real test's rows arrive over days and are merged long before
		// anyone reads them; freshly bulk-loaded parts are not. Merge now so
		// the timings measure the queries, not background merges.
		t0 = time.Now()
		for _, table := range benchTables {
			if err := wh.Conn().Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
				return fmt.Errorf("optimize %s: %w", table, err)
			}
		}
		fmt.Fprintf(out, "merged parts in %s\n", time.Since(t0).Round(time.Millisecond))
	} else {
		fmt.Fprintf(out, "reusing %s (%d events)\n", chDB, events)
	}
	if err := o.report(ctx, out, wh, chDB); err != nil {
		return err
	}

	shop := &experiment.Shop{ID: 1, Timezone: "UTC", Currency: "USD"}
	test := &experiment.Test{ID: benchTestID, Status: experiment.StatusActive, StartedAt: &start, CreatedAt: start,
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}}}
	snapshots := results.New(results.Config{Warehouse: wh})
	now := time.Now().UTC()
	snapshot := func() error {
		_, err := snapshots.ComputeSnapshot(ctx, shop, test, now, false)
		return err
	}
	window := results.Window(shop, test, now)
	query := warehouse.MetricsQuery{ShopID: 1, ExperimentID: strconv.Itoa(benchTestID), Timezone: "UTC",
		From: window.GTE, To: window.LTE, Basis: warehouse.BasisVisitors, Breakdown: []warehouse.Dimension{"device", "country"}}
	breakdown := func() error {
		if _, err := wh.GroupMetrics(ctx, query); err != nil {
			return err
		}
		_, err := wh.CustomEvents(ctx, query)
		return err
	}
	for _, c := range []struct {
		name   string
		target time.Duration
		fn     func() error
	}{
		{"snapshot", 2 * time.Second, snapshot},
		{"breakdown device×country", 3 * time.Second, breakdown},
	} {
		var times []time.Duration
		for range o.rounds {
			t0 := time.Now()
			if err := c.fn(); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			times = append(times, time.Since(t0))
		}
		slices.Sort(times)
		verdict := "met"
		if times[len(times)/2] >= c.target {
			verdict = "MISSED"
		}
		fmt.Fprintf(out, "%-26s min %8s  median %8s  (target < %s: %s)\n", c.name, times[0].Round(time.Millisecond),
			times[len(times)/2].Round(time.Millisecond), c.target, verdict)
	}
	if o.keep {
		fmt.Fprintf(out, "kept database %s (reuse with --database %s)\n", chDB, chDB)
	}
	return nil
}

var benchTables = []string{"assignments", "events", "sessions", "page_views", "orders"}

// report prints what the scratch database holds.
func (o *resultsBench) report(ctx context.Context, out io.Writer, wh *warehouse.Warehouse, db string) error {
	for _, table := range benchTables {
		var n uint64
		if err := wh.Conn().QueryRow(ctx, "SELECT count() FROM "+table).Scan(&n); err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-12s %11d rows\n", table, n)
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
