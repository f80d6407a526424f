package warehouse

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/liftab/lift/money"
)

// Every INSERT names its columns: ClickHouse 18.16 fails a batch without a
// column list (DESIGN §4).

const insertEventsSQL = `INSERT INTO %s.events (shop_id, experiment_id, event_id, received_at, created_at,
	session_id, visitor_id, event_type, source, page_path, page_type, product_ids, variant_ids, quantity,
	checkout_token, order_id, custom_name, revenue, test_group, is_bot, payload)`

// insertEvents sends b's events in pieces of at most maxMonthsPerInsert
// months. Current ClickHouse refuses an INSERT block that spans more than
// 100 partitions, events partition by the month of created_at, and the
// storefront sets created_at (2015 to tomorrow): 101 crafted events made a
// batch ClickHouse refused for ever, holding every shop's rows in the WAL
// (storefront audit 2, S1). A piece that lands twice is folded by its ids.
func (w *Warehouse) insertEvents(ctx context.Context, b *Batch) error {
	for _, rows := range byMonths(b.Events, maxMonthsPerInsert) {
		if err := w.insertEventRows(ctx, rows); err != nil {
			return err
		}
	}
	return nil
}

// maxMonthsPerInsert stays under max_partitions_per_insert_block (100).
const maxMonthsPerInsert = 90

// byMonths is rows as pieces of at most limit distinct months of created_at:
// rows itself when its first and last months are no further apart (every
// batch but a crafted one, found with two comparisons a row: this runs on
// every flush).
func byMonths(rows []Event, limit int) [][]Event {
	month := func(e *Event) int { t := e.CreatedAt.UTC(); return t.Year()*12 + int(t.Month()) }
	if len(rows) == 0 {
		return nil
	}
	first, last := month(&rows[0]), month(&rows[0])
	for i := range rows {
		m := month(&rows[i])
		first, last = min(first, m), max(last, m)
	}
	if last-first < limit {
		return [][]Event{rows}
	}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b Event) int { return cmp.Compare(month(&a), month(&b)) })
	var pieces [][]Event
	start, seen := 0, 0
	for i := range sorted {
		if i == 0 || month(&sorted[i]) != month(&sorted[i-1]) {
			if seen == limit {
				pieces = append(pieces, sorted[start:i])
				start, seen = i, 0
			}
			seen++
		}
	}
	return append(pieces, sorted[start:])
}

