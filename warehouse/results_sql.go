package warehouse

import (
	"strings"
)

// The results SQL, built per query from a few fixed parts. It runs on
// ClickHouse 18.16 and on current versions (DESIGN §4): only UNION ALL,
// ALL LEFT/INNER JOIN … USING over subqueries whose right side is unique per
// key, argMax, -If combinators and toDate(ts, tz). Parameters are named
// (@shop, @exp, @tz, @from, @to, @products) and bound by clickhouse-go as
// literals. Aliases never reuse a column name: 18.16 substitutes aliases
// inside aggregate arguments.
//
// Shape: one row per unit of activity, from a UNION ALL of per-unit
// aggregates of sessions, events and page views (read pre-aggregated,
// results_activity.go) and orders (latest version each), summed per unit; then summed per group and breakdown cell. On the
// visitors basis the raw assignment rows ride in the same UNION ALL and the
// unit's group is argMax(…, version) over them (first assignment wins; bots
// and excluded visitors dropped), so no join is needed; on the sessions
// basis the per-visitor assignments are joined to the sessions.

func inWindow(col string) string {
	return "toDate(" + col + ", @tz) >= toDate(@from) AND toDate(" + col + ", @tz) <= toDate(@to)"
}

// assignmentsSQL is one row per assigned visitor: its group and the
// attributes breakdowns read. byDate filters on the assignment's local date
// (visitors basis: a visitor belongs to the window it was assigned in).
func assignmentsSQL(byDate bool, dims []Dimension, where ...string) string {
	return assignedSQL("{db}.assignments", byDate, dims, where...)
}

// assignedSQL is assignmentsSQL over from, a table or subquery with the
// assignment columns. a_hit (always 1) tells a row that met an assignment
// in a LEFT JOIN from one that got the join's defaults.
func assignedSQL(from string, byDate bool, dims []Dimension, where ...string) string {
	having := "a_group >= 0 AND a_bot = 0 AND a_device != 'bot'"
	if byDate {
		having += " AND " + inWindow("a_at")
	}
	var attrs strings.Builder
	for _, c := range assignmentAttrs(dims) {
		attrs.WriteString(", argMax(" + c + ", version) AS a_" + c)
	}
	return `SELECT ` + vidSQL("visitor_id") + ` AS vid,
		argMax(test_group, version) AS a_group, argMax(is_bot, version) AS a_bot, argMax(assigned_at, version) AS a_at,
		toUInt8(1) AS a_hit` + attrs.String() + `
	FROM ` + from + `
	WHERE shop_id = @shop AND experiment_id = @exp` + strings.Join(where, "") + `
	GROUP BY vid
	HAVING ` + having
}

// assignmentAttrs are the assignment columns a breakdown reads, device
// always (bots are also marked by device).
func assignmentAttrs(dims []Dimension) []string {
	cols := []string{"device"}
	seen := map[string]bool{"device": true}
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			cols = append(cols, c)
		}
	}
	for _, d := range dims {
		switch d {
		case "country", "visitor_type", "utm_source", "utm_medium", "utm_campaign":
			add(string(d))
		case "traffic_source":
			add("utm_source")
			add("utm_medium")
			add("gclid")
			add("fbclid")
		}
	}
	return cols
}

// vidSQL keys units by a 64-bit hash of the visitor id: grouping and
// joining a million visitors on UInt64 is much cheaper than on strings, and
// a collision among 10⁶ ids has probability about 3·10⁻⁸.
func vidSQL(col string) string { return "cityHash64(" + col + ")" }

func hasDimension(dims []Dimension, d Dimension) bool {
	for _, x := range dims {
		if x == d {
			return true
		}
	}
	return false
}

// trafficSourceSQL classifies a visitor's arrival from its click ids and UTM
// tags: paid (ad click id or a paid medium), email, social, referral (a
// source without a paid medium), direct.
const trafficSourceSQL = `multiIf(a_gclid != '' OR a_fbclid != '' OR a_utm_medium IN ('cpc', 'ppc', 'paid', 'paidsocial', 'display'), 'paid',
	a_utm_medium = 'email', 'email', a_utm_medium = 'social', 'social', a_utm_source != '', 'referral', 'direct')`

func dimensionSQL(d Dimension, basis Basis) string {
	switch d {
	case "traffic_source":
		return trafficSourceSQL
	case "landing_page":
		return "x_landing"
	case "date":
		if basis == BasisSessions {
			return "toString(toDate(x_start, @tz))"
		}
		return "toString(toDate(a_at, @tz))"
	}
	return "a_" + string(d)
}

