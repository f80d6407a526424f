package warehouse

import "strings"

// cubeUnitSumsSQL is the cube's second term, per cell: the units that the
// cube cannot answer for, as they stand. They are the visitors that orders
// name (copied ones give only their orders, as deltas: the cube holds
// their activity), S's visitors merged (when there are other parts) and
// every order unit of no assigned visitor. In the columns of rollupSQL,
// and money (each unit's revenue, profit and orders) when asked.
//
// fresh is the visitors orders name that the build did not flag.
func cubeUnitSumsSQL(q MetricsQuery, hasOthers, money bool, fresh newVisitors) string {
	attrs := assignmentAttrs(q.Breakdown)
	ordered := copyLookupSQL("ordered", fresh)
	if hasOthers {
		ordered += " AND vid NOT IN (" + othersSQL + ")"
	}
	visitors := copyVisitorRowsSQL(attrs, ordered, "toUInt8(1) AS x_delta", "toUInt8(1) AS v_here")
	if hasOthers {
		visitors += "\n\t\tUNION ALL\n\t\tSELECT " + strings.Join(rollupVisitorColumns(attrs), ", ") +
			", toUInt8(0) AS x_delta, toUInt8(1) AS v_here FROM (" + rollupVisitorRowsSQL(attrs, "vid IN ("+othersSQL+")", true, true) + ")"
	}
	var sums []string
	for _, c := range contributions(q.Caps) {
		v := c.unit
		if c.delta != "" {
			v = "if(x_delta = 1, " + c.delta + ", " + c.unit + ")"
		}
		sums = append(sums, c.out+"(sum("+v+")) AS "+c.name)
	}
	moneyCol := ""
	if money {
		moneyCol = moneySQL(true, "if(x_orders > 0, [x_revenue, x_profit, toFloat64(x_orders)], emptyArrayFloat64())")
	}
	columns, from := cubeUnitsSQL(attrs, visitors)
	return `WITH ` + columns + `
SELECT ` + keySQL(q) + ` AS key, a_group, ` + strings.Join(sums, ", ") + `,
	` + outsideSQL("x_first", "x_last") + moneyCol + `
` + from + `
GROUP BY key, a_group`
}

// cubeUnitsSQL is the units of visitors (copy rows and merged rows of
// rollupVisitorColumns, x_delta and v_here: every visitor of the rollup
// that an order names, and S) and of the orders, in the columns of
// unitColumnsSQL and x_delta. The orders meet their named visitor in one
// FULL JOIN, which also decides as standingOrdersSQL decides with the
// assignments: a visitor with an assignment has r_pack > 0, and an order
// counts with it when it is assigned to the order's group (own), is dropped
// when it is excluded or a bot, and otherwise is a unit of its own: an
// unseen visitor of its group, or the order itself when it names no
// visitor. ARRAY JOIN splits a joined row into its visitor's part (1) and,
// for an order not its own, the order's unit (2); grouping by unit puts
// each unit back together. Few levels of subqueries: 18.16 analyses each
// level again for every level above it. So the unit rows' columns come
// back apart, for the caller's WITH clause, and from is the FROM … WHERE
// they are read over: one level less than a SELECT of them, which cost the
// bench test's statement about 10 of its 34 ms of analysis (88 → 72 ms in
// all, the same rows).
func cubeUnitsSQL(attrs []string, visitors string) (columns, from string) {
	visitorCols := append(rollupVisitorColumns(attrs)[1:], "x_delta")
	units := []string{"if(u_part = 1, vid, o_unit) AS g_vid"}
	for _, c := range visitorCols {
		zero := "0"
		switch {
		case strings.HasPrefix(c, "r_") && c != "r_pack":
			zero = "''"
		case c == "v_first" || c == "v_last":
			zero = "toDateTime(0)"
		}
		units = append(units, "max(if(u_part = 1, "+c+", "+zero+")) AS g_"+c)
	}
	counted := "u_part = 2 OR l_own = 1"
	units = append(units, "toUInt8(0) AS g_o_assigned",
		"minIf(toUInt64(toUInt32(o_ts)) * 131072 + toUInt64(greatest(o_group + 1, 0)), "+counted+") AS g_o_pack",
		"toUInt64(countIf("+counted+")) AS g_o_orders", "toFloat64(sumIf(o_all_revenue, "+counted+")) AS g_o_revenue",
		"toFloat64(sumIf(o_all_revenue - o_all_cost, "+counted+")) AS g_o_profit",
		"minIf(o_ts, "+counted+") AS g_o_first", "maxIf(o_ts, "+counted+") AS g_o_last")
	orders := orderVersionsSQL([]string{"argMax(toFloat64(revenue), version) AS o_all_revenue",
		"argMax(toFloat64(cost), version) AS o_all_cost"}, "")
	return strings.Join(unitColumns(attrs, []string{"x_delta"}, "g_"), ", "), `FROM (
		SELECT ` + strings.Join(units, ", ") + `
		FROM (
			SELECT vid, ` + strings.Join(visitorCols, ", ") + `, v_here, order_id, o_named_vid, o_group, o_ts,
				o_all_revenue, o_all_cost,
				toUInt8(v_here = 1 AND r_pack > 0 AND order_id != '' AND toInt16(toInt32(r_pack % 65536) - 1) = o_group) AS l_own,
				multiIf(o_named_vid = '', cityHash64(concat('order:', order_id)), l_own = 1, vid,
					cityHash64(concat('unseen:', toString(o_group), ':', o_named_vid))) AS o_unit
			FROM (` + visitors + `) AS cube_visitors
			ALL FULL JOIN (` + orders + `) AS order_versions USING vid
			WHERE NOT (v_here = 1 AND r_pack > 0 AND order_id != ''
				AND (r_pack % 65536 = 0 OR intDiv(r_pack, 65536) % 2 = 1 OR r_device = 'bot')))
		ARRAY JOIN arrayFilter(p -> p > 0, [toUInt8(v_here = 1), toUInt8(if(order_id != '' AND l_own = 0, 2, 0))]) AS u_part
		GROUP BY g_vid)
	WHERE ` + unitFilterSQL("g_")
}
