package results

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/money"
	"github.com/liftab/lift/stats"
)

// The response shapes of part 2.4 and the ones it leaves unshown
// (docs/session-api.md "Analytics"). Arrays are indexed by test group.

// Significance is part 2.4's statisticalSignificance: a variant's
// conversion rate against the control's, from the stats engine (the same
// Welch comparison as a snapshot's conversion_rate difference). Fields are
// null when the comparison is not computable (too few visitors, no
// variance); Reason then says why.
type Significance struct {
	PValue             *float64     `json:"pValue"`
	TStat              *float64     `json:"tStat"`
	ConfidenceInterval []float64    `json:"confidenceInterval"`
	Reason             stats.Reason `json:"reason,omitempty"`
}

// ProductReport is the product-based answer.
type ProductReport struct {
	Views           []int64         `json:"views"`
	AddToCarts      []int64         `json:"addToCarts"`
	Revenue         []float64       `json:"revenue"`
	ConversionRates ProductRates    `json:"conversionRates"`
	Significance    *Significance   `json:"statisticalSignificance"`
	ByGroup         []*Significance `json:"statisticalSignificanceByGroup"`
}

// ProductRates are add-to-cart and purchase rates over product viewers.
type ProductRates struct {
	AddToCart []float64 `json:"addToCart"`
	Purchase  []float64 `json:"purchase"`
}

// VisitorReport is the visitor-based and storewide answer; Journey is set
// for v2 only.
type VisitorReport struct {
	TotalViews      []int64         `json:"totalViews"`
	TotalAddToCarts []int64         `json:"totalAddToCarts"`
	TotalOrders     []int64         `json:"totalOrders"`
	TotalRevenue    []float64       `json:"totalRevenue"`
	Significance    *Significance   `json:"statisticalSignificance"`
	ByGroup         []*Significance `json:"statisticalSignificanceByGroup"`
	Journey         *Journey        `json:"journey,omitempty"`
}

// Journey is v2's funnel per group: visitors who viewed a product, added
// to cart, reached checkout and ordered, and each step's rate over the
// step before (ViewRate over all visitors).
type Journey struct {
	ViewedProduct   []int64        `json:"viewedProduct"`
	AddedToCart     []int64        `json:"addedToCart"`
	ReachedCheckout []int64        `json:"reachedCheckout"`
	Ordered         []int64        `json:"ordered"`
	StepRates       JourneyRates   `json:"stepRates"`
	Events          *JourneyEvents `json:"events,omitempty"`
}

// JourneyRates are the journey's step conversion rates per group.
type JourneyRates struct {
	ViewRate      []float64 `json:"viewRate"`
	AddToCartRate []float64 `json:"addToCartRate"`
	CheckoutRate  []float64 `json:"checkoutRate"`
	OrderRate     []float64 `json:"orderRate"`
}

// JourneyEvents are storewide v2's event counts (distinct events, not
// visitors) behind the journey.
type JourneyEvents struct {
	ProductViews   []int64 `json:"productViews"`
	AddToCarts     []int64 `json:"addToCarts"`
	CheckoutStarts []int64 `json:"checkoutStarts"`
}

// TypeReport is the answer of the per-type endpoints: the shared totals and
// the metrics the test type moves (nil fields are not part of that type).
type TypeReport struct {
	Visitors          []int64    `json:"visitors"`
	Orders            []int64    `json:"orders"`
	Revenue           []float64  `json:"revenue"`
	ConversionRate    []float64  `json:"conversionRate"`
	AverageOrderValue []float64  `json:"averageOrderValue,omitempty"`
	ShippingRevenue   []*float64 `json:"shippingRevenue,omitempty"`
	// ShippingUnrecorded counts the orders under ShippingRevenue that did
	// not record their shipping; a sum with any is a lower bound.
	ShippingUnrecorded []int64         `json:"shippingUnrecordedOrders,omitempty"`
	CheckoutStarts     []int64         `json:"checkoutStarts,omitempty"`
	CheckoutCompletion []float64       `json:"checkoutCompletion,omitempty"`
	LandingVisitors    []int64         `json:"landingVisitors,omitempty"`
	LandingConversions []int64         `json:"landingConversions,omitempty"`
	Views              []int64         `json:"views,omitempty"`
	AddToCarts         []int64         `json:"addToCarts,omitempty"`
	Significance       *Significance   `json:"statisticalSignificance"`
	ByGroup            []*Significance `json:"statisticalSignificanceByGroup"`
}

