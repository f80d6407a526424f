package warehouse

// The activity parts of the results SQL read the pre-aggregated tables
// (clickhouse/05*.sql, docs/results.md "Pre-aggregation") instead of every
// event, page load and page view: about one row per visitor, session and
// 15-minute bucket. Their window filter is on the bucket's local date,
// which is the local date of every row in it (offsets in use are multiples
// of 15 minutes). What the raw rows gave is kept exactly: the summed counts
// are read only as "did it happen" (> 0), which replayed copies cannot
// change, and distinct page loads and custom events come from uniqExact
// states, which count a replayed id once.

// sessionRowsSQL is one row per session: its distinct page loads, its
// duration, whether it bounced, and (when a breakdown needs it) its
// landing page. A session recorded with the contract's three parameters
// (shop, sessionId, experimentId) names no visitor: it belongs to the
// visitor of its assignment or events (sessionVisitorsSQL).
func (u unitParts) sessionRowsSQL() string {
	// The landing page costs a string argMin per session: read it only for
	// the dimension that needs it.
	landing := "''"
	if hasDimension(u.q.Breakdown, "landing_page") {
		landing = "argMinMerge(landing)"
	}
	// Sessions are told apart by a 64-bit hash of their id where the id
	// itself is not shown: grouping on a UInt64 is far cheaper than on a
	// string, and a collision within one test is improbable (about 10⁻⁷ for
	// 2·10⁶ sessions).
	sessionKey, sessionGroup := "cityHash64(session_id) AS s_key", "s_key"
	if u.sessions {
		sessionKey, sessionGroup = "session_id", "session_id"
	}
	// A session belongs to the visitor each page load names: a session whose
	// loads name two visitors is a session of each, as the visitor rollup
	// counts it. Loads that name none (orphans) take the session's visitor.
	visitor, lookup, byVisitor := "s_vid", "", ", s_vid"
	vidCol := "visitor_id AS s_vid"
	if u.facts.orphanSessions {
		byVisitor, vidCol = "", "max(visitor_id) AS s_vid"
		visitor = "if(s_vid != '', s_vid, m_vid)"
		lookup = `
		ALL LEFT JOIN (` + sessionVisitorsSQL(sessionKey, sessionGroup, orphanLoadSessions) + `) AS session_visitors USING ` + sessionGroup
	}
	return `SELECT ` + vidSQL(visitor) + ` AS vid, ` + u.sid("session_id") + ` AS sid, ` + u.noAssignment + `toUInt64(1) AS u_sessions, toUInt64(s_pages) AS u_pages,
			toUInt64(s_pages = 1) AS u_bounced, toFloat64(s_dur) AS u_staying, toUInt64(0) AS u_orders,
			toFloat64(0) AS u_revenue, toFloat64(0) AS u_profit, ` + u.noShipping() + `toUInt64(0) AS u_atc, toUInt64(0) AS u_chk,
			toUInt64(0) AS u_ct, toUInt64(0) AS u_viewed, s_landing AS u_landing, s_start AS u_start
		FROM (
			SELECT ` + sessionKey + `, ` + vidCol + `, uniqExactMerge(record_ids) AS s_pages,
				maxMerge(last_seen) - minMerge(first_seen) AS s_dur, ` + landing + ` AS s_landing, minMerge(first_seen) AS s_start
			FROM {db}.agg_session_pages
			WHERE shop_id = @shop AND experiment_id = @exp AND is_bot = 0 AND ` + inWindow("bucket") + `
			GROUP BY ` + sessionGroup + byVisitor + `) AS session_pages` + lookup
}

// The sessions whose page loads, or whose add-to-carts and checkouts,
// name no visitor.
const (
	orphanLoadSessions = `session_id IN (SELECT session_id FROM {db}.agg_session_pages
					WHERE shop_id = @shop AND experiment_id = @exp AND visitor_id = '')`
	orphanEventSessions = `session_id IN (SELECT session_id FROM {db}.agg_event_activity
					WHERE shop_id = @shop AND experiment_id = @exp AND visitor_id = '')`
)

