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

// CUPEDApplied is how CUPED shaped the figures: the lookback, how many
// units had pre-exposure activity, and each adjusted metric's covariate
// and θ (stats' cuped_theta).
type CUPEDApplied struct {
	LookbackDays     int                    `json:"lookback_days"`
	UnitsWithHistory int64                  `json:"units_with_history"`
	Metrics          map[string]CUPEDMetric `json:"metrics"`
}

// CUPEDMetric is one adjusted metric's covariate and the θ applied.
type CUPEDMetric struct {
	Covariate string  `json:"covariate"`
	Theta     float64 `json:"cuped_theta"`
}

// cupedCovariates names the covariate each adjusted metric pairs with.
// Other metrics are compared unadjusted: the ratio (average order value)
// and the engagement rates have no pre-exposure measure in the warehouse
// that stats can adjust them with.
var cupedCovariates = map[string]string{
	"conversion_rate":     "pre_exposure_orders_and_add_to_carts",
	"revenue_per_visitor": "pre_exposure_revenue",
	"profit_per_visitor":  "pre_exposure_revenue",
}

// cupedState is what a computation knows of CUPED: the covariates per
// group when they can be applied, else why not.
type cupedState struct {
	rows   map[int]CovariateRow
	reason string
}

// Why CUPED may not apply.
const (
	cupedNoHistory = "No visitor of this test has orders or add-to-carts in the 28 days before its first assignment, so there is no pre-exposure data to adjust with; the figures are not CUPED-adjusted."
	cupedMoved     = "Units arrived between the reads of the metrics and of their pre-exposure data; the figures are not CUPED-adjusted this time."
	cupedNoCompare = "This query compares no groups (it has a breakdown), so there is nothing to adjust."
	cupedRefused   = "No metric could be adjusted with its pre-exposure data; the figures are not CUPED-adjusted."
)

// sumsAndCovariates reads the sums of q and, when CUPED is asked for and
// the groups will be compared, its covariates alongside (they read the
// same units again).
func (s *Service) sumsAndCovariates(ctx context.Context, q MetricsQuery, cuped, compares bool) ([]GroupRow, cupedState, error) {
	if !cuped || !compares {
		rows, err := s.cfg.Warehouse.GroupMetrics(ctx, q)
		var state cupedState
		if cuped {
			state.reason = cupedNoCompare
		}
		return rows, state, err
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
// exactly those units and some unit has history.
func pairCovariates(cov []CovariateRow, rows []GroupRow) cupedState {
	units := map[int]int64{}
	for _, r := range rows {
		units[r.TestGroup] += r.N
	}
	state := cupedState{rows: map[int]CovariateRow{}}
	var history int64
	for _, c := range cov {
		state.rows[c.TestGroup] = c
		history += c.WithHistory
		if units[c.TestGroup] != c.N {
			return cupedState{reason: cupedMoved}
		}
	}
	if history == 0 {
		return cupedState{reason: cupedNoHistory}
	}
	return state
}

// cupedRequest adds the covariates to req, the request of metric m over
// sums, when m has one and the covariates are those of exactly these units
// (a breakdown cell is compared unadjusted unless it holds every unit).
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
	if covariate == "pre_exposure_orders_and_add_to_carts" {
		return &stats.CovariateSums{Sum: c.PreActivity, SumSquares: c.PreActivitySq, CrossSum: c.ConvertedCross}
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

// noteCUPED records in a whether CUPED shaped the comparisons of c (nil:
// nothing was compared), with each adjusted metric's θ.
func (a *Analysis) noteCUPED(set settings, c *comparison) {
	if !set.opts.CUPED {
		return
	}
	reason := set.cuped.reason
	if reason == "" && c == nil {
		reason = cupedNoCompare
	}
	applied := &CUPEDApplied{LookbackDays: CUPEDLookbackDays, Metrics: map[string]CUPEDMetric{}}
	if reason == "" {
		for _, r := range set.cuped.rows {
			applied.UnitsWithHistory += r.WithHistory
		}
		for name, cov := range cupedCovariates {
			if an := c.analyses[name]; an != nil && an.CUPEDTheta != nil {
				applied.Metrics[name] = CUPEDMetric{Covariate: cov, Theta: *an.CUPEDTheta}
			}
		}
		if len(applied.Metrics) == 0 {
			reason = cupedRefused
		}
	}
	if reason != "" {
		a.NotApplied = append(a.NotApplied, NotApplied{Option: "cuped", Reason: reason})
		return
	}
	a.CUPED, a.CUPEDAdjustment = true, applied
	// "cuped" follows "sequential" in the documented order of applied.
	at := 0
	if len(a.Applied) > 0 && a.Applied[0] == "sequential" {
		at = 1
	}
	a.Applied = append(a.Applied[:at], append([]string{"cuped"}, a.Applied[at:]...)...)
}

// analyzeMetric runs the engine on metric m; when the covariates make the
// engine refuse the request, m is compared unadjusted, with a warning.
func analyzeMetric(m metric, sums []Sums, set settings) (stats.Analysis, string, error) {
	req := set.request(m, sums)
	a, err := stats.Analyze(req)
	if err == nil || !req.Options.CUPED {
		return a, "", err
	}
	set.cuped = cupedState{}
	plain, perr := stats.Analyze(set.request(m, sums))
	return plain, fmt.Sprintf("%s is not CUPED-adjusted: %v", m.name, err), perr
}