// Report answers one analytics view (every one but the timeseries) of a
// shop's test. Errors: KindNotFound experiment_not_found (also another
// shop's test), KindInvalidRequest invalid_request for a bad request, the
// warehouse's otherwise. Answers are cached until data for the test
// arrives (or CacheTTL passes).
func (a *Analytics) Report(ctx context.Context, shop *experiment.Shop, testID int64, view View, req AnalyticsRequest) (json.RawMessage, error) {
	t, err := a.cfg.Tests.FindTestByID(ctx, shop.ID, testID)
	if err != nil {
		return nil, err
	}
	s, err := scopeOf(shop, t, req)
	if err != nil {
		return nil, err
	}
	if view == ViewProduct && len(s.q.ProductIDs) == 0 {
		s.q.ProductIDs = EnrolledProducts(t)
	}
	s.q.Shipping = view == ViewShipping
	storewide := view == ViewStorewideV1 || view == ViewStorewideV2
	return a.cached(ctx, shop, t, view, storewide, s, func() (any, error) { return a.build(ctx, t, view, s) })
}

func (a *Analytics) build(ctx context.Context, t *experiment.Test, view View, s scope) (any, error) {
	// The storewide views read the store's events besides the shared sums;
	// both queries start at once, so the answer takes the slower of them,
	// not their total.
	var activity chan activityResult
	if view == ViewStorewideV1 || view == ViewStorewideV2 {
		activity = make(chan activityResult, 1)
		go func() {
			rows, err := a.cfg.Activity.StorewideActivity(ctx, s.q, s.filter)
			activity <- activityResult{rows, err}
		}()
	}
	sums, err := a.groupSums(ctx, s.q, s.filter, len(t.Groups))
	if err != nil {
		if activity != nil {
			<-activity
		}
		return nil, err
	}
	sig, byGroup := significance(sums, t.Analysis)
	switch view {
	case ViewProduct:
		return productReport(sums, len(s.q.ProductIDs) > 0, sig, byGroup, s.currency), nil
	case ViewV1, ViewV2:
		r := visitorReport(sums, sig, byGroup, s.currency)
		if view == ViewV2 {
			r.Journey = journeyOf(sums, func(g Sums) int64 { return g.ClickedThrough },
				func(g Sums) int64 { return g.AddedToCart }, func(g Sums) int64 { return g.ReachedCheckout })
		}
		return r, nil
	case ViewStorewideV1, ViewStorewideV2:
		res := <-activity
		if res.err != nil {
			return nil, fmt.Errorf("results.Analytics storewide %s: %w", s.q.ExperimentID, res.err)
		}
		return storewide(view, s, res.rows, sums, sig, byGroup), nil
	}
	return typeReport(view, sums, sig, byGroup, s.currency), nil
}

type activityResult struct {
	rows []ActivityRow
	err  error
}

// storewide is the visitor report with the add-to-carts (and, v2, the
// journey) of every store event of the test's visitors; visitors, orders
// and revenue stay the test's, so they equal v1's.
func storewide(view View, s scope, rows []ActivityRow, sums []Sums, sig *Significance, byGroup []*Significance) *VisitorReport {
	act := make([]ActivityRow, len(sums))
	for _, r := range rows {
		if r.TestGroup >= 0 && r.TestGroup < len(act) {
			act[r.TestGroup] = r
		}
	}
	r := visitorReport(sums, sig, byGroup, s.currency)
	for i := range act {
		r.TotalAddToCarts[i] = act[i].CartAdders
	}
	if view == ViewStorewideV2 {
		r.Journey = journeyOf(sums, func(Sums) int64 { return 0 }, func(Sums) int64 { return 0 }, func(Sums) int64 { return 0 })
		ev := &JourneyEvents{}
		for i, x := range act {
			r.Journey.ViewedProduct[i], r.Journey.AddedToCart[i] = x.ProductViewers, x.CartAdders
			// A visitor who ordered reached checkout, as in the snapshot:
			// the union of starters and buyers (the larger of the two
			// undercounted it, the truth audit's F1).
			r.Journey.ReachedCheckout[i] = x.CheckoutStarter + sums[i].Converted - x.StartersOrdered
			ev.ProductViews = append(ev.ProductViews, x.ProductViews)
			ev.AddToCarts = append(ev.AddToCarts, x.AddToCarts)
			ev.CheckoutStarts = append(ev.CheckoutStarts, x.CheckoutStarts)
		}
		r.Journey.StepRates = stepRates(sums, r.Journey)
		r.Journey.Events = ev
	}
	return r
}

