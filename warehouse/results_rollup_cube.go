package warehouse

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// The cube of the finalized copy (clickhouse/0531). Even as plain columns,
// summing a million visitors per group and cell is most of a snapshot's
// cost, and almost all of them are the same as when the copy was written:
// only visitors who ordered (orders arrive and change, and the caps move)
// and visitors with rows in newer parts differ. So the build also sums the
// copy's visitors per group and attribute combination, and a read takes
//
//	cube − (copy rows of those visitors) + (those visitors as they stand)
//
// per cell: a few hundred cube rows and tens of thousands of visitors
// instead of a million. The visitors as they stand come from the same
// units as the copy path (rollupUnitsSQL), so the numbers are the same
// (results_rollup_test.go holds both to the raw path).

// cubeServes reports whether the cube can answer q: it keeps no time of
// assignment, so the date dimension reads the copy's visitors, and no
// shipping, which a shipping panel alone reads.
func cubeServes(q MetricsQuery) bool { return !hasDimension(q.Breakdown, "date") && !q.Shipping }

// cubeAttrs are the copy's attribute columns the cube keeps, in its order.
var cubeAttrs = []string{"device", "country", "visitor_type", "utm_source", "utm_medium", "utm_campaign", "gclid", "fbclid"}

// buildCubeSQL sums the human assigned visitors of one build of the copy
// per group and attributes, as groupSumsSQL counts a visitor without
// orders. Click ids are kept as present ('1') or not: the traffic source
// reads nothing more, and each id is nearly unique.
var buildCubeSQL = `INSERT INTO {db}.agg_visitors_cube (shop_id, experiment_id, source_part, build, test_group,
	device, country, visitor_type, utm_source, utm_medium, utm_campaign, gclid, fbclid, visitors, sessions, pages,
	bounced, staying, staying_sq, added_to_cart, checkouts, clicked, seen_first, seen_last)
SELECT toInt64(@shop) AS k_shop, toString(@exp) AS k_exp, toString(@base) AS k_part, toUInt64(@build) AS k_build,
	toInt16(toInt32(pack % 65536) - 1) AS k_group, device AS k_device, country AS k_country, visitor_type AS k_type,
	utm_source AS k_source, utm_medium AS k_medium, utm_campaign AS k_campaign,
	if(gclid != '', '1', '') AS k_gclid, if(fbclid != '', '1', '') AS k_fbclid,
	toUInt64(count()) AS k_visitors, toUInt64(sum(sessions)) AS k_sessions, toUInt64(sum(pages)) AS k_pages,
	toUInt64(countIf(sessions > 0 AND pages = sessions)) AS k_bounced, toFloat64(sum(staying)) AS k_staying,
	toFloat64(sum(staying * staying)) AS k_staying_sq, toUInt64(countIf(added_to_cart > 0)) AS k_atc,
	toUInt64(countIf(checkouts > 0)) AS k_chk, toUInt64(countIf(clicked > 0)) AS k_ct,
	min(seen_first) AS k_first, max(seen_last) AS k_last
FROM {db}.agg_visitors_copy
WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build AND ` + cubeFilter + `
GROUP BY k_group, k_device, k_country, k_type, k_source, k_medium, k_campaign, k_gclid, k_fbclid`

// contribution is one column a branch of cubeSQL gives per row: what a
// unit row gives (unit), what it gives when the row only adds a copied
// visitor's orders to the cube (delta: its activity is in the cube
// already), what a cube row gives (cube), and how the cells' totals are
// typed (out; the columns are in the scan order of GroupMetrics).
type contribution struct{ name, unit, delta, cube, out string }