// sessionVisitorsSQL maps each session of orphans (a condition on
// session_id) to the visitor its assignment (preferred) or its events name.
// Only those sessions are looked up, so the right side of the join stays
// small.
func sessionVisitorsSQL(sessionKey, sessionGroup, orphans string) string {
	return `
			SELECT ` + sessionKey + `, argMax(m_visitor, m_rank) AS m_vid
			FROM (
				SELECT session_id, visitor_id AS m_visitor, toUInt8(1) AS m_rank FROM {db}.assignments
				WHERE shop_id = @shop AND experiment_id = @exp AND ` + orphans + `
				UNION ALL
				SELECT session_id, visitor_id AS m_visitor, toUInt8(0) AS m_rank FROM {db}.agg_event_activity
				WHERE shop_id = @shop AND experiment_id = @exp AND events > 0 AND visitor_id != '' AND ` + orphans + `)
			GROUP BY ` + sessionGroup
}

// activityRowsSQL is one row per unit with events or product page views:
// whether it added to cart and reached checkout (unscoped; productRowsSQL
// says it for a product group) and whether it viewed a product page.
func (u unitParts) activityRowsSQL() string {
	atc, chk := "toUInt64(sum(added_to_cart))", "toUInt64(sum(checkouts))"
	// On the visitors basis only these counts matter (the assignment makes
	// the unit); on the sessions basis any event or page view makes one.
	only := " AND (added_to_cart > 0 OR checkouts > 0 OR page_views > 0)"
	if u.scoped {
		atc, chk, only = "toUInt64(0)", "toUInt64(0)", " AND page_views > 0"
	}
	if u.sessions {
		only = ""
	}
	from := "{db}.agg_event_activity"
	if u.facts.orphanEvents {
		// A legacy add-to-cart or checkout names its session only: it is
		// the activity of that session's visitor.
		from = `(
			SELECT shop_id, experiment_id, if(visitor_id != '', visitor_id, m_vid) AS visitor_id, session_id, bucket, is_bot,
				added_to_cart, checkouts, page_views
			FROM {db}.agg_event_activity
			ALL LEFT JOIN (` + sessionVisitorsSQL("session_id", "session_id", orphanEventSessions) + `) AS session_visitors USING session_id
			WHERE shop_id = @shop AND experiment_id = @exp) AS event_activity`
	}
	return `SELECT ` + vidSQL("visitor_id") + ` AS vid, ` + u.sid("session_id") + ` AS sid, ` + u.noAssignment + `toUInt64(0) AS u_sessions, toUInt64(0) AS u_pages,
			toUInt64(0) AS u_bounced, toFloat64(0) AS u_staying, toUInt64(0) AS u_orders,
			toFloat64(0) AS u_revenue, toFloat64(0) AS u_profit, ` + u.noShipping() + atc + ` AS u_atc, ` + chk + ` AS u_chk,
			toUInt64(sum(page_views)) AS u_ct, toUInt64(0) AS u_viewed, '' AS u_landing, min(bucket) AS u_start
		FROM ` + from + `
		WHERE shop_id = @shop AND experiment_id = @exp AND is_bot = 0 AND ` + inWindow("bucket") + only + `
		GROUP BY ` + u.key
}

// productRowsSQL is, for a query scoped to a product group, one row per
// unit that did something with one of its products: added it to cart,
// started a checkout with it, viewed it (event or product page view).
func (u unitParts) productRowsSQL() string {
	return `SELECT ` + vidSQL("visitor_id") + ` AS vid, ` + u.sid("session_id") + ` AS sid, ` + u.noAssignment + `toUInt64(0) AS u_sessions, toUInt64(0) AS u_pages,
			toUInt64(0) AS u_bounced, toFloat64(0) AS u_staying, toUInt64(0) AS u_orders,
			toFloat64(0) AS u_revenue, toFloat64(0) AS u_profit, ` + u.noShipping() + `toUInt64(sum(added_to_cart)) AS u_atc,
			toUInt64(sum(checkouts_started)) AS u_chk, toUInt64(0) AS u_ct,
			toUInt64(sum(product_views) + sum(page_views)) AS u_viewed, '' AS u_landing, min(bucket) AS u_start
		FROM {db}.agg_product_activity
		WHERE shop_id = @shop AND experiment_id = @exp AND is_bot = 0 AND ` + inWindow("bucket") + ` AND has(@products, product_id)
		GROUP BY ` + u.key
}
