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
//
// With money, each cell also gives its order units' revenue, profit and
// orders (three floats per unit, in one array), for the caller to cap.
func cubeSQL(q MetricsQuery, hasOthers, money bool) string {
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
	units := "(" + cubeUnitsSQL(attrs, visitors) + ") AS units"
	branches := []string{cubeBranchSQL(attrs, cs, money), contributionsSQL(attrs, cs, units, "", true, money)}
	if hasOthers {
		branches = append(branches, contributionsSQL(attrs, cs, sCopyRowsSQL(attrs), "-", false, money))
	}
	moneyCol := ""
	if money {
		moneyCol = ",\n\tgroupArrayArray(c_money) AS money"
	}
	sums := make([]string, 0, len(cs))
	for _, c := range cs {
		sums = append(sums, c.out+"(sum(c_"+c.name+")) AS "+c.name)
	}
	return `SELECT ` + keySQL(q) + ` AS key, a_group, ` + strings.Join(sums, ", ") + `,
	toUInt64(NOT (toDate(min(c_first), @tz) >= toDate(@from) AND toDate(max(c_last), @tz) <= toDate(@to))) AS outside` + moneyCol + `
FROM (
		` + strings.Join(branches, "\n\t\tUNION ALL\n\t\t") + `)
GROUP BY key, a_group
HAVING n > 0 -- as GroupMetrics counts: a cell of no unit has no row
ORDER BY key, a_group`
}

// contributionsSQL is the c_ columns of each unit row of from, times sign;
// with deltas, a row with x_delta set gives its contribution's delta; with
// money, a unit with orders gives its revenue, profit and orders.
func contributionsSQL(attrs []string, cs []contribution, from, sign string, deltas, money bool) string {
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

// cubeUnitsSQL is the units of visitors (rows of rollupVisitorColumns and
// x_delta: every visitor of the rollup that an order names, and S) and of
// the orders, in the columns of unitColumnsSQL and x_delta. The orders meet
// their named visitor in one FULL JOIN, which also decides as
// standingOrdersSQL decides with the assignments: a visitor with an
// assignment has r_pack > 0, and an order counts with it when it is
// assigned to the order's group (own), is dropped when it is excluded or a
// bot, and otherwise is a unit of its own: an unseen visitor of its group,
// or the order itself when it names no visitor. ARRAY JOIN splits a joined
// row into its visitor's part (1) and, for an order not its own, the
// order's unit (2); grouping by unit puts each unit back together.
func cubeUnitsSQL(attrs []string, visitors string) string {
	visitorCols := append(rollupVisitorColumns(attrs), "x_delta")
	var parts []string
	for _, c := range visitorCols {
		zero := "0"
		switch {
		case c == "vid":
			continue
		case strings.HasPrefix(c, "r_") && c != "r_pack":
			zero = "''"
		case c == "v_first" || c == "v_last":
			zero = "toDateTime(0)"
		}
		parts = append(parts, "if(u_part = 1, "+c+", "+zero+") AS p_"+c)
	}
	var units []string
	for _, c := range visitorCols[1:] {
		units = append(units, "max(p_"+c+") AS "+c)
	}
	orders := orderVersionsSQL([]string{"argMax(toFloat64(revenue), version) AS o_all_revenue",
		"argMax(toFloat64(cost), version) AS o_all_cost"}, "")
	return unitColumnsSQL(attrs, []string{"x_delta"}) + `
	FROM (
		SELECT u_vid AS vid, ` + strings.Join(units, ", ") + `, toUInt8(0) AS o_assigned,
			minIf(toUInt64(toUInt32(o_ts)) * 131072 + toUInt64(greatest(o_group + 1, 0)), p_counted = 1) AS o_pack,
			toUInt64(sum(p_counted)) AS o_orders, toFloat64(sumIf(o_all_revenue, p_counted = 1)) AS o_revenue,
			toFloat64(sumIf(o_all_revenue - o_all_cost, p_counted = 1)) AS o_profit,
			minIf(o_ts, p_counted = 1) AS o_first, maxIf(o_ts, p_counted = 1) AS o_last
		FROM (
			SELECT if(u_part = 1, vid, o_unit) AS u_vid, ` + strings.Join(parts, ", ") + `,
				toUInt8(u_part = 2 OR l_own = 1) AS p_counted, o_ts, o_group, o_all_revenue, o_all_cost
			FROM (
				SELECT vid, ` + strings.Join(visitorCols[1:], ", ") + `, v_here, order_id, o_named_vid, o_group, o_ts,
					o_all_revenue, o_all_cost,
					toUInt8(v_here = 1 AND r_pack > 0 AND order_id != '' AND toInt16(toInt32(r_pack % 65536) - 1) = o_group) AS l_own,
					multiIf(o_named_vid = '', cityHash64(concat('order:', order_id)), l_own = 1, vid,
						cityHash64(concat('unseen:', toString(o_group), ':', o_named_vid))) AS o_unit
				FROM (SELECT ` + strings.Join(visitorCols, ", ") + `, toUInt8(1) AS v_here FROM (` + visitors + `)) AS cube_visitors
				ALL FULL JOIN (` + orders + `) AS order_versions USING vid
				WHERE NOT (v_here = 1 AND r_pack > 0 AND order_id != ''
					AND (r_pack % 65536 = 0 OR intDiv(r_pack, 65536) % 2 = 1 OR r_device = 'bot')))
			ARRAY JOIN arrayFilter(p -> p > 0, [toUInt8(v_here = 1), toUInt8(if(order_id != '' AND l_own = 0, 2, 0))]) AS u_part)
		GROUP BY u_vid) AS cube_units
	WHERE ` + unitFilter
}
