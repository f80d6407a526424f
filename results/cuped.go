package results

import (
	"context"
	"fmt"

	"github.com/liftab/lift/stats"
)

// CUPED (stats/cuped.go) compares Y − θ(X − X̄) instead of Y, X the same
// unit's activity before its visitor was first assigned to the test. X
// cannot depend on the group, so the comparison keeps its expectation while
// its variance shrinks by the share of Y's variance X explains. Which X
// pairs with which metric is in docs/results.md; the engine adjusts mean
// metrics only, so conversion is compared as the mean of a 0/1 value when
// adjusted (Y − θ(X − X̄) is no longer a proportion).

// CUPEDLookbackDays is the span before a visitor's first assignment whose
// activity is its covariate (the warehouse applies it).
const CUPEDLookbackDays = 28

// CovariateRow is one group's pre-exposure sums: N units, how many had any
// activity in the lookback, ΣX and ΣX² of each covariate, and ΣX·Y with
// each metric it pairs with (Y as GroupMetrics sums it, capped when the
// query had caps).
type CovariateRow struct {
	// Key is the breakdown cell, as GroupRow.Key ("" without a breakdown).
	Key         string
	TestGroup   int
	N           int64
	WithHistory int64
	// X = revenue of the visitor's orders in the lookback.
	PreRevenue, PreRevenueSq float64
	RevenueCross             float64 // Σ X·revenue
	RevenueCappedCross       float64 // Σ X·min(revenue, cap)
	ProfitCross              float64 // Σ X·profit
	ProfitCappedCross        float64 // Σ X·min(profit, cap)
	// X = orders plus add-to-carts in the lookback (purchase intent).
	PreActivity, PreActivitySq float64
	ConvertedCross             float64 // Σ X·[unit converted]
	AddToCartCross             float64 // Σ X·[unit added to cart]
	CheckoutCross              float64 // Σ X·[unit reached checkout]
	// Xd = orders in the lookback, the denominator of average order value
	// before the test (its numerator is PreRevenue); D = orders, M = revenue
	// (capped or not).
	PreOrders, PreOrdersSq      float64
	OrdersPreOrdersCross        float64 // Σ D·Xd
	PreRevenuePreOrdersCross    float64 // Σ X·Xd
	RevenuePreOrdersCross       float64 // Σ M·Xd
	RevenueCappedPreOrdersCross float64 // Σ min(M, cap)·Xd
	OrdersPreRevenueCross       float64 // Σ D·X
}

// cupedCovariates names the covariate each adjusted metric pairs with.
// Average order value, a ratio, is adjusted with the same ratio in the
// lookback (revenue over orders), as GrowthBook's regression-adjusted
// ratio; add-to-cart and checkout rates with the purchase intent that
// predicts them. cupedNotAdjusted says why the browsing metrics are not.
var cupedCovariates = map[string]string{
	"conversion_rate":       covariateIntent,
	"revenue_per_visitor":   "pre_exposure_revenue",
	"profit_per_visitor":    "pre_exposure_revenue",
	"average_order_value":   "pre_exposure_revenue_per_order",
	"add_to_cart_rate":      covariateIntent,
	"reached_checkout_rate": covariateIntent,
}

const covariateIntent = "pre_exposure_orders_and_add_to_carts"

// cupedNotAdjusted are the compared metrics CUPED leaves alone, and why.
var cupedNotAdjusted = map[string]string{
	"click_through_rate": cupedNoBrowsing,
	"bounce_rate":        cupedNoBrowsing,
	"avg_staying_time":   cupedNoBrowsing,
}

const cupedNoBrowsing = "Its covariate would be the visitor's browsing before the test (product pages, bounces, time on site); " +
	"the lookback reads orders and add-to-carts only, which measure purchase intent, not browsing, so it is compared unadjusted."

// cupedState is what a computation knows of CUPED: the covariates per
// breakdown cell and group when they can be applied, else why not. rows
// are those of the units being compared: the whole test's (the cells
// summed) unless forCell picked one cell.
type cupedState struct {
	cells  map[string]map[int]CovariateRow
	rows   map[int]CovariateRow
	reason string
}

