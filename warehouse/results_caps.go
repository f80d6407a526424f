package warehouse

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/liftab/lift/results"
)

// Caps is the results port's winsorizing caps.
type Caps = results.Caps

// WinsorCaps computes the caps of per-unit revenue and profit over the
// units of q (its Breakdown is ignored): the percentile-th quantile among
// units with a positive value, pooled over every group so that all groups
// are capped alike. quantileExact (in 18.16 and current) takes the order
// statistic at ⌊p·n⌋ rather than interpolating; a cap is a choice, and an
// exact one makes the capped sums reproducible. No converter gives cap 0.
func (w *Warehouse) WinsorCaps(ctx context.Context, q MetricsQuery, percentile float64) (Caps, error) {
	q.Breakdown, q.Caps = nil, nil
	if err := validate(q); err != nil {
		return Caps{}, fmt.Errorf("warehouse.WinsorCaps: %w", err)
	}
	if !(percentile > 0 && percentile < 1) {
		return Caps{}, fmt.Errorf("warehouse.WinsorCaps: percentile %v is not strictly between 0 and 1", percentile)
	}
	// Only the sessions basis ranks its units through the per-unit statement,
	// the one that must know of page loads without a visitor; the visitors
	// basis reads the orders alone, and GroupMetrics looks for them anyway.
	var facts dataFacts
	if q.Basis == BasisSessions {
		var err error
		if facts, err = w.facts(ctx, q); err != nil {
			return Caps{}, fmt.Errorf("warehouse.WinsorCaps %s: %w", q.ExperimentID, err)
		}
	}
	out := Caps{Percentile: percentile}
	if err := w.conn.QueryRow(ctx, w.render(winsorCapsSQL(q, facts, percentile)), args(q)...).
		Scan(&out.Revenue, &out.Profit); err != nil {
		return Caps{}, fmt.Errorf("warehouse.WinsorCaps %s: %w", q.ExperimentID, err)
	}
	// Old ClickHouse answers nan for a quantile of no rows.
	if math.IsNaN(out.Revenue) || math.IsInf(out.Revenue, 0) {
		out.Revenue = 0
	}
	if math.IsNaN(out.Profit) || math.IsInf(out.Profit, 0) {
		out.Profit = 0
	}
	return out, nil
}

// GroupMetricsCapped is WinsorCaps at percentile followed by GroupMetrics
// capped at those caps (both caps 0 when no unit converted: GroupMetrics
// then sums no capped values), in one read where the rollup's cube serves
// q: its statement gives each cell's order units, and the caps and capped
// sums are worked out here by the rules of WinsorCaps and cappedColumnsSQL.
// Elsewhere it runs the two reads.
func (w *Warehouse) GroupMetricsCapped(ctx context.Context, q MetricsQuery, percentile float64) ([]GroupRow, Caps, error) {
	q.Caps = nil
	if err := validate(q); err != nil {
		return nil, Caps{}, fmt.Errorf("warehouse.GroupMetricsCapped: %w", err)
	}
	if !(percentile > 0 && percentile < 1) {
		return nil, Caps{}, fmt.Errorf("warehouse.GroupMetricsCapped: percentile %v is not strictly between 0 and 1", percentile)
	}
	facts, base, err := w.factsAndBase(ctx, q)
	if err != nil {
		return nil, Caps{}, fmt.Errorf("warehouse.GroupMetricsCapped %s: %w", q.ExperimentID, err)
	}
	if rollupEligible(q, facts) {
		rows, units, ok, err := w.rollupRead(ctx, q, base, true)
		if err != nil {
			return nil, Caps{}, fmt.Errorf("warehouse.GroupMetricsCapped %s: rollup: %w", q.ExperimentID, err)
		}
		if ok {
			caps := capRows(rows, units, percentile)
			return rows, caps, nil
		}
	}
	caps, err := w.WinsorCaps(ctx, q, percentile)
	if err != nil {
		return nil, Caps{}, err
	}
	if caps.Revenue > 0 || caps.Profit > 0 {
		q.Caps = &caps
	}
	rows, err := w.GroupMetrics(ctx, q)
	return rows, caps, err
}