func visitorReport(sums []Sums, sig *Significance, byGroup []*Significance, currency string) *VisitorReport {
	r := &VisitorReport{Significance: sig, ByGroup: byGroup}
	for _, g := range sums {
		r.TotalViews = append(r.TotalViews, g.N)
		r.TotalAddToCarts = append(r.TotalAddToCarts, g.AddedToCart)
		r.TotalOrders = append(r.TotalOrders, int64(math.Round(g.Orders)))
		r.TotalRevenue = append(r.TotalRevenue, money.RoundFloat(g.Revenue, currency))
	}
	return r
}

func journeyOf(sums []Sums, viewed, carted, checkout func(Sums) int64) *Journey {
	j := &Journey{}
	for _, g := range sums {
		j.ViewedProduct = append(j.ViewedProduct, viewed(g))
		j.AddedToCart = append(j.AddedToCart, carted(g))
		j.ReachedCheckout = append(j.ReachedCheckout, checkout(g))
		j.Ordered = append(j.Ordered, g.Converted)
	}
	j.StepRates = stepRates(sums, j)
	return j
}

func stepRates(sums []Sums, j *Journey) JourneyRates {
	var r JourneyRates
	for i, g := range sums {
		r.ViewRate = append(r.ViewRate, rate(j.ViewedProduct[i], g.N))
		r.AddToCartRate = append(r.AddToCartRate, rate(j.AddedToCart[i], j.ViewedProduct[i]))
		r.CheckoutRate = append(r.CheckoutRate, rate(j.ReachedCheckout[i], j.AddedToCart[i]))
		r.OrderRate = append(r.OrderRate, rate(j.Ordered[i], j.ReachedCheckout[i]))
	}
	return r
}

// productReport: views are the visitors who viewed a product of the scope
// (every visitor of a scoped query did; unscoped, those who viewed any
// product page), add-to-carts the viewers who added one to cart.
func productReport(sums []Sums, scoped bool, sig *Significance, byGroup []*Significance, currency string) *ProductReport {
	r := &ProductReport{Significance: sig, ByGroup: byGroup}
	for _, g := range sums {
		views := g.N
		if !scoped {
			views = g.ClickedThrough
		}
		r.Views = append(r.Views, views)
		r.AddToCarts = append(r.AddToCarts, g.AddedToCart)
		r.Revenue = append(r.Revenue, money.RoundFloat(g.Revenue, currency))
		r.ConversionRates.AddToCart = append(r.ConversionRates.AddToCart, rate(g.AddedToCart, views))
		r.ConversionRates.Purchase = append(r.ConversionRates.Purchase, rate(g.Converted, views))
	}
	return r
}

