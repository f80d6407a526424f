package warehouse

import (
	"context"
	"fmt"
	"strconv"

	"github.com/liftab/lift/results"
)

// CUPED's covariates (results.Warehouse.Covariates): each unit's activity
// in the CUPEDLookbackDays before its visitor's first assignment to the
// test, read from every test's rows of the shop (and the events recorded
// outside any test, experiment_id ''), so that what the test showed cannot
// have shaped it. It runs on ClickHouse 18.16 and current versions under
// the rules of results_sql.go.

// CovariateRow is the results port's type, named here as the others are.
type CovariateRow = results.CovariateRow

// Covariates sums, per group and breakdown cell (keyed as GroupMetrics
// keys them), the pre-exposure covariates of the units of q and their
// products with the units' metric values, those GroupMetrics sums for the
// same q (capped at q.Caps).
func (w *Warehouse) Covariates(ctx context.Context, q MetricsQuery) ([]CovariateRow, error) {
	if err := validate(q); err != nil {
		return nil, fmt.Errorf("warehouse.Covariates: %w", err)
	}
	facts, err := w.facts(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("warehouse.Covariates %s: %w", q.ExperimentID, err)
	}
	rows, err := w.conn.Query(ctx, w.render(covariatesSQL(q, facts)), args(q)...)
	if err != nil {
		return nil, fmt.Errorf("warehouse.Covariates %s: %w", q.ExperimentID, err)
	}
	defer rows.Close()
	var out []CovariateRow
	for rows.Next() {
		var r CovariateRow
		var g int16
		var n, seen uint64
		if err := rows.Scan(&r.Key, &g, &n, &seen, &r.PreRevenue, &r.PreRevenueSq, &r.RevenueCross, &r.RevenueCappedCross,
			&r.ProfitCross, &r.ProfitCappedCross, &r.PreActivity, &r.PreActivitySq, &r.ConvertedCross,
			&r.AddToCartCross, &r.CheckoutCross, &r.PreOrders, &r.PreOrdersSq, &r.OrdersPreOrdersCross,
			&r.PreRevenuePreOrdersCross, &r.RevenuePreOrdersCross, &r.RevenueCappedPreOrdersCross,
			&r.OrdersPreRevenueCross); err != nil {
			return nil, fmt.Errorf("warehouse.Covariates %s: %w", q.ExperimentID, err)
		}
		r.TestGroup, r.N, r.WithHistory = int(g), int64(n), int64(seen)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("warehouse.Covariates %s: %w", q.ExperimentID, err)
	}
	return out, nil
}

// covariatesSQL joins the units of q (as GroupMetrics reads them, so that
// Y and the breakdown key are the same per unit) to their visitors'
// pre-exposure activity and sums per cell and group. A unit without
// history joins nothing: its covariates are 0. The columns are the scan
// order of Covariates; those after converted_cross serve the engagement
// rates and average order value (revenue over orders, adjusted with the
// lookback's revenue over orders).
func covariatesSQL(q MetricsQuery, f dataFacts) string {
	from, _ := assignedUnitsSQL(q, f)
	where := ""
	if len(q.ProductIDs) > 0 {
		where = "\n\tWHERE x_viewed > 0"
	}
	rev, profit := "x_revenue", "x_profit"
	if q.Caps != nil {
		rev, profit = capped("x_revenue", q.Caps.Revenue), capped("x_profit", q.Caps.Profit)
	}
	return `SELECT u_key, a_group, toUInt64(count()) AS n, toUInt64(countIf(c_seen > 0)) AS seen,
	toFloat64(sum(c_revenue)) AS pre_revenue, toFloat64(sum(c_revenue * c_revenue)) AS pre_revenue_sq,
	toFloat64(sum(c_revenue * u_revenue)) AS revenue_cross, toFloat64(sum(c_revenue * ` + rev + `)) AS revenue_capped_cross,
	toFloat64(sum(c_revenue * u_profit)) AS profit_cross, toFloat64(sum(c_revenue * ` + profit + `)) AS profit_capped_cross,
	toFloat64(sum(c_activity)) AS pre_activity, toFloat64(sum(c_activity * c_activity)) AS pre_activity_sq,
	toFloat64(sum(c_activity * u_converted)) AS converted_cross,
	toFloat64(sum(c_activity * u_atc)) AS atc_cross, toFloat64(sum(c_activity * u_chk)) AS chk_cross,
	toFloat64(sum(c_orders)) AS pre_orders, toFloat64(sum(c_orders * c_orders)) AS pre_orders_sq,
	toFloat64(sum(u_orders * c_orders)) AS orders_pre_orders_cross,
	toFloat64(sum(c_revenue * c_orders)) AS pre_revenue_pre_orders_cross,
	toFloat64(sum(u_revenue * c_orders)) AS revenue_pre_orders_cross,
	toFloat64(sum(c_orders * ` + rev + `)) AS revenue_capped_pre_orders_cross,
	toFloat64(sum(u_orders * c_revenue)) AS orders_pre_revenue_cross
FROM (
	SELECT vid, ` + keySQL(q) + ` AS u_key, a_group, x_revenue, x_profit, toFloat64(x_revenue) AS u_revenue,
		toFloat64(x_profit) AS u_profit, toFloat64(x_orders > 0) AS u_converted, toFloat64(x_orders) AS u_orders,
		toFloat64(x_atc > 0) AS u_atc, toFloat64(x_chk > 0 OR x_orders > 0) AS u_chk
	FROM ` + from + where + `) AS metric_units
ALL LEFT JOIN (` + preExposureSQL(q.Basis == BasisVisitors) + `) AS pre_exposure USING vid
GROUP BY u_key, a_group
ORDER BY u_key, a_group`
}

