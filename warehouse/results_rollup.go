package warehouse

import (
	"context"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
)

// The visitor rollup path of GroupMetrics (docs/results.md, "Visitor
// rollup"). agg_visitors (clickhouse/0520) holds one row of merged states
// per test and visitor once ClickHouse has merged its parts; until then a
// visitor may have rows in several parts. Reading every row as its own
// visitor would count those twice, and grouping a million visitors again
// costs what the rollup exists to save. So a large test's read splits them:
//
//   - the base is the part holding most of the test's rows; its rows are
//     written once into a finalized copy and a cube (results_rollup_copy.go,
//     results_rollup_cube.go), which never change;
//   - S is every visitor with a row in any other part, read once per
//     GroupMetrics into Go and sent with each statement as the external
//     table s_vids, so that every statement and branch agrees on it;
//   - a visitor outside S is its copy row; a visitor in S is merged
//     (GROUP BY vid, -Merge) from whatever parts hold its rows when read.
//
// Each visitor is counted once whatever ClickHouse merges or inserts
// meanwhile: a visitor outside S is as it was when S was read, one in S as
// it is when its rows are read. (Deriving S inside each statement let two
// branches see two different S around a merge, and count visitors twice.)
// A small test (under copyMinVisitors) merges every visitor in one read.
//
// The rollup knows the visitors basis only, unscoped by products, without
// the landing page, and only visitors that name themselves: a query outside
// that, or whose test has activity outside its window, reads the raw path
// (results_sql.go), which gives the same numbers (results_rollup_test.go).

// rollupEligible reports whether the rollup can answer q with the facts f.
func rollupEligible(q MetricsQuery, f dataFacts) bool {
	if q.Basis != BasisVisitors || len(q.ProductIDs) > 0 || f.orphanSessions || f.orphanEvents {
		return false
	}
	return !hasDimension(q.Breakdown, "landing_page")
}

// rollupPartsSQL counts the test's rollup rows per part.
const rollupPartsSQL = `SELECT _part AS part, toUInt64(count()) AS n FROM {db}.agg_visitors
WHERE shop_id = @shop AND experiment_id = @exp GROUP BY part`

// rollupPartsBesideSQL counts them when the part of the test's latest copy
// is known: that part's rows are the copy's (a part never changes; a merge
// or a mutation writes a new one), so only the other parts are read (a
// filter on _part skips whole parts), and the known part is listed with
// its rows when it is still active. Counting the base's rows again read a
// million rows for nothing: 25-50 ms of every snapshot on the bench test.
const rollupPartsBesideSQL = `SELECT _part AS part, toUInt64(count()) AS n FROM {db}.agg_visitors
WHERE shop_id = @shop AND experiment_id = @exp AND _part != @known GROUP BY part
UNION ALL
SELECT name AS part, toUInt64(@known_rows) AS n FROM system.parts
WHERE database = currentDatabase() AND table = 'agg_visitors' AND name = @known AND active`

// copiesSQL is the test's finished copies, per source part: its first
// finished build (every reader of the part uses that one, should two
// snapshots have built it at once), its rows and its latest build.
const copiesSQL = `SELECT source_part, min(build) AS first_build, any(visitors) AS part_rows, max(build) AS last_build
FROM {db}.agg_visitors_copy_builds
WHERE shop_id = @shop AND experiment_id = @exp
GROUP BY source_part`

// rollupBase is the part holding most of a test's rollup rows (the base),
// its rows, the rows in every other part, and the build of the base's
// finished copy (0: none yet).
type rollupBase struct {
	part         string
	rows, others uint64
	build        uint64
}

// copyRecord is a part's finished copy (copiesSQL).
type copyRecord struct{ build, rows uint64 }

func (w *Warehouse) rollupBase(ctx context.Context, q MetricsQuery) (rollupBase, error) {
	copies, latest, err := w.copies(ctx, q)
	if err != nil {
		return rollupBase{}, err
	}
	statement, params := rollupPartsSQL, args(q)
	if latest != "" {
		statement = rollupPartsBesideSQL
		params = append(params, clickhouse.Named("known", latest), clickhouse.Named("known_rows", copies[latest].rows))
	}
	rows, err := w.conn.Query(ctx, w.render(statement), params...)
	if err != nil {
		return rollupBase{}, err
	}
	defer rows.Close()
	var b rollupBase
	for rows.Next() {
		var part string
		var n uint64
		if err := rows.Scan(&part, &n); err != nil {
			return rollupBase{}, err
		}
		if n > b.rows || (n == b.rows && part < b.part) {
			b.part, b.rows, b.others = part, n, b.others+b.rows
		} else {
			b.others += n
		}
	}
	b.build = copies[b.part].build
	return b, rows.Err()
}

