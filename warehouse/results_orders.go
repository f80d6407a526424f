package warehouse

import "strings"

// The orders part of the results SQL, shared with the export so that both
// count the same orders in the same groups.
//
// Every human order counts, in the group it states (the cart attribute of
// a signed order, the testGroup of a legacy post: what the buyer saw wins,
// as in the webhook attribution). It counts with its visitor when the
// visitor's first assignment is in that group; otherwise (a legacy order
// without visitorId, a visitor the test never assigned, or one assigned to
// another group) as the order of an unseen visitor of its group, a unit of
// its own. Orders of excluded or bot visitors count nowhere.

// standingOrdersSQL is each human order of the test as it stands (its
// latest version; edits and refunds are new versions) that counts: the
// group it states (o_group), the visitor it names (o_named_vid, the latest
// version that names one, so a repeated legacy post without visitorId does
// not take an order from the visitor an earlier post named), its time
// (o_ts), its visitor's assignment session (ov_sid), the unit it counts for
// (o_vid), and cols, more per-order aggregates (`expr AS alias`) read out
// as out. having narrows the orders (the window). Only the assignments of
// visitors who ordered are read.
func standingOrdersSQL(cols, out []string, having string) string {
	return `
		SELECT order_id, o_named_vid, o_group, o_ts, ov_sid, ` + strings.Join(out, ", ") + `,
			multiIf(o_named_vid = '', concat('order:', order_id),
				ov_found = 1 AND ov_group = o_group, o_named_vid,
				concat('unseen:', toString(o_group), ':', o_named_vid)) AS o_vid
		FROM (` + orderVersionsSQL(cols, having) + `) AS order_versions
		ALL LEFT JOIN (
			SELECT visitor_id AS o_named_vid, argMax(test_group, version) AS ov_group, argMax(is_bot, version) AS ov_bot,
				argMax(device, version) AS ov_device, argMax(session_id, version) AS ov_sid, toUInt8(1) AS ov_found
			FROM {db}.assignments
			WHERE shop_id = @shop AND experiment_id = @exp AND visitor_id IN (
				SELECT visitor_id FROM {db}.orders WHERE shop_id = @shop AND experiment_id = @exp AND visitor_id != '')
			GROUP BY visitor_id) AS order_visitors USING o_named_vid
		WHERE ov_found = 0 OR (ov_group >= 0 AND ov_bot = 0 AND ov_device != 'bot')`
}

// orderVersionsSQL is each human order of the test in its latest version:
// the visitor it names (o_named_vid, the latest version that names one), the
// group it states, its time, and cols; having narrows them further.
func orderVersionsSQL(cols []string, having string) string {
	return `
			SELECT order_id, argMaxIf(visitor_id, version, visitor_id != '') AS o_named_vid,
				argMax(test_group, version) AS o_group, argMax(is_bot, version) AS o_bot,
				argMax(created_at, version) AS o_ts, ` + strings.Join(cols, ", ") + `, cityHash64(o_named_vid) AS vid
			FROM {db}.orders
			WHERE shop_id = @shop AND experiment_id = @exp
			GROUP BY order_id
			HAVING o_bot = 0` + having
}

// latestOrdersSQL is each counting order of the window with its session,
// revenue, cost and lines. Amounts are stored as Decimal(18,4)
// (clickhouse/0411) and read as Float64: the statistics work in floats.
func latestOrdersSQL() string { return latestOrdersWithSQL(nil, nil) }

// latestOrdersWithSQL is latestOrdersSQL with more per-order columns (cols,
// named out).
func latestOrdersWithSQL(cols, out []string) string {
	return standingOrdersSQL(append([]string{"argMax(session_id, version) AS o_sid",
		"argMax(toFloat64(revenue), version) AS o_all_revenue", "argMax(toFloat64(cost), version) AS o_all_cost",
		"argMax(line_product_ids, version) AS o_lp", "argMax(line_quantities, version) AS o_lq",
		"argMax(arrayMap(p -> toFloat64(p), line_prices), version) AS o_lpr"}, cols...),
		append([]string{"o_sid", "o_all_revenue", "o_all_cost", "o_lp", "o_lq", "o_lpr"}, out...), " AND "+inWindow("o_ts"))
}

// orderShippingCols are each order's shipping as it stands and whether it
// recorded any (named orderShippingOut), read when a query asks for
// shipping (MetricsQuery.Shipping).
var (
	orderShippingCols = []string{"argMax(toFloat64(shipping), version) AS o_all_shipping",
		"argMax(shipping_recorded, version) AS o_all_shipped"}
	orderShippingOut = []string{"o_all_shipping", "o_all_shipped"}
)