// CUPEDLookbackDays is how far before its first assignment a visitor's
// activity counts as its covariate: a fixed period for every visitor, so
// that X measures the same span for early and late arrivals.
const CUPEDLookbackDays = 28

// preExposureSQL is one row per visitor of the test with activity in the
// lookback before its first assignment: its revenue (c_revenue), its
// purchase intent (c_activity: orders plus add-to-carts) and whether it had
// any (c_seen). An order counts once however many tests recorded it: each
// test's orders table row in its latest version, else the legacy
// checkout_completed event that named it (a visitor outside every test
// left only that); the orders table's amount wins over the event's.
// windowed (visitors basis: every unit was assigned inside the window)
// lets the scan skip the months before the window's lookback.
func preExposureSQL(windowed bool) string {
	visitors := ` AND visitor_id IN (SELECT visitor_id FROM {db}.assignments WHERE shop_id = @shop AND experiment_id = @exp)`
	eventSpan := ""
	if windowed {
		eventSpan = " AND toDate(created_at) >= toDate(@from) - " + strconv.Itoa(CUPEDLookbackDays+2)
	}
	lookback := strconv.Itoa(CUPEDLookbackDays * 86400)
	return `
		SELECT vid, toFloat64(sum(k_revenue)) AS c_revenue, toFloat64(sum(k_order) + sum(k_atc)) AS c_activity,
			toFloat64(sum(k_order)) AS c_orders, toUInt64(count()) AS c_seen
		FROM (
			SELECT vid, p_key, argMax(p_amount, p_rank) AS k_revenue, max(p_order) AS k_order, max(p_atc) AS k_atc
			FROM (
				SELECT vid, p_key, p_amount, p_rank, p_order, p_atc, p_ts FROM (
					SELECT ` + vidSQL("o_visitor") + ` AS vid, order_id AS p_key, o_amount AS p_amount, toUInt8(2) AS p_rank,
						toUInt8(1) AS p_order, toUInt8(0) AS p_atc, o_created AS p_ts
					FROM (
						SELECT experiment_id AS o_exp, order_id, argMaxIf(visitor_id, version, visitor_id != '') AS o_visitor,
							argMax(toFloat64(revenue), version) AS o_amount, argMax(created_at, version) AS o_created,
							argMax(is_bot, version) AS o_bot
						FROM {db}.orders
						WHERE shop_id = @shop` + visitors + `
						GROUP BY o_exp, order_id
						HAVING o_bot = 0 AND o_visitor != '') AS test_orders
					UNION ALL
					SELECT ` + vidSQL("visitor_id") + ` AS vid,
						if(event_type = 'checkout_completed' AND order_id != '', order_id, concat('event:', event_id)) AS p_key,
						if(event_type = 'checkout_completed', revenue, toFloat64(0)) AS p_amount, toUInt8(1) AS p_rank,
						toUInt8(event_type = 'checkout_completed') AS p_order, toUInt8(event_type = 'product_added_to_cart') AS p_atc,
						created_at AS p_ts
					FROM {db}.events
					WHERE shop_id = @shop AND is_bot = 0 AND event_type IN ('checkout_completed', 'product_added_to_cart')` + eventSpan + visitors + `
				) AS history
				ALL INNER JOIN (
					SELECT vid, a_at AS p_at FROM (` + assignmentsSQL(false, nil) + `)) AS first_assigned USING vid
				WHERE p_ts < p_at AND p_ts >= p_at - ` + lookback + `)
			GROUP BY vid, p_key)
		GROUP BY vid`
}
