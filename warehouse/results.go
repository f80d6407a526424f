package warehouse

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/liftab/lift/results"
)

// The results port's types, named here too so the adapter's code and its
// callers read as before: the definitions live in results.
type (
	Basis          = results.Basis
	Dimension      = results.Dimension
	MetricsQuery   = results.MetricsQuery
	Sums           = results.Sums
	GroupRow       = results.GroupRow
	CustomEventRow = results.CustomEventRow
	ExportRow      = results.ExportRow
)

const (
	BasisVisitors = results.BasisVisitors
	BasisSessions = results.BasisSessions
	MaxDimensions = results.MaxDimensions
	KeySeparator  = results.KeySeparator
)

// Dimensions lists every breakdown dimension, in the contract's order.
var Dimensions = results.Dimensions

// The Warehouse is the results port, with the optional ports the service
// uses when they are there.
var (
	_ results.Warehouse      = (*Warehouse)(nil)
	_ results.CappedMetrics  = (*Warehouse)(nil)
	_ results.RollupPreparer = (*Warehouse)(nil)
	_ results.Settler        = (*Warehouse)(nil)
)

var (
	datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	idPattern   = regexp.MustCompile(`^[0-9]+$`)
)

func validate(q MetricsQuery) error {
	if !datePattern.MatchString(q.From) || !datePattern.MatchString(q.To) {
		return fmt.Errorf("window %q..%q is not two YYYY-MM-DD dates", q.From, q.To)
	}
	if _, err := time.LoadLocation(q.Timezone); err != nil || q.Timezone == "" {
		return fmt.Errorf("timezone %q: not an IANA zone", q.Timezone)
	}
	if q.Basis != BasisVisitors && q.Basis != BasisSessions {
		return fmt.Errorf("basis %q", q.Basis)
	}
	if len(q.Breakdown) > MaxDimensions {
		return fmt.Errorf("%d dimensions, at most %d", len(q.Breakdown), MaxDimensions)
	}
	for _, d := range q.Breakdown {
		if !d.Known() {
			return fmt.Errorf("dimension %q", d)
		}
	}
	for _, p := range q.ProductIDs {
		if !idPattern.MatchString(p) {
			return fmt.Errorf("product id %q is not numeric", p)
		}
	}
	return nil
}

// GroupMetrics computes, in one ClickHouse query, every per-group sum of
// §2.7 for a test: per unit first (GROUP BY visitor or session), then per
// group (and breakdown cell). Bots are excluded; events count once however
// often the ingest replayed them (only existence per unit is used, and page
// loads count distinct record ids); each order counts in its latest version;
// a visitor's group is its first assignment.
func (w *Warehouse) GroupMetrics(ctx context.Context, q MetricsQuery) ([]GroupRow, error) {
	if err := validate(q); err != nil {
		return nil, fmt.Errorf("warehouse.GroupMetrics: %w", err)
	}
	facts, base, err := w.factsAndBase(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("warehouse.GroupMetrics %s: %w", q.ExperimentID, err)
	}
	if rollupEligible(q, facts) {
		rows, _, ok, err := w.rollupRead(ctx, q, base, false)
		if err != nil {
			return nil, fmt.Errorf("warehouse.GroupMetrics %s: rollup: %w", q.ExperimentID, err)
		}
		if ok {
			return rows, nil
		}
	}
	rows, err := w.rawGroupMetrics(ctx, q, facts)
	if err != nil {
		return nil, fmt.Errorf("warehouse.GroupMetrics %s: %w", q.ExperimentID, err)
	}
	return rows, nil
}