// orderRowsSQL is one row per unit with orders: their count, revenue and
// profit, each order in its latest version. On the visitors basis each row
// also carries a stand-in assignment in the order's group (version 1,
// below every real assignment's): argMax keeps the real one of an
// assigned visitor, and an unseen visitor's unit gets its group.
func (u unitParts) orderRowsSQL() string {
	orderSession, orderJoin, assignment := "''", "", u.noAssignment
	if !u.sessions {
		assignment = orderAssignmentSQL(assignmentAttrs(u.q.Breakdown))
	}
	if u.sessions {
		// A legacy order knows its visitor only; its session is the one
		// whose checkout_completed event named it, else the one its visitor
		// was assigned in, else a session of its own.
		orderSession = `multiIf(o_sid != '', o_sid, e_sid != '', e_sid,
			o_vid = o_named_vid AND ov_sid != '', ov_sid, concat('order:', order_id))`
		orderJoin = ` ALL LEFT JOIN (
			SELECT order_id, any(session_id) AS e_sid FROM {db}.events
			WHERE shop_id = @shop AND experiment_id = @exp AND event_type = 'checkout_completed' AND order_id != ''
			GROUP BY order_id) AS order_sessions USING order_id`
	}
	return `SELECT ` + vidSQL("o_vid") + ` AS vid, ` + orderSession + ` AS sid, ` + assignment + `toUInt64(0) AS u_sessions, toUInt64(0) AS u_pages,
			toUInt64(0) AS u_bounced, toFloat64(0) AS u_staying, toUInt64(count()) AS u_orders,
			toFloat64(sum(o_revenue)) AS u_revenue, toFloat64(sum(o_revenue - o_cost)) AS u_profit, ` + u.orderShipping() + `
			toUInt64(0) AS u_atc, toUInt64(0) AS u_chk, toUInt64(0) AS u_ct, toUInt64(0) AS u_viewed,
			'' AS u_landing, min(o_ts) AS u_start
		FROM (` + u.scopedOrdersSQL() + `) AS latest_orders` + orderJoin + `
		GROUP BY ` + u.key
}

// scopedOrdersSQL is each order of the window in its latest version, with
// its revenue and cost; scoped, only orders with a line of the group,
// counting those lines' revenue and the matching share of the cost.
func (u unitParts) scopedOrdersSQL() string {
	orderRevenue, orderCost, orderFilter := "o_all_revenue", "o_all_cost", ""
	if u.scoped {
		// The lines of the group, scaled down when the order brought less
		// than all its lines (a refund of money only, an order discount),
		// so a product's revenue never exceeds its order's (truth audit
		// F4); shipping and taxes above the lines are not the product's.
		lines := "arraySum(arrayMap((n, price) -> price * n, o_lq, o_lpr))"
		orderRevenue = "arraySum(arrayMap((p, n, price) -> if(has(@products, p), price * n, 0), o_lp, o_lq, o_lpr))" +
			" * if(" + lines + " > o_all_revenue AND " + lines + " > 0, o_all_revenue / " + lines + ", 1)"
		orderFilter = " WHERE hasAny(o_lp, @products)"
		// A scoped order's cost follows its share of the revenue.
		orderCost = "if(o_all_revenue > 0, o_all_cost * " + orderRevenue + " / o_all_revenue, o_all_cost)"
	}
	orders, shipping := latestOrdersSQL(), ""
	if u.q.Shipping {
		orders, shipping = latestOrdersWithSQL(orderShippingCols, orderShippingOut), ", o_all_shipping AS o_shipping, o_all_shipped AS o_shipped"
	}
	return `
			SELECT order_id, o_vid, o_named_vid, o_sid, ov_sid, o_group, o_ts, ` + orderRevenue + ` AS o_revenue,
				` + orderCost + ` AS o_cost` + shipping + `
			FROM (` + orders + `)` + orderFilter
}

// orderAssignmentSQL is the stand-in assignment an order row carries on the
// visitors basis, packed as packedAssignment packs a real one: version 1,
// the unit's first order's time and group, not a bot, no attributes (its
// breakdown cell is "").
func orderAssignmentSQL(attrs []string) string {
	cols := []string{"toUInt64(1) AS a_version",
		"min(toUInt64(toUInt32(o_ts)) * 131072 + toUInt64(greatest(o_group + 1, 0))) AS a_pack0"}
	for _, a := range attrs {
		cols = append(cols, "'' AS a_"+a+"0")
	}
	return strings.Join(cols, ", ") + ", "
}

// withOrderVisitorsSQL is, for the sessions basis, the assignment rows
// plus one stand-in row per counting order for the unit it counts for, in
// its group, with version 1 (below every real assignment's) and empty
// attributes.
func withOrderVisitorsSQL(attrs []string) string {
	stand := make([]string, 0, len(attrs))
	for _, a := range attrs {
		stand = append(stand, "'' AS s_"+a)
	}
	sep := ""
	if len(attrs) > 0 {
		sep = ", "
	}
	return `(
		SELECT shop_id, experiment_id, visitor_id, version, test_group, is_bot, assigned_at` + sep + strings.Join(attrs, ", ") + `
		FROM {db}.assignments
		WHERE shop_id = @shop AND experiment_id = @exp
		UNION ALL
		SELECT toInt64(@shop) AS s_shop, toString(@exp) AS s_exp, o_vid, toUInt64(1) AS s_version, o_group,
			toUInt8(0) AS s_bot, o_ts` + sep + strings.Join(stand, ", ") + `
		FROM (` + latestOrdersSQL() + `))`
}
