package warehouse

import "strings"

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
// assignment, so the date dimension reads the copy's visitors.
func cubeServes(q MetricsQuery) bool { return !hasDimension(q.Breakdown, "date") }

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

// cubeSQL is GroupMetrics' statement on the cube of the base's copy, in
// the columns of rollupSQL. The cube stands for the copy's visitors as
// they were written; three branches correct it:
//
//   - visitors with rows in other parts (S; only when there are other
//     parts): their copy rows are taken out of the cube (sign −1) and they
//     are added as they stand, merged;
//   - copied visitors that orders name: their orders are added (a delta
//     row: the cube holds their activity);
//   - order units of no assigned visitor stand as units of their own.
//
// The orders' visitors are looked up in the same rows (the copy's flagged
// block and S), not in the assignments: rollupLookupOrderUnitsSQL.
func cubeSQL(q MetricsQuery, hasOthers bool) string {
	attrs := assignmentAttrs(q.Breakdown)
	cs := contributions(q.Caps)
	// The visitors the orders need, and S: copied ones as delta rows.
	ordered := copyLookupSQL("ordered", orderedVisitorsSQL)
	if hasOthers {
		ordered += " AND vid NOT IN (" + othersSQL + ")"
	}
	visitorCols := strings.Join(rollupVisitorColumns(attrs), ", ")
	visitors := `SELECT ` + visitorCols + `, toUInt8(1) AS x_delta FROM (` + copyVisitorRowsSQL(attrs, ordered) + `)`
	if hasOthers {
		visitors += "\n\t\tUNION ALL\n\t\tSELECT " + visitorCols + ", toUInt8(0) AS x_delta FROM (" +
			rollupVisitorRowsSQL(attrs, "vid IN ("+othersSQL+")", true, true) + ")"
	}
	units := "(" + unitsOverSQL(attrs, visitors, rollupLookupOrderUnitsSQL(visitors), []string{"x_delta"}) + ") AS units"
	branches := []string{cubeBranchSQL(attrs, cs), contributionsSQL(attrs, cs, units, "", true)}
	if hasOthers {
		branches = append(branches, contributionsSQL(attrs, cs, sCopyRowsSQL(attrs), "-", false))
	}
	sums := make([]string, 0, len(cs))
	for _, c := range cs {
		sums = append(sums, c.out+"(sum(c_"+c.name+")) AS "+c.name)
	}
	return `SELECT ` + keySQL(q) + ` AS key, a_group, ` + strings.Join(sums, ", ") + `,
	toUInt64(NOT (toDate(min(c_first), @tz) >= toDate(@from) AND toDate(max(c_last), @tz) <= toDate(@to))) AS outside
FROM (
		` + strings.Join(branches, "\n\t\tUNION ALL\n\t\t") + `)
GROUP BY key, a_group
HAVING n > 0 -- as GroupMetrics counts: a cell of no unit has no row
ORDER BY key, a_group`
}

// contributionsSQL is the c_ columns of each unit row of from, times sign;
// with deltas, a row with x_delta set gives its contribution's delta.
func contributionsSQL(attrs []string, cs []contribution, from, sign string, deltas bool) string {
	cols := []string{"a_group"}
	for _, a := range attrs {
		cols = append(cols, "a_"+a)
	}
	for _, c := range cs {
		v := c.unit
		if deltas && c.delta != "" {
			v = "if(x_delta = 1, " + c.delta + ", " + c.unit + ")"
		}
		cols = append(cols, sign+"("+v+") AS c_"+c.name)
	}
	cols = append(cols, "x_first AS c_first", "x_last AS c_last")
	return "SELECT " + strings.Join(cols, ", ") + "\n\t\tFROM " + from
}

// cubeBranchSQL is the cube's rows as c_ columns.
func cubeBranchSQL(attrs []string, cs []contribution) string {
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

// rollupLookupOrderUnitsSQL is rollupOrderUnitsSQL's units with the orders'
// visitors looked up in visitors (rows of rollupVisitorColumns: every
// visitor of the rollup that an order names) instead of in the
// assignments: a visitor with an assignment has r_pack > 0, and its
// first assignment's group, bot flag and device decide as in
// standingOrdersSQL. An order counts with its visitor when the visitor is
// assigned to the order's group, is dropped when the visitor is excluded or
// a bot, and otherwise is a unit of its own: an unseen visitor of its
// group, or the order itself when it names no visitor.
func rollupLookupOrderUnitsSQL(visitors string) string {
	return `
			SELECT o_unit AS vid, o_assigned, o_pack, o_orders, o_revenue, o_profit, o_first, o_last
			FROM (
				SELECT multiIf(o_named_vid = '', cityHash64(concat('order:', order_id)), l_own = 1, vid,
						cityHash64(concat('unseen:', toString(o_group), ':', o_named_vid))) AS o_unit,
					toUInt8(o_named_vid != '' AND l_own = 1) AS o_assigned,
					min(toUInt64(toUInt32(o_ts)) * 131072 + toUInt64(greatest(o_group + 1, 0))) AS o_pack,
					toUInt64(count()) AS o_orders, toFloat64(sum(o_all_revenue)) AS o_revenue,
					toFloat64(sum(o_all_revenue - o_all_cost)) AS o_profit, min(o_ts) AS o_first, max(o_ts) AS o_last
				FROM (
					SELECT order_id, o_named_vid, o_group, o_ts, o_all_revenue, o_all_cost, vid,
						toUInt8(l_pack > 0 AND toInt16(toInt32(l_pack % 65536) - 1) = o_group) AS l_own
					FROM (` + orderVersionsSQL([]string{"argMax(toFloat64(revenue), version) AS o_all_revenue",
		"argMax(toFloat64(cost), version) AS o_all_cost"}, "") + `) AS order_versions
					ALL LEFT JOIN (SELECT vid, r_pack AS l_pack, r_device AS l_device FROM (` + visitors + `)) AS order_visitors
					USING vid
					WHERE NOT (l_pack > 0 AND (l_pack % 65536 = 0 OR intDiv(l_pack, 65536) % 2 = 1 OR l_device = 'bot')))
				GROUP BY o_unit, o_assigned)`
}
