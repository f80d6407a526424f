package warehouse

import (
	"context"
	"fmt"
	"time"

	"github.com/liftab/lift/experiment"
)

// Order priority lives in the version (clickhouse/0400_orders_signed_priority.sql):
// a row from a signed webhook has SignedOrderBit set above its Unix-ms
// version, a legacy row (receipt time in ms) never does. ReplacingMergeTree
// and argMax(…, version) then keep a signed row over any legacy one of the
// same (shop, test, order), whatever arrived last, and the latest among
// rows of one kind — without a change to the table or its queries.
const (
	SignedOrderBit   uint64 = 1 << 62
	orderVersionMask        = SignedOrderBit - 1
)

// SignedOrderVersion is the stored version of a signed row updated at ms.
func SignedOrderVersion(ms uint64) uint64 { return SignedOrderBit | ms&orderVersionMask }

// OrderVersionMillis is the Unix-ms part of a stored version, signed or not.
func OrderVersionMillis(v uint64) uint64 { return v & orderVersionMask }

// WebhookOrders implements experiment.WebhookOrders over w.
type WebhookOrders struct{ W *Warehouse }

var _ experiment.WebhookOrders = WebhookOrders{}

const insertSignedOrdersSQL = `INSERT INTO %s.orders (shop_id, experiment_id, order_id, version, test_group, visitor_id,
	session_id, revenue, cost, currency, line_product_ids, line_variant_ids, line_quantities, line_prices,
	created_at, source, is_bot, shipping, shipping_recorded)`

// WriteSignedOrders inserts the rows with the signed priority and source
// webhook. A rewrite of a row (same key and version) folds into it.
func (o WebhookOrders) WriteSignedOrders(ctx context.Context, rows []experiment.SignedOrder) error {
	if len(rows) == 0 {
		return nil
	}
	batch, err := o.W.conn.PrepareBatch(ctx, fmt.Sprintf(insertSignedOrdersSQL, o.W.db))
	if err != nil {
		return fmt.Errorf("warehouse.WriteSignedOrders: %w", err)
	}
	defer batch.Close()
	for _, r := range rows {
		if err := batch.Append(r.ShopID, r.ExperimentID, r.OrderID, SignedOrderVersion(r.Version), r.TestGroup, r.VisitorID,
			r.SessionID, r.Revenue, r.Cost, r.Currency, orEmpty(r.LineProductIDs), orEmpty(r.LineVariantIDs),
			orEmpty(r.LineQuantities), orEmpty(r.LinePrices), r.CreatedAt.UTC(), "webhook", uint8(0),
			r.Shipping, flag(r.ShippingRecorded)); err != nil {
			return fmt.Errorf("warehouse.WriteSignedOrders %s: %w", r.OrderID, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("warehouse.WriteSignedOrders: %w", err)
	}
	return nil
}

// orEmpty turns nil into an empty slice: the driver refuses nil arrays.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Only signed rows: an edit carries over the group a signed order stands
// in, never one an unauthenticated legacy post chose.
const signedOrderAttributionsSQL = `SELECT experiment_id, argMax(test_group, version), argMax(visitor_id, version),
	argMax(session_id, version), argMax(created_at, version), max(version)
FROM %s.orders
WHERE shop_id = ? AND order_id = ? AND version >= ?
GROUP BY experiment_id
ORDER BY experiment_id`

// SignedOrderAttributions returns, per test, how a signed order stands (its
// latest signed version, in ms). None when no webhook wrote the order.
func (o WebhookOrders) SignedOrderAttributions(ctx context.Context, shopID int64, orderID string) ([]experiment.OrderAttribution, error) {
	rows, err := o.W.conn.Query(ctx, fmt.Sprintf(signedOrderAttributionsSQL, o.W.db), shopID, orderID, SignedOrderBit)
	if err != nil {
		return nil, fmt.Errorf("warehouse.SignedOrderAttributions %s: %w", orderID, err)
	}
	defer rows.Close()
	var out []experiment.OrderAttribution
	for rows.Next() {
		var a experiment.OrderAttribution
		var created time.Time
		if err := rows.Scan(&a.ExperimentID, &a.TestGroup, &a.VisitorID, &a.SessionID, &created, &a.Version); err != nil {
			return nil, fmt.Errorf("warehouse.SignedOrderAttributions %s: %w", orderID, err)
		}
		a.CreatedAt, a.Version = created.UTC(), OrderVersionMillis(a.Version)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("warehouse.SignedOrderAttributions %s: %w", orderID, err)
	}
	return out, nil
}

// VisitorAssignments returns the visitor's standing group in every test it
// was assigned in (the first assignment stands).
func (o WebhookOrders) VisitorAssignments(ctx context.Context, shopID int64, visitorID string) ([]experiment.OrderAttribution, error) {
	groups, err := o.W.VisitorAssignments(ctx, shopID, visitorID)
	if err != nil {
		return nil, err
	}
	out := make([]experiment.OrderAttribution, len(groups))
	for i, g := range groups {
		out[i] = experiment.OrderAttribution{ExperimentID: g.ExperimentID, TestGroup: g.TestGroup, SessionID: g.SessionID}
	}
	return out, nil
}