// rawGroupMetrics answers GroupMetrics from the pre-aggregates and raw
// tables (results_sql.go), for every query.
func (w *Warehouse) rawGroupMetrics(ctx context.Context, q MetricsQuery, facts dataFacts) ([]GroupRow, error) {
	rows, err := w.conn.Query(ctx, w.render(groupMetricsSQL(q, facts)), args(q)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []GroupRow
	for rows.Next() {
		r, err := scanGroupRow(rows, q.Shipping)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// scanGroupRow reads one row of groupSumsSQL, its shipping columns when
// the query asked for them, and into extra the columns after it.
func scanGroupRow(rows interface{ Scan(...any) error }, shipping bool, extra ...any) (GroupRow, error) {
	var r GroupRow
	var g int16
	var conv, atc, chk, ct, bounced, n, sessions, pages uint64
	dest := []any{&r.Key, &g, &n, &sessions, &conv, &r.Orders, &r.OrdersSq, &r.Revenue, &r.RevenueSq,
		&r.RevenueOrders, &r.Profit, &r.ProfitSq, &atc, &chk, &ct, &bounced, &pages, &r.Staying, &r.StayingSq,
		&r.RevenueCapped, &r.RevenueCappedSq, &r.RevenueOrdersCapped, &r.ProfitCapped, &r.ProfitCappedSq}
	var unshipped uint64
	if shipping {
		dest = append(dest, &r.Shipping, &unshipped)
	}
	if err := rows.Scan(append(dest, extra...)...); err != nil {
		return GroupRow{}, err
	}
	r.ShippingUnrecorded = int64(unshipped)
	r.TestGroup = int(g)
	r.N, r.Sessions, r.Converted, r.AddedToCart, r.ReachedCheckout = int64(n), int64(sessions), int64(conv), int64(atc), int64(chk)
	r.ClickedThrough, r.Bounced, r.PageViews = int64(ct), int64(bounced), int64(pages)
	return r, nil
}

// CustomEvents counts each custom event name per test group over the units
// of q (its Breakdown is ignored): units that fired it, distinct events.
func (w *Warehouse) CustomEvents(ctx context.Context, q MetricsQuery) ([]CustomEventRow, error) {
	q.Breakdown = nil
	if err := validate(q); err != nil {
		return nil, fmt.Errorf("warehouse.CustomEvents: %w", err)
	}
	statement, params := customEventsSQL(q), args(q)
	if q.Basis == BasisVisitors {
		// The fired visitors' assignments are looked up in the rollup's copy
		// when there is one (results_rollup_custom.go).
		base, err := w.rollupBase(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("warehouse.CustomEvents %s: %w", q.ExperimentID, err)
		}
		if base.build > 0 {
			fresh, err := w.newlyNamed(ctx, q, base.part, base.build, "fired", firedVisitorsSQL)
			if err != nil {
				return nil, fmt.Errorf("warehouse.CustomEvents %s: %w", q.ExperimentID, err)
			}
			others, err := w.rollupS(ctx, q, base)
			if err != nil {
				return nil, fmt.Errorf("warehouse.CustomEvents %s: %w", q.ExperimentID, err)
			}
			statement, ctx = rollupCustomEventsSQL(len(others) > 0, fresh), withS(ctx, others)
			params = append(params, clickhouse.Named("base", base.part), clickhouse.Named("build", base.build))
		}
	}
	out, err := w.customEventRows(ctx, statement, params)
	if err != nil {
		return nil, fmt.Errorf("warehouse.CustomEvents %s: %w", q.ExperimentID, err)
	}
	return out, nil
}

// customEventRows runs a custom events statement.
func (w *Warehouse) customEventRows(ctx context.Context, statement string, params []any) ([]CustomEventRow, error) {
	rows, err := w.conn.Query(ctx, w.render(statement), params...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CustomEventRow
	for rows.Next() {
		var r CustomEventRow
		var g int16
		var units, events uint64
		if err := rows.Scan(&r.Name, &g, &units, &events); err != nil {
			return nil, err
		}
		r.TestGroup, r.Units, r.Events = int(g), int64(units), int64(events)
		out = append(out, r)
	}
	return out, rows.Err()
}

// orphansSQL counts the test's page loads that name no visitor
// (agg_orphan_loads: one row per test that has any) and its add-to-carts
// and checkouts that name none (the legacy calls: agg_event_activity sorts
// the empty visitor id first, so this reads a prefix).
const orphansSQL = `SELECT
	(SELECT toUInt64(count()) FROM {db}.agg_orphan_loads WHERE shop_id = @shop AND experiment_id = @exp AND loads > 0),
	(SELECT toUInt64(count()) FROM {db}.agg_event_activity
		WHERE shop_id = @shop AND experiment_id = @exp AND visitor_id = '' AND (added_to_cart > 0 OR checkouts > 0))`

// facts learns what the statement for q must handle: a look at the
// orphans spares a scan of every event's session id when nothing needs it.
func (w *Warehouse) facts(ctx context.Context, q MetricsQuery) (dataFacts, error) {
	var loads, events uint64
	if err := w.conn.QueryRow(ctx, w.render(orphansSQL), args(q)...).Scan(&loads, &events); err != nil {
		return dataFacts{}, err
	}
	return dataFacts{orphanSessions: loads > 0, orphanEvents: events > 0}, nil
}

// factsAndBase learns the facts of q and, where the rollup may serve q,
// its base part, at once: two small reads that need not wait for each
// other.
func (w *Warehouse) factsAndBase(ctx context.Context, q MetricsQuery) (dataFacts, rollupBase, error) {
	var base rollupBase
	var baseErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if rollupEligible(q, dataFacts{}) {
			base, baseErr = w.rollupBase(ctx, q)
		}
	}()
	facts, err := w.facts(ctx, q)
	<-done
	return facts, base, errors.Join(err, baseErr)
}

func (w *Warehouse) render(sql string) string {
	return strings.ReplaceAll(sql, "{db}", "`"+w.db+"`")
}

// args binds the named parameters of the queries. clickhouse-go substitutes
// them client side as literals, which is what toDate(ts, tz) needs (its
// zone must be a constant).
func args(q MetricsQuery) []any {
	products := q.ProductIDs
	if products == nil {
		products = []string{}
	}
	return []any{
		clickhouse.Named("shop", q.ShopID), clickhouse.Named("exp", q.ExperimentID),
		clickhouse.Named("tz", q.Timezone), clickhouse.Named("from", q.From), clickhouse.Named("to", q.To),
		clickhouse.Named("products", products),
	}
}
