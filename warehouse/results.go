package warehouse

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Basis is the unit the per-group metrics count: visitors or sessions.
type Basis string

const (
	BasisVisitors Basis = "visitors"
	BasisSessions Basis = "sessions"
)

// Dimension is a breakdown dimension of a results query (DESIGN §9).
type Dimension string

// Dimensions lists every breakdown dimension, in the contract's order.
var Dimensions = []Dimension{"device", "country", "visitor_type", "utm_source", "utm_medium",
	"utm_campaign", "traffic_source", "landing_page", "date"}

// Known reports whether d is a breakdown dimension.
func (d Dimension) Known() bool {
	for _, k := range Dimensions {
		if k == d {
			return true
		}
	}
	return false
}

// MaxDimensions is how many dimensions one breakdown may combine.
const MaxDimensions = 3

// KeySeparator joins the values of several dimensions in a breakdown key.
const KeySeparator = "::"

// MetricsQuery says which units of which test to aggregate.
type MetricsQuery struct {
	ShopID       int64
	ExperimentID string
	// Timezone is the shop's IANA zone; From and To are inclusive local dates
	// (YYYY-MM-DD) in it. A unit belongs to the window when it was assigned
	// (visitors) or started (sessions) inside it, and only its activity
	// inside the window counts.
	Timezone string
	From, To string
	Basis    Basis
	// ProductIDs, when not empty, scope the metrics to a product group:
	// units that viewed one of these products, and add-to-carts, checkouts
	// and order lines of them (numeric ids, without the gid:// prefix).
	ProductIDs []string
	// Breakdown names up to MaxDimensions dimensions; rows are keyed by
	// their values joined with KeySeparator in this order.
	Breakdown []Dimension
}

// Sums are one group's (or breakdown cell's) sufficient statistics over its
// units: the counts of §2.7 and the Σy, Σy² (and cross products) that the
// statistics engine needs. "Units that …" fields count units, not events.
type Sums struct {
	N               int64   // units (visitors or sessions)
	Sessions        int64   // sessions of those units
	Converted       int64   // units with at least one order
	Orders          float64 // Σ orders per unit
	OrdersSq        float64 // Σ orders²
	Revenue         float64 // Σ revenue per unit
	RevenueSq       float64 // Σ revenue²
	RevenueOrders   float64 // Σ revenue·orders (ratio metric AOV)
	Profit          float64 // Σ (revenue − cost) per unit
	ProfitSq        float64
	AddedToCart     int64   // units with an add-to-cart
	ReachedCheckout int64   // units that started a checkout (or ordered)
	ClickedThrough  int64   // units that viewed a product page
	Bounced         int64   // units whose every session had one page load
	PageViews       int64   // page loads
	Staying         float64 // Σ seconds on site per unit
	StayingSq       float64
}

// Add adds o to s. Every field is a sum over units, so the sums of the
// cells of a breakdown add up to the whole: a snapshot reads its totals
// and its device breakdown from one query.
func (s *Sums) Add(o Sums) {
	s.N += o.N
	s.Sessions += o.Sessions
	s.Converted += o.Converted
	s.Orders += o.Orders
	s.OrdersSq += o.OrdersSq
	s.Revenue += o.Revenue
	s.RevenueSq += o.RevenueSq
	s.RevenueOrders += o.RevenueOrders
	s.Profit += o.Profit
	s.ProfitSq += o.ProfitSq
	s.AddedToCart += o.AddedToCart
	s.ReachedCheckout += o.ReachedCheckout
	s.ClickedThrough += o.ClickedThrough
	s.Bounced += o.Bounced
	s.PageViews += o.PageViews
	s.Staying += o.Staying
	s.StayingSq += o.StayingSq
}

// GroupRow is the sums of one test group, within one breakdown cell when
// the query had a breakdown (Key is then the dimension values joined by
// KeySeparator; "" without a breakdown).
type GroupRow struct {
	Key       string
	TestGroup int
	Sums
}

// CustomEventRow counts one custom event name in one test group: the units
// that fired it and how many distinct events they fired.
type CustomEventRow struct {
	Name      string
	TestGroup int
	Units     int64
	Events    int64
}

var (
	datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	idPattern   = regexp.MustCompile(`^[0-9]+$`)
)

func (q MetricsQuery) validate() error {
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
	if err := q.validate(); err != nil {
		return nil, fmt.Errorf("warehouse.GroupMetrics: %w", err)
	}
	rows, err := w.conn.Query(ctx, w.render(groupMetricsSQL(q)), q.args()...)
	if err != nil {
		return nil, fmt.Errorf("warehouse.GroupMetrics %s: %w", q.ExperimentID, err)
	}
	defer rows.Close()
	var out []GroupRow
	for rows.Next() {
		var r GroupRow
		var g int16
		var conv, atc, chk, ct, bounced, n, sessions, pages uint64
		if err := rows.Scan(&r.Key, &g, &n, &sessions, &conv, &r.Orders, &r.OrdersSq, &r.Revenue, &r.RevenueSq,
			&r.RevenueOrders, &r.Profit, &r.ProfitSq, &atc, &chk, &ct, &bounced, &pages, &r.Staying, &r.StayingSq); err != nil {
			return nil, fmt.Errorf("warehouse.GroupMetrics %s: %w", q.ExperimentID, err)
		}
		r.TestGroup = int(g)
		r.N, r.Sessions, r.Converted, r.AddedToCart, r.ReachedCheckout = int64(n), int64(sessions), int64(conv), int64(atc), int64(chk)
		r.ClickedThrough, r.Bounced, r.PageViews = int64(ct), int64(bounced), int64(pages)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("warehouse.GroupMetrics %s: %w", q.ExperimentID, err)
	}
	return out, nil
}

// CustomEvents counts each custom event name per test group over the units
// of q (its Breakdown is ignored): units that fired it, distinct events.
func (w *Warehouse) CustomEvents(ctx context.Context, q MetricsQuery) ([]CustomEventRow, error) {
	q.Breakdown = nil
	if err := q.validate(); err != nil {
		return nil, fmt.Errorf("warehouse.CustomEvents: %w", err)
	}
	rows, err := w.conn.Query(ctx, w.render(customEventsSQL(q)), q.args()...)
	if err != nil {
		return nil, fmt.Errorf("warehouse.CustomEvents %s: %w", q.ExperimentID, err)
	}
	defer rows.Close()
	var out []CustomEventRow
	for rows.Next() {
		var r CustomEventRow
		var g int16
		var units, events uint64
		if err := rows.Scan(&r.Name, &g, &units, &events); err != nil {
			return nil, fmt.Errorf("warehouse.CustomEvents %s: %w", q.ExperimentID, err)
		}
		r.TestGroup, r.Units, r.Events = int(g), int64(units), int64(events)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("warehouse.CustomEvents %s: %w", q.ExperimentID, err)
	}
	return out, nil
}

func (w *Warehouse) render(sql string) string {
	return strings.ReplaceAll(sql, "{db}", "`"+w.db+"`")
}

// args binds the named parameters of the queries. clickhouse-go substitutes
// them client side as literals, which is what toDate(ts, tz) needs (its
// zone must be a constant).
func (q MetricsQuery) args() []any {
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
