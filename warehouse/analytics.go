package warehouse

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"golang.org/x/sync/errgroup"

	"github.com/liftab/lift/results"
)

// The session analytics port (results.AnalyticsWarehouse): what the admin
// panel's analytics read beyond GroupMetrics. Visitors, orders and revenue
// are never computed here: results reads them through GroupMetrics, the one
// statement snapshots and exports share, so every surface agrees.

// The Warehouse is the session analytics port.
var _ results.AnalyticsWarehouse = (*Warehouse)(nil)

// storewideVid hashes a visitor id as agg_storewide_events stored it
// (clickhouse/0541), so the assignments side joins that table's rows.
func storewideVid(col string) string { return "cityHash64(" + col + ")" }

// analyticsAssignedSQL is one row per visitor the test assigned in the
// window (first assignment wins; bots and excluded visitors dropped, as
// GroupMetrics does), narrowed by the audience filter, with its group.
// Every condition is tested on each row inside one argMax, so the winning
// row's verdict is its group or -1: one numeric aggregate per visitor
// instead of an argMax per column (strings among them), about half the
// work on the bench test's million visitors.
func analyticsAssignedSQL(f results.AudienceFilter, part int) string {
	keep := []string{"is_bot = 0", "device != 'bot'", inWindow("assigned_at")}
	if f.Device != "" {
		keep = append(keep, "device = @device")
	}
	if len(f.Countries) > 0 {
		keep = append(keep, "has(@countries, upper(country))")
	}
	if f.VisitorType != "" {
		keep = append(keep, "visitor_type = @vtype")
	}
	return `SELECT ` + storewideVid("visitor_id") + ` AS vid,
		argMax(if(` + strings.Join(keep, " AND ") + `, test_group, toInt16(-1)), version) AS a_group
	FROM {db}.assignments
	WHERE shop_id = @shop AND experiment_id = @exp AND ` + inPart(storewideVid("visitor_id"), part) + `
	GROUP BY vid
	HAVING a_group >= 0`
}

// storewideParts is how many statements StorewideActivity splits its
// visitors into, by their hashed id, run at once and added up (each
// visitor and its events are in one part, so the distinct counts add).
// ClickHouse 18.16 sizes max_threads by the physical cores it counts, one
// on this machine, so one statement used one of the two cores: its million
// visitors' join took 2.6 s alone, the two halves at once 1.8 s (bench
// database, clickhouse-client, quiet machine). Current ClickHouse spreads
// each half over its threads as it did the whole.
const storewideParts = 2

// inPart keeps the rows of part (0 ≤ part < storewideParts) by a hashed
// visitor id.
func inPart(vid string, part int) string {
	return fmt.Sprintf("%s %% %d = %d", vid, storewideParts, part)
}

// storewideActivitySQL counts every store event of the test's visitors in
// the window, whatever test (if any) the event carries. It reads
// agg_storewide_events (clickhouse/0540): the shop's product views,
// add-to-carts and started checkouts of real visitors, ids already hashed,
// about a tenth of its events. One event is one row per test it carries
// (and a replay may not be folded yet), so events count as distinct
// (visitor, event) pairs. Per group, the units that did something are the
// distinct visitors and the events the distinct pairs: one set per group
// rather than a set per visitor. The rows probe the assigned visitors'
// hash table (one row per visitor there; ALL, because current
// ClickHouse's ANY INNER JOIN keeps one left row per key too). A 64-bit
// hash collision among a test's visitors or events is out of reach.
//
// With product ids the visitors are the per-test view's scoped ones (those
// who viewed one of the products: groupSumsSQL's x_viewed), not every
// assigned visitor, so the funnel's steps and its base are one population.
// starters_ordered counts the checkout starters whose own order counts for
// their group (scoped: an order with one of the products), so that the
// journey's reached-checkout step is the union of starters and buyers. The
// buyers are a set the condition probes (built once, a few thousand ids),
// not a join: joining every activity row to them took the bench test's cold
// storewide view from 2.0 s to 3.4 s.
func storewideActivitySQL(q results.MetricsQuery, f results.AudienceFilter, part int) string {
	products, scoped, scopedOrders := "", "", ""
	if len(q.ProductIDs) > 0 {
		products = " AND hasAny(product_ids, @products)"
		scoped = ` AND vid IN (
		SELECT ` + storewideVid("visitor_id") + ` FROM {db}.agg_product_activity
		WHERE shop_id = @shop AND experiment_id = @exp AND is_bot = 0 AND ` + inWindow("bucket") + `
			AND has(@products, product_id) AND product_views + page_views > 0)`
		scopedOrders = " AND hasAny(o_lp, @products)"
	}
	return `SELECT a_group, toUInt64(uniqExactIf(vid, s_type = 1)) AS viewers, toUInt64(uniqExactIf(s_event, s_type = 1)) AS views,
	toUInt64(uniqExactIf(vid, s_type = 2)) AS adders, toUInt64(uniqExactIf(s_event, s_type = 2)) AS atcs,
	toUInt64(uniqExactIf(vid, s_type = 3)) AS starters, toUInt64(uniqExactIf(s_event, s_type = 3)) AS starts,
	toUInt64(uniqExactIf(vid, s_type = 3 AND vid IN (
		SELECT ` + storewideVid("o_named_vid") + ` FROM (` + latestOrdersSQL() + `)
		WHERE o_vid = o_named_vid` + scopedOrders + `))) AS starters_ordered
FROM (
	SELECT visitor_hash AS vid, cityHash64(visitor_hash, event_hash) AS s_event,
		toUInt8(indexOf(['product_viewed', 'product_added_to_cart', 'checkout_started'], event_type)) AS s_type
	FROM {db}.agg_storewide_events
	WHERE shop_id = @shop AND ` + inWindow("created_at") + products + ` AND ` + inPart("visitor_hash", part) + `) AS activity
ALL INNER JOIN (SELECT vid, a_group FROM (` + analyticsAssignedSQL(f, part) + `) WHERE 1` + scoped + `) AS assigned USING vid
GROUP BY a_group
ORDER BY a_group`
}