// Why CUPED may not apply.
const (
	cupedNoHistory = "No visitor of this test has orders or add-to-carts in the 28 days before its first assignment, so there is no pre-exposure data to adjust with; the figures are not CUPED-adjusted."
	cupedMoved     = "Units arrived between the reads of the metrics and of their pre-exposure data; the figures are not CUPED-adjusted this time."
	cupedRefused   = "No metric could be adjusted with its pre-exposure data; the figures are not CUPED-adjusted."
	cupedCellEmpty = "No visitor of this cell has pre-exposure activity; its figures are not CUPED-adjusted."
)

// sumsAndCovariates reads the sums of q and, when CUPED is asked for, its
// covariates alongside (they read the same units again), cell by cell.
func (s *Service) sumsAndCovariates(ctx context.Context, q MetricsQuery, cuped bool) ([]GroupRow, cupedState, error) {
	if !cuped {
		rows, err := s.cfg.Warehouse.GroupMetrics(ctx, q)
		return rows, cupedState{}, err
	}
	var cov []CovariateRow
	var covErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		cov, covErr = s.cfg.Warehouse.Covariates(ctx, q)
	}()
	rows, err := s.cfg.Warehouse.GroupMetrics(ctx, q)
	<-done
	if err == nil {
		err = covErr
	}
	if err != nil {
		return nil, cupedState{}, err
	}
	return rows, pairCovariates(cov, rows), nil
}

// pairCovariates checks the covariates against rows (the units
// GroupMetrics counted for the same query) and keeps them when they cover
// exactly those units, cell by cell, and some unit has history.
func pairCovariates(cov []CovariateRow, rows []GroupRow) cupedState {
	type cell struct {
		key   string
		group int
	}
	units := map[cell]int64{}
	for _, r := range rows {
		units[cell{r.Key, r.TestGroup}] += r.N
	}
	state := cupedState{cells: map[string]map[int]CovariateRow{}, rows: map[int]CovariateRow{}}
	var history int64
	for _, c := range cov {
		if units[cell{c.Key, c.TestGroup}] != c.N {
			return cupedState{reason: cupedMoved}
		}
		if state.cells[c.Key] == nil {
			state.cells[c.Key] = map[int]CovariateRow{}
		}
		state.cells[c.Key][c.TestGroup] = c
		total := state.rows[c.TestGroup]
		total.add(c)
		state.rows[c.TestGroup] = total
		history += c.WithHistory
	}
	if history == 0 {
		return cupedState{reason: cupedNoHistory}
	}
	return state
}

// add sums o into r: every field is a sum over units, so the cells of a
// breakdown add up to the whole test, as Sums do.
func (r *CovariateRow) add(o CovariateRow) {
	r.TestGroup = o.TestGroup
	r.N += o.N
	r.WithHistory += o.WithHistory
	for i, p := range r.sums() {
		*p += *o.sums()[i]
	}
}

// sums are the covariate row's float sums, in one order.
func (r *CovariateRow) sums() []*float64 {
	return []*float64{&r.PreRevenue, &r.PreRevenueSq, &r.RevenueCross, &r.RevenueCappedCross, &r.ProfitCross,
		&r.ProfitCappedCross, &r.PreActivity, &r.PreActivitySq, &r.ConvertedCross, &r.AddToCartCross, &r.CheckoutCross,
		&r.PreOrders, &r.PreOrdersSq, &r.OrdersPreOrdersCross, &r.PreRevenuePreOrdersCross, &r.RevenuePreOrdersCross,
		&r.RevenueCappedPreOrdersCross, &r.OrdersPreRevenueCross}
}

// forCell is s with CUPED's rows those of breakdown cell key: each cell
// gets its own θ, fitted on its own units (see docs/results.md).
func (s settings) forCell(key string) settings {
	if s.cuped.cells != nil {
		s.cuped.rows = s.cuped.cells[key]
	}
	return s
}

// cupedRequest adds the covariates to req, the request of metric m over
// sums, when m has one and the covariates are those of exactly these units.
func (s settings) cupedRequest(req *stats.AnalysisRequest, m metric, sums []Sums) {
	name, ok := cupedCovariates[m.name]
	if !ok || s.cuped.rows == nil {
		return
	}
	covs := make([]*stats.CovariateSums, len(sums))
	for i, g := range sums {
		c := s.cuped.rows[i]
		if c.N != g.N {
			return
		}
		covs[i] = covariateOf(name, m.name, c, s.capOf(m) > 0)
	}
	req.Options.CUPED = true
	for i := range req.Groups {
		req.Groups[i].Covariate = covs[i]
	}
	if req.MetricKind == stats.KindProportion {
		// A 0/1 value: Σy² = Σy.
		req.MetricKind = stats.KindMean
		for i := range req.Groups {
			req.Groups[i].SumSquares = req.Groups[i].Sum
		}
	}
}