// typeReport is a per-type endpoint's answer: the shared totals, plus the
// metrics of that type.
func typeReport(view View, sums []Sums, sig *Significance, byGroup []*Significance, currency string) *TypeReport {
	r := &TypeReport{Significance: sig, ByGroup: byGroup}
	for _, g := range sums {
		r.Visitors = append(r.Visitors, g.N)
		r.Orders = append(r.Orders, int64(math.Round(g.Orders)))
		r.Revenue = append(r.Revenue, money.RoundFloat(g.Revenue, currency))
		r.ConversionRate = append(r.ConversionRate, rate(g.Converted, g.N))
		switch view {
		case ViewShipping:
			r.ShippingRevenue = append(r.ShippingRevenue, shippingRevenue(g, currency))
			r.ShippingUnrecorded = append(r.ShippingUnrecorded, g.ShippingUnrecorded)
			r.AverageOrderValue = append(r.AverageOrderValue, money.RoundFloat(ratio(g.Revenue, g.Orders), currency))
			r.CheckoutStarts = append(r.CheckoutStarts, g.ReachedCheckout)
			r.CheckoutCompletion = append(r.CheckoutCompletion, rate(g.Converted, g.ReachedCheckout))
		case ViewRedirect:
			r.LandingVisitors = append(r.LandingVisitors, g.N)
			r.LandingConversions = append(r.LandingConversions, g.Converted)
		case ViewTemplate, ViewTheme:
			r.Views = append(r.Views, g.PageViews)
			r.AddToCarts = append(r.AddToCarts, g.AddedToCart)
		case ViewCheckout:
			r.CheckoutStarts = append(r.CheckoutStarts, g.ReachedCheckout)
			r.CheckoutCompletion = append(r.CheckoutCompletion, rate(g.Converted, g.ReachedCheckout))
			r.AverageOrderValue = append(r.AverageOrderValue, money.RoundFloat(ratio(g.Revenue, g.Orders), currency))
		}
	}
	return r
}

// shippingRevenue is what a group's orders charged for shipping, over
// those that recorded it; null when orders were counted and none recorded
// it (all from before Lift kept shipping, or the legacy endpoint's), never
// a made-up zero.
func shippingRevenue(g Sums, currency string) *float64 {
	if g.Orders > 0 && g.ShippingUnrecorded >= int64(math.Round(g.Orders)) {
		return nil
	}
	v := money.RoundFloat(g.Shipping, currency)
	return &v
}

// significance compares every variant's conversion rate with the
// control's through stats (the first variant's is part 2.4's object), as
// the test's analysis options say: always-valid under sequential (a panel
// read daily is peeked at daily), adjusted across variants under a
// correction, as the snapshot's conversion_rate.
func significance(sums []Sums, opts experiment.AnalysisOptions) (*Significance, []*Significance) {
	byGroup := make([]*Significance, len(sums))
	if len(sums) < 2 {
		return nil, byGroup
	}
	m := comparedMetric("conversion_rate")
	req := stats.AnalysisRequest{MetricKind: m.kind, Options: statsOptions(opts)}
	for _, g := range sums {
		req.Groups = append(req.Groups, m.stats(g))
	}
	a, err := stats.Analyze(req)
	if err != nil {
		// Sums no data set could produce (a broken warehouse answer).
		return &Significance{Reason: "invalid_sums"}, byGroup
	}
	for _, c := range a.Comparisons {
		if c.TestGroupIndex > 0 && c.TestGroupIndex < len(byGroup) {
			byGroup[c.TestGroupIndex] = significanceOf(c, a.Groups)
		}
	}
	return byGroup[1], byGroup
}

// significanceOf reads a comparison's difference test: its p-value and
// interval as stats computed them, and the Welch statistic as the
// difference over the standard error of the group summaries stats gave.
func significanceOf(c stats.Comparison, groups []stats.GroupSummary) *Significance {
	if !c.Computable || c.Frequentist == nil || c.Difference == nil {
		return &Significance{Reason: c.Reason}
	}
	f := c.Frequentist
	p := f.DifferencePValue
	if f.AdjustedDifferencePValue != nil {
		p = *f.AdjustedDifferencePValue
	}
	out := &Significance{PValue: &p, ConfidenceInterval: []float64{f.DifferenceInterval.Lower, f.DifferenceInterval.Upper}}
	ctl, trt := groups[0], groups[c.TestGroupIndex]
	if ctl.Variance != nil && trt.Variance != nil && ctl.N > 0 && trt.N > 0 {
		se := math.Sqrt(*ctl.Variance/float64(ctl.N) + *trt.Variance/float64(trt.N))
		if se > 0 {
			t := *c.Difference / se
			out.TStat = &t
		}
	}
	return out
}

// comparedMetric is the snapshot's metric of that name, so analytics and
// snapshots compare the same way.
func comparedMetric(name string) metric {
	for _, m := range compared {
		if m.name == name {
			return m
		}
	}
	panic("results: no compared metric " + name)
}

func rate(num, den int64) float64 { return ratio(float64(num), float64(den)) }