// capRows works out the caps at percentile over the order units of every
// row (units[i] holds row i's units as revenue, profit, orders triplets)
// and fills in each row's capped sums, as cappedColumnsSQL sums them. No
// converter gives caps 0 and capped sums 0, as GroupMetrics without caps.
func capRows(rows []GroupRow, units [][]float64, percentile float64) Caps {
	var revenue, profit []float64
	for _, u := range units {
		for i := 0; i+2 < len(u); i += 3 {
			if u[i] > 0 {
				revenue = append(revenue, u[i])
			}
			if u[i+1] > 0 {
				profit = append(profit, u[i+1])
			}
		}
	}
	caps := Caps{Percentile: percentile, Revenue: quantileExact(revenue, percentile), Profit: quantileExact(profit, percentile)}
	if caps.Revenue == 0 && caps.Profit == 0 {
		return caps
	}
	for r := range rows {
		row, u := &rows[r], units[r]
		for i := 0; i+2 < len(u); i += 3 {
			rc, pc, orders := math.Min(u[i], caps.Revenue), math.Min(u[i+1], caps.Profit), u[i+2]
			row.RevenueCapped += rc
			row.RevenueCappedSq += rc * rc
			row.RevenueOrdersCapped += rc * orders
			row.ProfitCapped += pc
			row.ProfitCappedSq += pc * pc
		}
	}
	return caps
}

// quantileExact is ClickHouse's quantileExact(level)(values): the element
// at ⌊level·n⌋ of the sorted values (0 without values).
func quantileExact(values []float64, level float64) float64 {
	if len(values) == 0 {
		return 0
	}
	slices.Sort(values)
	return values[min(int(level*float64(len(values))), len(values)-1)]
}

// winsorCapsSQL is the caps over the converters of q. On the visitors
// basis a converter's revenue is the sum of its counting orders of the
// window (standingOrdersSQL: the same orders, in the same units, as
// GroupMetrics), so the caps read only the orders and the assignments of
// visitors who ordered: at a million visitors that is a few hundredths of a
// second, where a second pass over every unit's events would double the
// snapshot's time. The one difference from GroupMetrics' units: a visitor
// assigned before a custom window who orders inside it is ranked here but
// is no unit there; the cap is a choice applied alike to every group, so
// that changes nothing's validity. The sessions basis (custom queries
// only) ranks its own units, sessions, over the full per-unit statement.
func winsorCapsSQL(q MetricsQuery, f dataFacts, percentile float64) string {
	p := strconv.FormatFloat(percentile, 'g', -1, 64)
	caps := `SELECT toFloat64(quantileExactIf(` + p + `)(x_revenue, x_revenue > 0)) AS revenue_cap,
	toFloat64(quantileExactIf(` + p + `)(x_profit, x_profit > 0)) AS profit_cap
FROM `
	if q.Basis == BasisSessions {
		from, _ := assignedUnitsSQL(q, f)
		where := ""
		if len(q.ProductIDs) > 0 {
			where = "\nWHERE x_viewed > 0"
		}
		return caps + from + where
	}
	orders := newUnitParts(q, f).scopedOrdersSQL()
	if len(q.ProductIDs) == 0 {
		// Unscoped, an order's revenue and cost are all it needs: its lines
		// are arrays, the costliest columns to read.
		orders = standingOrdersSQL([]string{"argMax(toFloat64(revenue), version) AS o_revenue",
			"argMax(toFloat64(cost), version) AS o_cost"},
			[]string{"o_revenue", "o_cost"}, " AND "+inWindow("o_ts"))
	}
	// An order stating no group (−1) is no unit's, as in GroupMetrics.
	return caps + `(
	SELECT o_vid, toFloat64(sum(o_revenue)) AS x_revenue, toFloat64(sum(o_revenue - o_cost)) AS x_profit
	FROM (` + orders + `) AS latest_orders
	WHERE o_group >= 0
	GROUP BY o_vid) AS converters`
}

// cappedColumnsSQL is the capped sums of GroupMetrics, in its scan order:
// zeros without caps. The caps are our own floats, written as literals.
func cappedColumnsSQL(c *Caps) string {
	if c == nil {
		return `toFloat64(0) AS revenue_capped, toFloat64(0) AS revenue_capped_sq, toFloat64(0) AS revenue_orders_capped,
	toFloat64(0) AS profit_capped, toFloat64(0) AS profit_capped_sq`
	}
	rc, pc := capped("x_revenue", c.Revenue), capped("x_profit", c.Profit)
	return `toFloat64(sum(` + rc + `)) AS revenue_capped, toFloat64(sum(` + rc + ` * ` + rc + `)) AS revenue_capped_sq,
	toFloat64(sum(` + rc + ` * x_orders)) AS revenue_orders_capped,
	toFloat64(sum(` + pc + `)) AS profit_capped, toFloat64(sum(` + pc + ` * ` + pc + `)) AS profit_capped_sq`
}

// capped is col capped at limit, the cap written as a literal.
func capped(col string, limit float64) string {
	return "least(" + col + ", toFloat64(" + strconv.FormatFloat(limit, 'g', -1, 64) + "))"
}