// StorewideActivity implements results.AnalyticsWarehouse: its
// storewideParts statements run at once, their rows added up by group.
func (w *Warehouse) StorewideActivity(ctx context.Context, q results.MetricsQuery, f results.AudienceFilter) ([]results.ActivityRow, error) {
	q.Breakdown = nil
	if err := validate(q); err != nil {
		return nil, fmt.Errorf("warehouse.StorewideActivity: %w", err)
	}
	parts := make([][]results.ActivityRow, storewideParts)
	g, gctx := errgroup.WithContext(ctx)
	for part := range parts {
		g.Go(func() (err error) {
			parts[part], err = w.storewidePart(gctx, q, f, part)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("warehouse.StorewideActivity %s: %w", q.ExperimentID, err)
	}
	return addActivity(parts), nil
}

// addActivity adds the parts' rows up by group, in group order.
func addActivity(parts [][]results.ActivityRow) []results.ActivityRow {
	at := map[int]int{} // group → its row in out
	var out []results.ActivityRow
	for _, rows := range parts {
		for _, r := range rows {
			if i, ok := at[r.TestGroup]; ok {
				sum := &out[i]
				sum.ProductViewers += r.ProductViewers
				sum.ProductViews += r.ProductViews
				sum.CartAdders += r.CartAdders
				sum.AddToCarts += r.AddToCarts
				sum.CheckoutStarter += r.CheckoutStarter
				sum.CheckoutStarts += r.CheckoutStarts
				sum.StartersOrdered += r.StartersOrdered
				continue
			}
			at[r.TestGroup] = len(out)
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b results.ActivityRow) int { return a.TestGroup - b.TestGroup })
	return out
}

func (w *Warehouse) storewidePart(ctx context.Context, q results.MetricsQuery, f results.AudienceFilter, part int) ([]results.ActivityRow, error) {
	rows, err := w.conn.Query(ctx, w.render(storewideActivitySQL(q, f, part)), analyticsArgs(q, f)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []results.ActivityRow
	for rows.Next() {
		var g int16
		var c [7]uint64
		if err := rows.Scan(&g, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6]); err != nil {
			return nil, err
		}
		out = append(out, results.ActivityRow{TestGroup: int(g), ProductViewers: int64(c[0]), ProductViews: int64(c[1]),
			CartAdders: int64(c[2]), AddToCarts: int64(c[3]), CheckoutStarter: int64(c[4]), CheckoutStarts: int64(c[5]),
			StartersOrdered: int64(c[6])})
	}
	return out, rows.Err()
}

// analyticsArgs are args(q) and the audience filter's parameters.
func analyticsArgs(q results.MetricsQuery, f results.AudienceFilter) []any {
	countries := f.Countries
	if countries == nil {
		countries = []string{}
	}
	return append(args(q), clickhouse.Named("device", f.Device), clickhouse.Named("countries", countries),
		clickhouse.Named("vtype", f.VisitorType))
}

// dataVersionSQL is, per table of the test's key range, a tag, its row
// count and its newest moment (receipt, or the order version): any insert
// raises one of them, and an erase (reset analytics) lowers a count. The
// test's events are counted in agg_event_activity, which its view feeds
// with every events row (its events column counts them, copies included,
// and merges add rows up without losing any): a tenth of the rows of events
// to read, on every request, warm ones included. With storewide, the
// shop's rows of agg_storewide_events count too: all the storewide views
// read beyond the test's own tables. (A merge folding replayed copies
// lowers that count; the next request then recomputes, needlessly but
// correctly.)
func dataVersionSQL(storewide bool) string {
	part := func(tag int, table, rows, newest, where string) string {
		return `SELECT toUInt8(` + fmt.Sprint(tag) + `) AS v_tag, toUInt64(` + rows + `) AS v_rows, toUInt64(max(` + newest + `)) AS v_newest
		FROM {db}.` + table + ` WHERE shop_id = @shop` + where
	}
	test := " AND experiment_id = @exp"
	parts := []string{
		part(1, "agg_event_activity", "sum(events)", "toUInt32(bucket)", test),
		part(2, "assignments", "count()", "toUInt32(received_at)", test),
		part(3, "orders", "count()", "version", test),
		part(4, "sessions", "count()", "toUInt32(seen_at)", test),
		part(5, "page_views", "count()", "toUInt32(viewed_at)", test),
	}
	if storewide {
		parts = append(parts, part(6, "agg_storewide_events", "count()", "toUInt32(received_at)", ""))
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

// DataVersion implements results.AnalyticsWarehouse.
func (w *Warehouse) DataVersion(ctx context.Context, shopID int64, experimentID string, storewide bool) (string, error) {
	rows, err := w.conn.Query(ctx, w.render(dataVersionSQL(storewide)),
		clickhouse.Named("shop", shopID), clickhouse.Named("exp", experimentID))
	if err != nil {
		return "", fmt.Errorf("warehouse.DataVersion %s: %w", experimentID, err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var tag uint8
		var n, newest uint64
		if err := rows.Scan(&tag, &n, &newest); err != nil {
			return "", fmt.Errorf("warehouse.DataVersion %s: %w", experimentID, err)
		}
		parts = append(parts, fmt.Sprintf("%d:%d:%d", tag, n, newest))
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("warehouse.DataVersion %s: %w", experimentID, err)
	}
	// UNION ALL returns its parts in any order.
	sort.Strings(parts)
	return strings.Join(parts, ","), nil
}