// contributions lists the columns of cubeSQL's branches. A unit row's
// values are those of groupSumsSQL's unit; capped is the capped sums, or
// zeros without caps.
func contributions(c *Caps) []contribution {
	rc, pc := "toFloat64(0)", "toFloat64(0)"
	if c != nil {
		rc, pc = capped("x_revenue", c.Revenue), capped("x_profit", c.Profit)
	}
	i0, f0 := "toInt64(0)", "toFloat64(0)"
	return []contribution{
		{"n", "toInt64(1)", i0, "toInt64(visitors)", "toUInt64"},
		{"sessions", "toInt64(x_sessions)", i0, "toInt64(sessions)", "toUInt64"},
		{"converted", "toInt64(x_orders > 0)", "", i0, "toUInt64"},
		{"orders", "toFloat64(x_orders)", "", f0, "toFloat64"},
		{"orders_sq", "toFloat64(x_orders * x_orders)", "", f0, "toFloat64"},
		{"revenue", "x_revenue", "", f0, "toFloat64"},
		{"revenue_sq", "x_revenue * x_revenue", "", f0, "toFloat64"},
		{"revenue_orders", "x_revenue * x_orders", "", f0, "toFloat64"},
		{"profit", "x_profit", "", f0, "toFloat64"},
		{"profit_sq", "x_profit * x_profit", "", f0, "toFloat64"},
		{"atc", "toInt64(x_atc > 0)", i0, "toInt64(added_to_cart)", "toUInt64"},
		// The cube counts a copied visitor's checkout; its first order adds
		// one only when it had none.
		{"chk", "toInt64(x_chk > 0 OR x_orders > 0)", "toInt64(x_chk = 0 AND x_orders > 0)", "toInt64(checkouts)", "toUInt64"},
		{"ct", "toInt64(x_ct > 0)", i0, "toInt64(clicked)", "toUInt64"},
		{"bounced", "toInt64(x_bounced)", i0, "toInt64(bounced)", "toUInt64"},
		{"pages", "toInt64(x_pages)", i0, "toInt64(pages)", "toUInt64"},
		{"staying", "x_staying", f0, "staying", "toFloat64"},
		{"staying_sq", "x_staying * x_staying", f0, "staying_sq", "toFloat64"},
		{"revenue_capped", rc, "", f0, "toFloat64"},
		{"revenue_capped_sq", rc + " * " + rc, "", f0, "toFloat64"},
		{"revenue_orders_capped", rc + " * x_orders", "", f0, "toFloat64"},
		{"profit_capped", pc, "", f0, "toFloat64"},
		{"profit_capped_sq", pc + " * " + pc, "", f0, "toFloat64"},
	}
}

// cubeRead answers GroupMetrics from the cube of build (see rollupRead) in
// two statements at once, their cells summed here: the cube's cells,
// corrected for S's copy rows (cubeCellsSQL), and the units that orders or
// newer parts change (cubeUnitSumsSQL). ClickHouse 18.16 spends tens of
// milliseconds analysing each nested statement before it reads a row, and
// runs each on one thread here, so two flat statements beat one deep one.
// A cell of one statement may hold only orders added to visitors the other
// counts, so cells are dropped only once summed, when they have no unit.
func (w *Warehouse) cubeRead(ctx context.Context, q MetricsQuery, base string, build uint64, others []uint64, money bool) ([]GroupRow, [][]float64, bool, error) {
	type cell struct {
		row     GroupRow
		money   []float64
		outside bool
	}
	fresh, err := w.newlyNamed(ctx, q, base, build, "ordered", orderedVisitorsSQL)
	if err != nil {
		return nil, nil, false, err
	}
	hasOthers := len(others) > 0
	statements := []string{cubeCellsSQL(q, hasOthers, money), cubeUnitSumsSQL(q, hasOthers, money, fresh)}
	results := make([][]cell, len(statements))
	errs := make([]error, len(statements))
	done := make(chan struct{}, len(statements))
	for i, statement := range statements {
		go func() {
			defer func() { done <- struct{}{} }()
			rows, err := w.conn.Query(withS(ctx, others), w.render(statement),
				append(args(q), clickhouse.Named("base", base), clickhouse.Named("build", build))...)
			if err != nil {
				errs[i] = err
				return
			}
			defer rows.Close()
			for rows.Next() {
				var c cell
				var outside uint64
				extra := []any{&outside}
				if money {
					extra = append(extra, &c.money)
				}
				if c.row, err = scanGroupRow(rows, false, extra...); err != nil {
					errs[i] = err
					return
				}
				c.outside = outside > 0
				results[i] = append(results[i], c)
			}
			errs[i] = rows.Err()
		}()
	}
	for range statements {
		<-done
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, false, err
	}
	merged := map[[2]string]*cell{}
	for _, part := range results {
		for _, c := range part {
			k := [2]string{c.row.Key, strconv.Itoa(c.row.TestGroup)}
			if m := merged[k]; m != nil {
				m.row.Sums.Add(c.row.Sums)
				m.money = append(m.money, c.money...)
				m.outside = m.outside || c.outside
			} else {
				merged[k] = &cell{row: c.row, money: c.money, outside: c.outside}
			}
		}
	}
	cells := make([]*cell, 0, len(merged))
	for _, c := range merged {
		if c.row.N == 0 {
			continue // as GroupMetrics counts: a cell of no unit has no row
		}
		if c.outside {
			return nil, nil, false, nil
		}
		cells = append(cells, c)
	}
	slices.SortFunc(cells, func(a, b *cell) int {
		return cmp.Or(cmp.Compare(a.row.Key, b.row.Key), cmp.Compare(a.row.TestGroup, b.row.TestGroup))
	})
	out, units := make([]GroupRow, len(cells)), make([][]float64, len(cells))
	for i, c := range cells {
		out[i], units[i] = c.row, c.money
	}
	return out, units, true, nil
}