func (w *Warehouse) insertEventRows(ctx context.Context, rows []Event) error {
	if len(rows) == 0 {
		return nil
	}
	batch, err := w.conn.PrepareBatch(ctx, fmt.Sprintf(insertEventsSQL, w.db))
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer batch.Close()
	for i := range rows {
		r := &rows[i]
		if err := batch.Append(r.ShopID, r.ExperimentID, r.EventID, utc(r.ReceivedAt), utc(r.CreatedAt),
			r.SessionID, r.VisitorID, r.EventType, r.Source, r.PagePath, r.PageType, nonNil(r.ProductIDs), nonNil(r.VariantIDs), r.Quantity,
			r.CheckoutToken, r.OrderID, r.CustomName, r.Revenue, r.TestGroup, flag(r.IsBot), r.Payload); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	return nil
}

const insertAssignmentsSQL = `INSERT INTO %s.assignments (shop_id, experiment_id, visitor_id, version, assignment_id,
	session_id, test_group, reason, country, device, visitor_type, utm_source, utm_medium, utm_campaign,
	gclid, fbclid, assigned_at, received_at, is_bot)`

func (w *Warehouse) insertAssignments(ctx context.Context, b *Batch) error {
	if len(b.Assignments) == 0 {
		return nil
	}
	batch, err := w.conn.PrepareBatch(ctx, fmt.Sprintf(insertAssignmentsSQL, w.db))
	if err != nil {
		return fmt.Errorf("assignments: %w", err)
	}
	defer batch.Close()
	for i := range b.Assignments {
		r := &b.Assignments[i]
		if err := batch.Append(r.ShopID, r.ExperimentID, r.VisitorID, FirstWinsVersion(r.ReceivedAt), r.AssignmentID,
			r.SessionID, r.TestGroup, r.Reason, r.Country, r.Device, r.VisitorType, r.UTMSource, r.UTMMedium, r.UTMCampaign,
			r.Gclid, r.Fbclid, utc(r.AssignedAt), utc(r.ReceivedAt), flag(r.IsBot)); err != nil {
			return fmt.Errorf("assignments: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("assignments: %w", err)
	}
	return nil
}

const insertSessionsSQL = `INSERT INTO %s.sessions (shop_id, experiment_id, session_id, record_id, visitor_id,
	seen_at, page_path, referrer, device, country, visitor_type, utm_source, utm_medium, utm_campaign, is_bot)`

func (w *Warehouse) insertSessions(ctx context.Context, b *Batch) error {
	if len(b.Sessions) == 0 {
		return nil
	}
	batch, err := w.conn.PrepareBatch(ctx, fmt.Sprintf(insertSessionsSQL, w.db))
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	defer batch.Close()
	for i := range b.Sessions {
		r := &b.Sessions[i]
		if err := batch.Append(r.ShopID, r.ExperimentID, r.SessionID, r.RecordID, r.VisitorID,
			utc(r.SeenAt), r.PagePath, r.Referrer, r.Device, r.Country, r.VisitorType, r.UTMSource, r.UTMMedium, r.UTMCampaign,
			flag(r.IsBot)); err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	return nil
}

const insertPageViewsSQL = `INSERT INTO %s.page_views (shop_id, experiment_id, product_id, view_id, session_id,
	visitor_id, viewed_at, is_bot)`

func (w *Warehouse) insertPageViews(ctx context.Context, b *Batch) error {
	if len(b.PageViews) == 0 {
		return nil
	}
	batch, err := w.conn.PrepareBatch(ctx, fmt.Sprintf(insertPageViewsSQL, w.db))
	if err != nil {
		return fmt.Errorf("page_views: %w", err)
	}
	defer batch.Close()
	for i := range b.PageViews {
		r := &b.PageViews[i]
		if err := batch.Append(r.ShopID, r.ExperimentID, r.ProductID, r.ViewID, r.SessionID,
			r.VisitorID, utc(r.ViewedAt), flag(r.IsBot)); err != nil {
			return fmt.Errorf("page_views: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("page_views: %w", err)
	}
	return nil
}

const insertOrdersSQL = `INSERT INTO %s.orders (shop_id, experiment_id, order_id, version, test_group, visitor_id,
	session_id, revenue, cost, currency, line_product_ids, line_variant_ids, line_quantities, line_prices,
	created_at, source, is_bot)`

// insertOrders writes the legacy endpoint's orders. Their amounts reached
// ingest as JSON numbers (the contract's body types revenue as a number);
// here they become the decimals the columns hold (clickhouse/0411), read
// as the shortest decimal that prints as the float, so 19.99 stays 19.99.
func (w *Warehouse) insertOrders(ctx context.Context, b *Batch) error {
	if len(b.Orders) == 0 {
		return nil
	}
	batch, err := w.conn.PrepareBatch(ctx, fmt.Sprintf(insertOrdersSQL, w.db))
	if err != nil {
		return fmt.Errorf("orders: %w", err)
	}
	defer batch.Close()
	for i := range b.Orders {
		r := &b.Orders[i]
		if err := batch.Append(r.ShopID, r.ExperimentID, r.OrderID, r.Version, r.TestGroup, r.VisitorID,
			r.SessionID, money.FromFloat(r.Revenue), money.FromFloat(r.Cost), r.Currency, nonNil(r.LineProductIDs),
			nonNil(r.LineVariantIDs), nonNil(r.LineQuantities), amounts(r.LinePrices), utc(r.CreatedAt), r.Source,
			flag(r.IsBot)); err != nil {
			return fmt.Errorf("orders: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("orders: %w", err)
	}
	return nil
}

func flag(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func utc(t time.Time) time.Time { return t.UTC() }

// amounts turns float amounts into decimals (never nil: see nonNil).
func amounts(fs []float64) []decimal.Decimal {
	out := make([]decimal.Decimal, len(fs))
	for i, f := range fs {
		out[i] = money.FromFloat(f)
	}
	return out
}

// nonNil gives the driver an empty array instead of a nil slice.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