func keySQL(q MetricsQuery) string {
	if len(q.Breakdown) == 0 {
		return "''"
	}
	parts := make([]string, len(q.Breakdown))
	for i, d := range q.Breakdown {
		parts[i] = dimensionSQL(d, q.Basis)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "concat(" + strings.Join(parts, ", '"+KeySeparator+"', ") + ")"
}

// dataFacts are what GroupMetrics learns of a test's rows before it builds
// the statement.
type dataFacts struct {
	// orphanSessions: some page loads name no visitor (sent with the
	// contract's three parameters). Only then is the session → visitor
	// lookup joined: it reads the session id of every event of the test.
	orphanSessions bool
	// orphanEvents: some add-to-carts or checkouts name no visitor (the
	// legacy /api/analytics/add-to-cart and /checkout calls carry a
	// session only); they belong to the visitor of that session.
	orphanEvents bool
}

// unitParts is what the per-unit steps of one query share: its basis,
// product scope and unit key.
type unitParts struct {
	q        MetricsQuery
	facts    dataFacts
	sessions bool   // sessions basis: a unit is (visitor, session)
	scoped   bool   // the metrics are scoped to a product group
	key      string // the per-unit GROUP BY key
	// noAssignment is the assignment columns an activity row carries on the
	// visitors basis (zeros, so argMax picks the assignment's).
	noAssignment string
}

func newUnitParts(q MetricsQuery, f dataFacts) unitParts {
	u := unitParts{q: q, facts: f, sessions: q.Basis == BasisSessions, scoped: len(q.ProductIDs) > 0}
	// Units group by one UInt64 on the visitors basis: a constant second key
	// would force the slower composite-key hashing of ClickHouse.
	u.key = "vid"
	if u.sessions {
		u.key = "vid, sid"
	} else {
		zeros, _, _ := packedAssignment(assignmentAttrs(q.Breakdown))
		u.noAssignment = strings.Join(zeros, ", ") + ", "
	}
	return u
}

// sid is the session column of a unit row: the session on the sessions
// basis, empty on the visitors basis.
func (u unitParts) sid(col string) string {
	if u.sessions {
		return col
	}
	return "''"
}

// unitsSQL is one row per unit (visitor, or visitor and session) with its
// activity in the window: a UNION ALL of per-unit rows of assignments
// (visitors basis), sessions, events, product page views and orders,
// summed per unit.
func unitsSQL(q MetricsQuery, f dataFacts) string {
	u := newUnitParts(q, f)
	assignmentAggs, having := "", "\n\tHAVING sid != ''"
	var union []string
	if !u.sessions {
		// Visitors basis: the assignments ride in the same UNION ALL and the
		// unit's group and attributes are argMax(…, version) over its rows
		// (the first assignment has the highest version; activity rows carry
		// 0), so no join is needed. Sessions basis joins them afterwards.
		_, cols, aggs := packedAssignment(assignmentAttrs(q.Breakdown))
		assignmentAggs = strings.Join(aggs, ", ") + ",\n\t\t"
		having = "\n\tHAVING a_v > 0 AND a_group >= 0 AND a_bot = 0 AND a_device != 'bot' AND " + inWindow("a_at")
		union = append(union, assignmentRowsSQL(cols, u.noShipping()))
	}
	union = append(union, u.sessionRowsSQL(), u.activityRowsSQL())
	if u.scoped {
		union = append(union, u.productRowsSQL())
	}
	union = append(union, u.orderRowsSQL())
	return u.perUnitSQL(assignmentAggs, union, having)
}

// packedAssignment is the assignment columns of the visitors basis: zeros
// for activity rows, the assignment row's columns, and the per-unit
// aggregates that pick the first assignment. Group, bot flag and time
// travel packed in one UInt64 (time·2¹⁷ + bot·2¹⁶ + group+1), so one
// argMax picks all three: a measurable saving over a million units.
func packedAssignment(attrs []string) (zeros, cols, aggs []string) {
	zeros = []string{"toUInt64(0) AS a_version", "toUInt64(0) AS a_pack0"}
	cols = []string{"version AS a_version",
		"toUInt64(toUInt32(assigned_at)) * 131072 + toUInt64(is_bot) * 65536 + toUInt64(test_group + 1) AS a_pack0"}
	aggs = []string{"max(a_version) AS a_v", "argMax(a_pack0, a_version) AS a_pack",
		"toInt16(toInt32(a_pack % 65536) - 1) AS a_group", "toUInt8(intDiv(a_pack, 65536) % 2) AS a_bot",
		"toDateTime(toUInt32(intDiv(a_pack, 131072))) AS a_at"}
	for _, a := range attrs {
		zeros = append(zeros, "'' AS a_"+a+"0")
		cols = append(cols, a+" AS a_"+a+"0")
		aggs = append(aggs, "argMax(a_"+a+"0, a_version) AS a_"+a)
	}
	return zeros, cols, aggs
}

// assignmentRowsSQL is the raw assignment rows of the visitors basis, with
// no activity.
func assignmentRowsSQL(cols []string, noShipping string) string {
	return `SELECT ` + vidSQL("visitor_id") + ` AS vid, '' AS sid, ` + strings.Join(cols, ", ") + `,
			toUInt64(0) AS u_sessions, toUInt64(0) AS u_pages, toUInt64(0) AS u_bounced, toFloat64(0) AS u_staying,
			toUInt64(0) AS u_orders, toFloat64(0) AS u_revenue, toFloat64(0) AS u_profit, ` + noShipping + `toUInt64(0) AS u_atc,
			toUInt64(0) AS u_chk, toUInt64(0) AS u_ct, toUInt64(0) AS u_viewed, '' AS u_landing, toDateTime(0) AS u_start
		FROM {db}.assignments
		WHERE shop_id = @shop AND experiment_id = @exp`
}

// perUnitSQL sums the UNION ALL rows per unit: its sessions, page loads,
// whether it bounced, seconds on site, orders, revenue, profit and flags.
func (u unitParts) perUnitSQL(assignmentAggs string, union []string, having string) string {
	// The landing page and a unit's first moment cost an argMin per unit:
	// read them only for the dimensions that need them.
	unitLanding, unitStart := "''", "toDateTime(0)"
	if hasDimension(u.q.Breakdown, "landing_page") {
		unitLanding = "argMinIf(u_landing, u_start, u_sessions > 0)"
	}
	if u.sessions && hasDimension(u.q.Breakdown, "date") {
		unitStart = "min(u_start)"
	}
	shipping := ""
	if u.q.Shipping {
		shipping = "sum(u_shipping) AS x_shipping, sum(u_unshipped) AS x_unshipped,"
	}
	return `SELECT ` + u.key + `, ` + assignmentAggs + `sum(u_sessions) AS x_sessions, sum(u_pages) AS x_pages,
		toUInt64(x_sessions > 0 AND sum(u_bounced) = x_sessions) AS x_bounced, sum(u_staying) AS x_staying,
		sum(u_orders) AS x_orders, sum(u_revenue) AS x_revenue, sum(u_profit) AS x_profit, ` + shipping + `
		sum(u_atc) AS x_atc, sum(u_chk) AS x_chk, sum(u_ct) AS x_ct, sum(u_viewed) AS x_viewed,
		` + unitLanding + ` AS x_landing, ` + unitStart + ` AS x_start
	FROM (
		` + strings.Join(union, "\n\t\tUNION ALL\n\t\t") + `
	)
	GROUP BY ` + u.key + having
}

// groupMetricsSQL sums the units per group (and breakdown cell). Its columns
// are the scan order of GroupMetrics.
func groupMetricsSQL(q MetricsQuery, f dataFacts) string {
	from, sessionCount := assignedUnitsSQL(q, f)
	return groupSumsSQL(q, from, sessionCount, "")
}

// groupSumsSQL sums the units of from (the columns unitsSQL gives) per group
// and breakdown cell; extra, when set, is one more UInt64 column at the end.
func groupSumsSQL(q MetricsQuery, from, sessionCount, extra string) string {
	where := ""
	if len(q.ProductIDs) > 0 {
		where = "\nWHERE x_viewed > 0"
	}
	if extra != "" {
		extra = ",\n\t" + extra
	}
	return `SELECT ` + keySQL(q) + ` AS key, a_group, toUInt64(count()) AS n, ` + sessionCount + ` AS sessions,
	toUInt64(countIf(x_orders > 0)) AS converted,
	toFloat64(sum(x_orders)) AS orders, toFloat64(sum(x_orders * x_orders)) AS orders_sq,
	toFloat64(sum(x_revenue)) AS revenue, toFloat64(sum(x_revenue * x_revenue)) AS revenue_sq,
	toFloat64(sum(x_revenue * x_orders)) AS revenue_orders,
	toFloat64(sum(x_profit)) AS profit, toFloat64(sum(x_profit * x_profit)) AS profit_sq,
	toUInt64(countIf(x_atc > 0)) AS atc, toUInt64(countIf(x_chk > 0 OR x_orders > 0)) AS chk,
	toUInt64(countIf(x_ct > 0)) AS ct, toUInt64(sum(x_bounced)) AS bounced, toUInt64(sum(x_pages)) AS pages,
	toFloat64(sum(x_staying)) AS staying, toFloat64(sum(x_staying * x_staying)) AS staying_sq,
	` + cappedColumnsSQL(q.Caps) + shippingColumnsSQL(q) + extra + `
FROM ` + from + where + `
GROUP BY key, a_group
ORDER BY key, a_group`
}

// shippingColumnsSQL is groupSumsSQL's shipping columns, after the capped
// ones, when q asks for them (MetricsQuery.Shipping).
func shippingColumnsSQL(q MetricsQuery) string {
	if !q.Shipping {
		return ""
	}
	return ",\n\ttoFloat64(sum(x_shipping)) AS shipping, toUInt64(sum(x_unshipped)) AS unshipped"
}

// noShipping is the shipping columns of a unit row without orders, when
// the query reads shipping ("" otherwise: every branch of a UNION ALL has
// the same columns).
func (u unitParts) noShipping() string {
	if !u.q.Shipping {
		return ""
	}
	return "toFloat64(0) AS u_shipping, toUInt64(0) AS u_unshipped, "
}

// orderShipping is the shipping columns of a unit's order row: what its
// orders charged, over those that recorded it, and how many did not.
func (u unitParts) orderShipping() string {
	if !u.q.Shipping {
		return ""
	}
	return "toFloat64(sumIf(o_shipping, o_shipped = 1)) AS u_shipping, toUInt64(countIf(o_shipped = 0)) AS u_unshipped, "
}

// assignedUnitsSQL is the units of q with their group, and how a group's
// sessions are counted.
func assignedUnitsSQL(q MetricsQuery, f dataFacts) (from, sessionCount string) {
	if q.Basis == BasisSessions {
		// Every unit is a session; the assignment says only its group.
		assigned := assignedSQL(withOrderVisitorsSQL(assignmentAttrs(q.Breakdown)), false, q.Breakdown)
		return "(" + unitsSQL(q, f) + ") AS units\nALL INNER JOIN (" + assigned + ") AS assigned USING vid",
			"toUInt64(count())"
	}
	// Every assigned visitor is a unit, active or not; unitsSQL carries the
	// assignment.
	return "(" + unitsSQL(q, f) + ") AS units", "toUInt64(sum(x_sessions))"
}

// customEventsSQL counts custom events per name and group over the units of
// q: for each name, units that fired it and distinct event ids (merged from
// the uniqExact states of agg_custom_events, so a replayed event counts once).
func customEventsSQL(q MetricsQuery) string {
	// Only visitors who fired a custom event need their assignment: the IN
	// set is small and spares aggregating every assignment of the test.
	fired := ` AND visitor_id IN (SELECT visitor_id FROM {db}.agg_custom_events
		WHERE shop_id = @shop AND experiment_id = @exp)`
	assignments := assignmentsSQL(true, nil, fired)
	if q.Basis == BasisSessions {
		assignments = assignmentsSQL(false, nil, fired)
	}
	return customEventsOverSQL(q.Basis, assignments)
}

// customEventsOverSQL counts custom events per name and group over the
// fired rows that meet assignments (vid, a_group, a_hit) of their visitor: units
// that fired each name (visitors as vid, or sessions) and distinct event
// ids, merged straight from the uniqExact states (an event id is one
// event, whichever rows carry it).
//
// assignments has one row per vid, so each fired row meets at most one:
// ANY LEFT JOIN, keeping the rows that met one (a_hit), gives what an ALL
// INNER JOIN gives, in 25 ms instead of 63 ms on the bench test (ALL
// replicates the uniqExact states of every row through the join). ANY
// INNER JOIN would be as quick on 18.16, but current ClickHouse keeps one
// left row per key there too, and a visitor fires many rows. a_hit comes
// with the assignments: adding it here would take a subquery level, which
// 18.16 analyses again (5 ms on the bench test).
func customEventsOverSQL(basis Basis, assignments string) string {
	unit := vidSQL("visitor_id")
	if basis == BasisSessions {
		unit = "session_id"
	}
	return `SELECT c_name, a_group, toUInt64(uniqExact(c_unit)) AS units, toUInt64(uniqExactMerge(event_ids)) AS events
FROM (
	SELECT ` + vidSQL("visitor_id") + ` AS vid, ` + unit + ` AS c_unit, custom_name AS c_name, event_ids
	FROM {db}.agg_custom_events
	WHERE shop_id = @shop AND experiment_id = @exp AND is_bot = 0 AND ` + inWindow("bucket") + `) AS fired
ANY LEFT JOIN (` + assignments + `) AS assigned USING vid
WHERE a_hit = 1
GROUP BY c_name, a_group
ORDER BY c_name, a_group`
}