// copies reads the test's finished copies by source part, and the part of
// the latest one ("" when there is none).
func (w *Warehouse) copies(ctx context.Context, q MetricsQuery) (map[string]copyRecord, string, error) {
	rows, err := w.conn.Query(ctx, w.render(copiesSQL), args(q)...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	copies := map[string]copyRecord{}
	var latest string
	var latestBuild uint64
	for rows.Next() {
		var part string
		var c copyRecord
		var last uint64
		if err := rows.Scan(&part, &c.build, &c.rows, &last); err != nil {
			return nil, "", err
		}
		copies[part] = c
		if last > latestBuild {
			latest, latestBuild = part, last
		}
	}
	return copies, latest, rows.Err()
}

// rollupS reads S: the visitors with a row outside the base part (none
// when the base holds every row).
func (w *Warehouse) rollupS(ctx context.Context, q MetricsQuery, base rollupBase) ([]uint64, error) {
	if base.others == 0 {
		return nil, nil
	}
	return w.vids(ctx, `SELECT DISTINCT vid FROM {db}.agg_visitors
		WHERE shop_id = @shop AND experiment_id = @exp AND _part != @base`, append(args(q), clickhouse.Named("base", base.part)))
}

// vids runs a statement of one UInt64 column (visitors as vid).
func (w *Warehouse) vids(ctx context.Context, statement string, params []any) ([]uint64, error) {
	rows, err := w.conn.Query(ctx, w.render(statement), params...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var v uint64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// withS sends S with a statement, as the external table s_vids (othersSQL).
// Each statement gets its own table: a table is one block, sent once.
func withS(ctx context.Context, s []uint64) context.Context {
	if len(s) == 0 {
		return ctx
	}
	t, err := ext.NewTable("s_vids", ext.Column("vid", "UInt64"))
	if err != nil {
		panic(err) // a fixed, valid definition
	}
	for _, v := range s {
		if err := t.Append(v); err != nil {
			panic(err) // a UInt64 into a UInt64 column
		}
	}
	return clickhouse.Context(ctx, clickhouse.WithExternalTable(t))
}

// rollupRead answers GroupMetrics from the rollup, whose base part is
// base; ok is false when it declines q: a test without visitors yet, or a
// unit with a moment outside q's window (the rollup holds the whole test;
// the raw path filters each row by date). With money, it answers only from
// the cube, and gives each row's order units as (revenue, profit, orders)
// triplets, for the caller to cap (ok is false when the cube does not
// serve q).
func (w *Warehouse) rollupRead(ctx context.Context, q MetricsQuery, base rollupBase, money bool) (out []GroupRow, units [][]float64, ok bool, err error) {
	if base.part == "" {
		return nil, nil, false, nil
	}
	build, err := w.copyBuild(ctx, q, base)
	if err != nil {
		return nil, nil, false, err
	}
	cube := build > 0 && cubeServes(q)
	if money && !cube {
		return nil, nil, false, nil
	}
	var others []uint64
	if build > 0 {
		if others, err = w.rollupS(ctx, q, base); err != nil {
			return nil, nil, false, err
		}
	}
	if cube {
		return w.cubeRead(ctx, q, base.part, build, others, money)
	}
	rows, err := w.conn.Query(withS(ctx, others), w.render(rollupSQL(q, build > 0, len(others) > 0)),
		append(args(q), clickhouse.Named("base", base.part), clickhouse.Named("build", build))...)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var outside uint64
		r, err := scanGroupRow(rows, q.Shipping, &outside)
		if err != nil {
			return nil, nil, false, err
		}
		if outside > 0 {
			return nil, nil, false, nil
		}
		out = append(out, r)
	}
	return out, nil, rows.Err() == nil, rows.Err()
}

// rollupSQL is GroupMetrics' statement on the rollup; its last column says
// whether a unit of the row's cell has a moment outside the window. A
// window is a range of local dates, so checking the cell's earliest and
// latest moment checks them all.
func rollupSQL(q MetricsQuery, copied, hasOthers bool) string {
	return groupSumsSQL(q, "("+rollupUnitsSQL(q, copied, hasOthers)+") AS units", "toUInt64(sum(x_sessions))",
		"toUInt64(NOT (toDate(min(x_first), @tz) >= toDate(@from) AND toDate(max(x_last), @tz) <= toDate(@to))) AS outside")
}

// rollupUnitsSQL is one row per unit of the visitors basis, in the columns
// unitsSQL gives (plus x_first and x_last, the unit's earliest and latest
// moment), from the rollup and the orders. Unlike unitsSQL it keeps units
// outside the window: their x_first/x_last make the caller decline.
func rollupUnitsSQL(q MetricsQuery, copied, hasOthers bool) string {
	attrs := assignmentAttrs(q.Breakdown)
	// Without a copy (a small test: under copyMinVisitors) every visitor's
	// rows are merged, in one read that no merge or insert can split.
	branches := []string{rollupVisitorRowsSQL(attrs, "1", true, true)}
	if copied {
		// The base's visitors come from its finished copy, S's merged.
		branches = []string{copyVisitorRowsSQL(attrs, "1")}
		if hasOthers {
			branches = []string{copyVisitorRowsSQL(attrs, "vid NOT IN ("+othersSQL+")"),
				rollupVisitorRowsSQL(attrs, "vid IN ("+othersSQL+")", true, true)}
		}
	}
	var shipping []string
	if q.Shipping {
		shipping = []string{"o_shipping AS x_shipping", "o_unshipped AS x_unshipped"}
	}
	return unitsOverSQL(attrs, shipping, strings.Join(branches, "\n\t\tUNION ALL\n\t\t"), rollupOrderUnitsSQL(q.Shipping))
}

// othersSQL is S, the visitors with a row outside the base part, as read
// once per GroupMetrics into the external table s_vids (rollupS): every
// statement and branch of one read must agree on S, and ClickHouse
// evaluates each IN subquery on its own, at its own moment, while merges
// and inserts go on.
const othersSQL = `SELECT vid FROM s_vids`

// unitsOverSQL is one row per unit from visitor rows (rollupVisitorColumns)
// and order units (rollupOrderUnitsSQL's columns). One FULL JOIN reads
// the orders once: an order unit of an assigned visitor meets its
// visitor's row; any other (an unseen visitor's, an order without one)
// stands alone, with the defaults of a join for the visitor's columns (no
// attributes, no activity) and the stand-in assignment the raw path gives
// it (first order's time and group).
func unitsOverSQL(attrs, extra []string, visitors, orderUnits string) string {
	return unitColumnsSQL(attrs, extra, "") + `
	FROM (
		` + visitors + `) AS visitors
	ALL FULL JOIN (` + orderUnits + `) AS unit_orders USING vid
	WHERE ` + unitFilterSQL("")
}

// unitColumnsSQL is the SELECT of a unit row (unitColumns).
func unitColumnsSQL(attrs, extra []string, p string) string {
	return "SELECT " + strings.Join(unitColumns(attrs, extra, p), ", ")
}

// unitColumns are the columns of a unit row (unitsSQL's columns, and
// extra) from a visitor's columns (rollupVisitorColumns) and its orders'
// (rollupOrderUnitsSQL's), either of them absent (zeros), each read with
// prefix p.
func unitColumns(attrs, extra []string, p string) []string {
	in := func(c string) string {
		if p == "" {
			return c
		}
		return p + c + " AS " + c
	}
	cols := []string{in("vid"), "if(" + p + "r_pack > 0, " + p + "r_pack, " + p + "o_pack) AS u_pack",
		"toInt16(toInt32(u_pack % 65536) - 1) AS a_group",
		"toUInt8(intDiv(u_pack, 65536) % 2) AS a_bot", "toDateTime(toUInt32(intDiv(u_pack, 131072))) AS a_at"}
	for _, a := range attrs {
		cols = append(cols, p+"r_"+a+" AS a_"+a)
	}
	for _, c := range extra {
		cols = append(cols, in(c))
	}
	cols = append(cols, in("x_sessions"), in("x_pages"),
		"toUInt64(x_sessions > 0 AND x_pages = x_sessions) AS x_bounced", in("x_staying"),
		p+"o_orders AS x_orders", p+"o_revenue AS x_revenue", p+"o_profit AS x_profit", in("x_atc"), in("x_chk"), in("x_ct"),
		"toUInt64(0) AS x_viewed", "'' AS x_landing", "toDateTime(0) AS x_start",
		"multiIf("+p+"r_pack = 0, "+p+"o_first, x_orders > 0, least("+p+"v_first, "+p+"o_first), "+p+"v_first) AS x_first",
		"multiIf("+p+"r_pack = 0, "+p+"o_last, x_orders > 0, greatest("+p+"v_last, "+p+"o_last), "+p+"v_last) AS x_last")
	return cols
}

// unitFilterSQL keeps the units of the visitors basis, their columns read
// with prefix p: human visitors assigned to a group, and order units of no
// assigned visitor stating a group.
func unitFilterSQL(p string) string {
	return "(" + p + "r_pack % 65536 > 0 AND a_bot = 0 AND a_device != 'bot') OR (" + p + "r_pack = 0 AND " + p +
		"o_assigned = 0 AND " + p + "o_pack % 65536 > 0)"
}

// rollupVisitorRowsSQL is one row per visitor of the rollup matching where:
// its packed first assignment (r_pack), attributes, sessions, page loads,
// seconds on site, flags and first and last moment. merged groups the
// visitor's rows (-Merge); otherwise its one row is finalized. spans reads
// each session's duration from the (session, second) pairs; without it the
// visitor has at most one session, whose duration is its last page load
// less its first.
func rollupVisitorRowsSQL(attrs []string, where string, merged, spans bool) string {
	state := func(fn, col string) string {
		if merged {
			return fn + "Merge(" + col + ")"
		}
		return "finalizeAggregation(" + col + ")"
	}
	cols := []string{"vid", state("argMax", "assignment") + " AS r_pack"}
	for _, a := range attrs {
		cols = append(cols, state("argMax", a)+" AS r_"+a)
	}
	cols = append(cols, state("uniqExact", "sessions")+" AS x_sessions", state("uniqExact", "pages")+" AS x_pages")
	if spans {
		cols = append(cols, "arraySort("+state("groupUniqArray", "spans")+") AS r_sorted",
			"arrayMap(p -> p.1, r_sorted) AS r_ss", "arrayMap(q -> toInt64(q.2), r_sorted) AS r_ts", staying)
	} else {
		cols = append(cols, "toFloat64(if(x_sessions = 1, "+state("max", "page_last")+" - "+state("min", "page_first")+", 0)) AS x_staying")
	}
	cols = append(cols, state("max", "added_to_cart")+" AS x_atc", state("max", "checkouts")+" AS x_chk",
		state("max", "clicked")+" AS x_ct", state("min", "seen_first")+" AS v_first", state("max", "seen_last")+" AS v_last")
	group := ""
	if merged {
		group = "\n\t\tGROUP BY vid"
	}
	out := `SELECT ` + strings.Join(cols, ", ") + `
		FROM {db}.agg_visitors
		WHERE shop_id = @shop AND experiment_id = @exp AND ` + where + group
	if spans {
		// The outer SELECT drops the pairs, so that every branch of the UNION
		// ALL has the same columns.
		out = `SELECT ` + strings.Join(rollupVisitorColumns(attrs), ", ") + ` FROM (` + out + `)`
	}
	return out
}

// rollupVisitorColumns are the columns every visitor branch returns.
func rollupVisitorColumns(attrs []string) []string {
	cols := []string{"vid", "r_pack"}
	for _, a := range attrs {
		cols = append(cols, "r_"+a)
	}
	return append(cols, "x_sessions", "x_pages", "x_staying", "x_atc", "x_chk", "x_ct", "v_first", "v_last")
}

// staying is a visitor's seconds on site from r_ss and r_ts, its (session
// hash, second) pairs sorted: each session's pairs are adjacent and in time
// order, so the sum of every session's last second less its first is the
// sum over positions where a session ends less where one starts.
const staying = `toFloat64(arraySum(arrayMap(i -> if(i = length(r_ss) OR r_ss[i + 1] != r_ss[i], r_ts[i], 0)
			- if(i = 1 OR r_ss[i - 1] != r_ss[i], r_ts[i], 0), arrayEnumerate(r_ss)))) AS x_staying`

// rollupOrderUnitsSQL is each unit with counting orders, over the whole
// test (the caller checks the window): its orders, revenue and profit
// (standingOrdersSQL: the same orders in the same units as the raw path),
// its first and last order, whether the unit is an assigned visitor of the
// order's group (o_assigned, joined to the rollup) or a unit of its own, and
// for the latter the stand-in assignment the raw path packs (first order's
// time·2¹⁷ + group+1); with shipping, its orders' shipping and how many
// recorded none (o_shipping, o_unshipped).
func rollupOrderUnitsSQL(shipping bool) string {
	cols, out, sums := []string{"argMax(toFloat64(revenue), version) AS o_all_revenue",
		"argMax(toFloat64(cost), version) AS o_all_cost"}, []string{"o_all_revenue", "o_all_cost"}, ""
	if shipping {
		cols, out = append(cols, orderShippingCols...), append(out, orderShippingOut...)
		sums = `,
				toFloat64(sumIf(o_all_shipping, o_all_shipped = 1)) AS o_shipping, toUInt64(countIf(o_all_shipped = 0)) AS o_unshipped`
	}
	orders := standingOrdersSQL(cols, out, "")
	return `
			SELECT ` + vidSQL("o_vid") + ` AS vid, toUInt8(o_vid = o_named_vid) AS o_assigned,
				min(toUInt64(toUInt32(o_ts)) * 131072 + toUInt64(greatest(o_group + 1, 0))) AS o_pack,
				toUInt64(count()) AS o_orders, toFloat64(sum(o_all_revenue)) AS o_revenue,
				toFloat64(sum(o_all_revenue - o_all_cost)) AS o_profit, min(o_ts) AS o_first, max(o_ts) AS o_last` + sums + `
			FROM (` + orders + `) AS standing_orders
			GROUP BY vid, o_assigned`
}