func covariateOf(covariate, metricName string, c CovariateRow, capped bool) *stats.CovariateSums {
	switch covariate {
	case covariateIntent:
		x := &stats.CovariateSums{Sum: c.PreActivity, SumSquares: c.PreActivitySq, CrossSum: c.ConvertedCross}
		switch metricName {
		case "add_to_cart_rate":
			x.CrossSum = c.AddToCartCross
		case "reached_checkout_rate":
			x.CrossSum = c.CheckoutCross
		}
		return x
	case "pre_exposure_revenue_per_order":
		x := &stats.CovariateSums{Sum: c.PreRevenue, SumSquares: c.PreRevenueSq, CrossSum: c.RevenueCross,
			DenominatorSum: c.PreOrders, DenominatorSumSquares: c.PreOrdersSq, DenominatorCrossSum: c.OrdersPreOrdersCross,
			PreCrossSum: c.PreRevenuePreOrdersCross, NumeratorPreDenominatorCrossSum: c.RevenuePreOrdersCross,
			DenominatorPreNumeratorCrossSum: c.OrdersPreRevenueCross}
		if capped {
			x.CrossSum, x.NumeratorPreDenominatorCrossSum = c.RevenueCappedCross, c.RevenueCappedPreOrdersCross
		}
		return x
	}
	x := &stats.CovariateSums{Sum: c.PreRevenue, SumSquares: c.PreRevenueSq}
	switch {
	case metricName == "profit_per_visitor" && capped:
		x.CrossSum = c.ProfitCappedCross
	case metricName == "profit_per_visitor":
		x.CrossSum = c.ProfitCross
	case capped:
		x.CrossSum = c.RevenueCappedCross
	default:
		x.CrossSum = c.RevenueCross
	}
	return x
}

// analyzeMetric runs the engine on metric m; when the covariates make the
// engine refuse the request, m is compared unadjusted, with a warning.
// adjusted is how CUPED shaped it (nil: it did not).
func analyzeMetric(m metric, sums []Sums, set settings) (a stats.Analysis, adjusted *CUPEDMetric, warning string, err error) {
	req := set.request(m, sums)
	a, err = stats.Analyze(req)
	if !req.Options.CUPED {
		return a, nil, "", err
	}
	set.cuped = cupedState{}
	plain, perr := stats.Analyze(set.request(m, sums))
	if err != nil {
		return plain, nil, fmt.Sprintf("%s is not CUPED-adjusted: %v", m.name, err), perr
	}
	if perr != nil || a.CUPEDTheta == nil {
		return a, nil, "", nil
	}
	if *a.CUPEDTheta == 0 {
		// The covariate predicted nothing (no visitor of the test had any,
		// or it did not vary): the figures are the unadjusted ones, and
		// the report must not call them adjusted.
		return plain, nil, "", nil
	}
	return a, &CUPEDMetric{Covariate: cupedCovariates[m.name], Theta: *a.CUPEDTheta, IntervalWidthRatio: widthRatios(a, plain)}, "", nil
}

// widthRatios are, per variant, the width of the adjusted difference's
// confidence interval over the unadjusted one's: below 1 when the
// covariate explains some of the metric's variance.
func widthRatios(adj, plain stats.Analysis) []VariantRatio {
	out := []VariantRatio{}
	for i, c := range adj.Comparisons {
		p := plain.Comparisons[i]
		if !c.Computable || !p.Computable {
			continue
		}
		w := p.Frequentist.DifferenceInterval.Upper - p.Frequentist.DifferenceInterval.Lower
		if w <= 0 {
			continue
		}
		out = append(out, VariantRatio{TestGroupIndex: c.TestGroupIndex,
			Ratio: (c.Frequentist.DifferenceInterval.Upper - c.Frequentist.DifferenceInterval.Lower) / w})
	}
	return out
}
