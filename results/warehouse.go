package results

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// The warehouse port: the analytics reads snapshots, custom queries and
// exports need. The warehouse package implements it on ClickHouse; every
// aggregation happens there, so these types carry sums, never raw rows.

// Warehouse computes per-group sums and streams orders.
type Warehouse interface {
	// GroupMetrics computes every per-group sum of §2.7 for q, per
	// breakdown cell when q has a breakdown. Errors are the store's (the
	// caller retries); an invalid q is an error too.
	GroupMetrics(ctx context.Context, q MetricsQuery) ([]GroupRow, error)
	// CustomEvents counts each custom event name per group over the units
	// of q (its Breakdown is ignored).
	CustomEvents(ctx context.Context, q MetricsQuery) ([]CustomEventRow, error)
	// WinsorCaps computes the winsorizing caps of the money metrics over the
	// units of q (its Breakdown is ignored): the percentile-th quantile of
	// per-unit revenue and profit among units with a positive value, pooled
	// over the groups. GroupMetrics with q.Caps set then sums capped values.
	WinsorCaps(ctx context.Context, q MetricsQuery, percentile float64) (Caps, error)
	// Covariates computes, per group, CUPED's pre-exposure sums over the
	// units of q (its Breakdown is ignored): each unit's activity before its
	// visitor's first assignment, and the products with the unit's metric
	// values as GroupMetrics sums them for the same q (capped at q.Caps).
	Covariates(ctx context.Context, q MetricsQuery) ([]CovariateRow, error)
	// ExportOrders streams a test's orders as they stand, oldest first, to
	// fn one at a time, and returns how many fn took; an error from fn stops
	// the scan and is returned.
	ExportOrders(ctx context.Context, shopID int64, experimentID string, fn func(*ExportRow) error) (int64, error)
}

// CappedMetrics is a Warehouse that can work out the winsorizing caps and
// the sums capped at them in one read: the result of WinsorCaps at
// percentile and then GroupMetrics with q.Caps set to them (or nil when
// both are 0). The service uses it when it is there and CUPED (which needs
// the caps before its own read) is off.
type CappedMetrics interface {
	GroupMetricsCapped(ctx context.Context, q MetricsQuery, percentile float64) ([]GroupRow, Caps, error)
}

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
	// Caps, when set, makes GroupMetrics fill the capped sums of Sums.
	Caps *Caps
	// Shipping makes GroupMetrics fill Sums.Shipping and
	// ShippingUnrecorded. Only a shipping test's panel reads them, so other
	// reads (snapshots among them) skip the work.
	Shipping bool
}

// Caps are the values per-unit money is capped at before comparing (the
// winsorization of stats.Options). A cap of 0 means no unit had a positive
// value: there is nothing to cap.
type Caps struct {
	Percentile float64
	Revenue    float64 // per-unit revenue, also the numerator of average order value
	Profit     float64
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
	// The same sums over values capped at MetricsQuery.Caps (zero without
	// caps): Σmin(revenue, cap), its square, Σmin(revenue, cap)·orders, and
	// Σmin(profit, cap) and its square.
	RevenueCapped       float64
	RevenueCappedSq     float64
	RevenueOrdersCapped float64
	ProfitCapped        float64
	ProfitCappedSq      float64
	// With MetricsQuery.Shipping: Σ what the units' orders charged for
	// shipping, over the orders that recorded it, and how many counted
	// orders did not (written before Lift kept shipping, or by the legacy
	// endpoint). A sum with unrecorded orders under it is a lower bound.
	Shipping           float64
	ShippingUnrecorded int64
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
	s.RevenueCapped += o.RevenueCapped
	s.RevenueCappedSq += o.RevenueCappedSq
	s.RevenueOrdersCapped += o.RevenueOrdersCapped
	s.ProfitCapped += o.ProfitCapped
	s.ProfitCappedSq += o.ProfitCappedSq
	s.Shipping += o.Shipping
	s.ShippingUnrecorded += o.ShippingUnrecorded
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

// ExportRow is one order of a test as it stands: the latest version of its
// row in the orders table.
type ExportRow struct {
	OrderID   string
	CreatedAt time.Time
	TestGroup int16
	VisitorID string
	SessionID string
	Revenue   decimal.Decimal // exact, in Currency
	Cost      decimal.Decimal
	Currency  string
	LineItems uint64 // order lines
	Quantity  uint64 // units over every line
	Version   uint64
}