// cubeCellsSQL is the cube's cells, less the copy rows of S (visitors with
// rows in other parts, when there are any): the first term of the cube's
// sum, per cell, in the columns of rollupSQL (and money, always empty: the
// cube holds no orders). Its cells are non-negative: S's copy rows are
// among the cube's.
func cubeCellsSQL(q MetricsQuery, hasOthers, money bool) string {
	attrs := assignmentAttrs(q.Breakdown)
	cs := contributions(q.Caps)
	branches := []string{cubeBranchSQL(attrs, cs, money)}
	if hasOthers {
		branches = append(branches, contributionsSQL(attrs, cs, sCopyRowsSQL(attrs), "-", money))
	}
	sums := make([]string, 0, len(cs))
	for _, c := range cs {
		sums = append(sums, c.out+"(sum(c_"+c.name+")) AS "+c.name)
	}
	return `SELECT ` + keySQL(q) + ` AS key, a_group, ` + strings.Join(sums, ", ") + `,
	` + outsideSQL("c_first", "c_last") + moneySQL(money, "c_money") + `
FROM (
		` + strings.Join(branches, "\n\t\tUNION ALL\n\t\t") + `)
GROUP BY key, a_group`
}

// outsideSQL says whether the cell has a moment outside the window.
func outsideSQL(first, last string) string {
	return "toUInt64(NOT (toDate(min(" + first + "), @tz) >= toDate(@from) AND toDate(max(" + last + "), @tz) <= toDate(@to))) AS outside"
}

// moneySQL is the cell's order units' money column, with money.
func moneySQL(money bool, col string) string {
	if !money {
		return ""
	}
	return ",\n\tgroupArrayArray(" + col + ") AS money"
}

// contributionsSQL is the c_ columns of each unit row of from, times sign;
// with money, a unit with orders gives its revenue, profit and orders.
func contributionsSQL(attrs []string, cs []contribution, from, sign string, money bool) string {
	cols := []string{"a_group"}
	for _, a := range attrs {
		cols = append(cols, "a_"+a)
	}
	for _, c := range cs {
		cols = append(cols, sign+"("+c.unit+") AS c_"+c.name)
	}
	cols = append(cols, "x_first AS c_first", "x_last AS c_last")
	if money {
		cols = append(cols, "if(x_orders > 0, [x_revenue, x_profit, toFloat64(x_orders)], emptyArrayFloat64()) AS c_money")
	}
	return "SELECT " + strings.Join(cols, ", ") + "\n\t\tFROM " + from
}

// cubeBranchSQL is the cube's rows as c_ columns (no orders: no money).
func cubeBranchSQL(attrs []string, cs []contribution, money bool) string {
	inner := []string{"test_group AS a_group", "seen_first AS x_first", "seen_last AS x_last"}
	cols := []string{"a_group"}
	for _, a := range attrs {
		inner = append(inner, a+" AS a_"+a)
		cols = append(cols, "a_"+a)
	}
	for _, c := range cs {
		cols = append(cols, c.cube+" AS c_"+c.name)
	}
	cols = append(cols, "x_first AS c_first", "x_last AS c_last")
	if money {
		cols = append(cols, "emptyArrayFloat64() AS c_money")
	}
	return `SELECT ` + strings.Join(cols, ", ") + `
		FROM (SELECT ` + strings.Join(inner, ", ") + `, visitors, sessions, pages, bounced, staying, staying_sq,
			added_to_cart, checkouts, clicked
		FROM {db}.agg_visitors_cube
		WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build) AS cube_cells`
}

// sCopyRowsSQL is the copy rows of S as the cube counted them: the same
// filter, no orders.
func sCopyRowsSQL(attrs []string) string {
	cols := []string{"toInt16(toInt32(pack % 65536) - 1) AS a_group", "sessions AS x_sessions", "pages AS x_pages",
		"toUInt64(x_sessions > 0 AND x_pages = x_sessions) AS x_bounced", "staying AS x_staying",
		"toUInt64(0) AS x_orders", "toFloat64(0) AS x_revenue", "toFloat64(0) AS x_profit",
		"added_to_cart AS x_atc", "checkouts AS x_chk", "clicked AS x_ct", "seen_first AS x_first", "seen_last AS x_last"}
	for _, a := range attrs {
		cols = append(cols, cubeAttrSQL(a)+" AS a_"+a)
	}
	return `(SELECT ` + strings.Join(cols, ", ") + `
		FROM {db}.agg_visitors_copy
		WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build
			AND ` + cubeFilter + ` AND vid IN (` + othersSQL + `)) AS s_copy_rows`
}

// cubeFilter is the copy rows the cube counts: human visitors assigned to
// a group.
const cubeFilter = "pack % 65536 > 0 AND intDiv(pack, 65536) % 2 = 0 AND device != 'bot'"

// cubeAttrSQL is an attribute of the copy as the cube keeps it.
func cubeAttrSQL(a string) string {
	if a == "gclid" || a == "fbclid" {
		return "if(" + a + " != '', '1', '')"
	}
	return a
}
