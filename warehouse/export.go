package warehouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// exportOrdersSQL is each order of a test that results count, as results
// count it (standingOrdersSQL): its latest version (argMax … version, so
// the export never waits for ReplacingMergeTree merges), in the group it
// states, the visitor it names; bot orders and orders of bots or excluded
// visitors left out. Results and export therefore agree order by order.
var exportOrdersSQL = `SELECT order_id, o_ts, o_group, o_named_vid, o_sid, o_revenue, o_cost, o_currency, o_lines, o_qty, o_version
FROM (` + standingOrdersSQL([]string{"argMax(session_id, version) AS o_sid", "argMax(revenue, version) AS o_revenue",
	"argMax(cost, version) AS o_cost", "argMax(currency, version) AS o_currency",
	"argMax(length(line_variant_ids), version) AS o_lines", "argMax(arraySum(line_quantities), version) AS o_qty",
	"max(version) AS o_version"},
	[]string{"o_sid", "o_revenue", "o_cost", "o_currency", "o_lines", "o_qty", "o_version"}, "") + `)
WHERE o_group >= 0
ORDER BY o_ts, order_id`

// ExportOrders streams a test's orders, oldest first, to fn one row at a
// time: the driver reads the result block by block, so the export never
// holds the whole result in memory. It returns how many rows fn took; an
// error from fn stops the scan and is returned.
func (w *Warehouse) ExportOrders(ctx context.Context, shopID int64, experimentID string, fn func(*ExportRow) error) (int64, error) {
	rows, err := w.conn.Query(ctx, w.render(exportOrdersSQL),
		clickhouse.Named("shop", shopID), clickhouse.Named("exp", experimentID))
	if err != nil {
		return 0, fmt.Errorf("warehouse.ExportOrders %s: %w", experimentID, err)
	}
	defer rows.Close()
	var n int64
	var r ExportRow
	for rows.Next() {
		if err := rows.Scan(&r.OrderID, &r.CreatedAt, &r.TestGroup, &r.VisitorID, &r.SessionID, &r.Revenue, &r.Cost,
			&r.Currency, &r.LineItems, &r.Quantity, &r.Version); err != nil {
			return n, fmt.Errorf("warehouse.ExportOrders %s: %w", experimentID, err)
		}
		r.Version = OrderVersionMillis(r.Version) // without the signed priority (orders.go)
		if err := fn(&r); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("warehouse.ExportOrders %s: %w", experimentID, err)
	}
	return n, nil
}

// Attribution is the test group an order stands in for one test: what an
// edit of the order carries over to its next version.
type Attribution struct {
	ExperimentID string
	TestGroup    int16
	VisitorID    string
	SessionID    string
	CreatedAt    time.Time
	Version      uint64
}

const orderAttributionsSQL = `SELECT experiment_id, argMax(test_group, version), argMax(visitor_id, version),
	argMax(session_id, version), argMax(created_at, version), max(version)
FROM %s.orders
WHERE shop_id = ? AND order_id = ?
GROUP BY experiment_id
ORDER BY experiment_id`

// OrderAttributions returns, per test, how an order was attributed (its
// latest version). An order never attributed has none.
func (w *Warehouse) OrderAttributions(ctx context.Context, shopID int64, orderID string) ([]Attribution, error) {
	rows, err := w.conn.Query(ctx, fmt.Sprintf(orderAttributionsSQL, w.db), shopID, orderID)
	if err != nil {
		return nil, fmt.Errorf("warehouse.OrderAttributions %s: %w", orderID, err)
	}
	defer rows.Close()
	var out []Attribution
	for rows.Next() {
		var a Attribution
		if err := rows.Scan(&a.ExperimentID, &a.TestGroup, &a.VisitorID, &a.SessionID, &a.CreatedAt, &a.Version); err != nil {
			return nil, fmt.Errorf("warehouse.OrderAttributions %s: %w", orderID, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("warehouse.OrderAttributions %s: %w", orderID, err)
	}
	return out, nil
}

// The first assignment stands: the highest version is the earliest receipt
// (see Assignment and FirstWinsVersion).
const visitorAssignmentsSQL = `SELECT experiment_id, argMax(test_group, version), argMax(session_id, version)
FROM %s.assignments
WHERE shop_id = ? AND visitor_id = ?
GROUP BY experiment_id
ORDER BY experiment_id`

// VisitorGroup is a visitor's standing group in one test.
type VisitorGroup struct {
	ExperimentID string
	TestGroup    int16 // -1 when excluded
	SessionID    string
}

// VisitorAssignments returns the visitor's standing group in every test it
// was assigned in.
func (w *Warehouse) VisitorAssignments(ctx context.Context, shopID int64, visitorID string) ([]VisitorGroup, error) {
	rows, err := w.conn.Query(ctx, fmt.Sprintf(visitorAssignmentsSQL, w.db), shopID, visitorID)
	if err != nil {
		return nil, fmt.Errorf("warehouse.VisitorAssignments %s: %w", visitorID, err)
	}
	defer rows.Close()
	var out []VisitorGroup
	for rows.Next() {
		var g VisitorGroup
		if err := rows.Scan(&g.ExperimentID, &g.TestGroup, &g.SessionID); err != nil {
			return nil, fmt.Errorf("warehouse.VisitorAssignments %s: %w", visitorID, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("warehouse.VisitorAssignments %s: %w", visitorID, err)
	}
	return out, nil
}
