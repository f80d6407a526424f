package results

import (
	"fmt"
	"math"
	"sort"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/money"
	"github.com/liftab/lift/stats"
)

// Wire forms of the results objects (contract §2.7–2.9). The snapshot job
// and the custom-query job build them from warehouse sums and the stats
// engine; the API serves them as stored.

// GroupMetrics are the per-group metrics of §2.7.
type GroupMetrics struct {
	TestGroupIndex      int              `json:"test_group_index"`
	SampleSize          int64            `json:"sample_size"`
	SessionCount        int64            `json:"session_count"`
	ConversionRate      float64          `json:"conversion_rate"`
	RevenuePerVisitor   experiment.Money `json:"revenue_per_visitor"`
	AverageOrderValue   experiment.Money `json:"average_order_value"`
	ProfitPerVisitor    experiment.Money `json:"profit_per_visitor"`
	AddToCartRate       float64          `json:"add_to_cart_rate"`
	ReachedCheckoutRate float64          `json:"reached_checkout_rate"`
	PageViewCount       int64            `json:"page_view_count"`
	ClickThroughCount   int64            `json:"click_through_count"`
	ClickThroughRate    float64          `json:"click_through_rate"`
	BounceRate          float64          `json:"bounce_rate"`
	AvgStayingTime      float64          `json:"avg_staying_time"`
	Orders              int64            `json:"orders"`
	Revenue             experiment.Money `json:"revenue"`
}

// Interval is a {lower, upper} pair of numbers.
type Interval struct {
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
}

// VsControl is one metric of a variant against the control (§2.8). Money
// metrics give difference, risk and difference_interval in money form; the
// others as numbers. When the comparison is not computable the numbers are
// null and Reason/Message say why.
type VsControl struct {
	Lift        *float64    `json:"lift"`
	Difference  any         `json:"difference"`
	Bayesian    *BayesianVs `json:"bayesian"`
	Frequentist *FrequentVs `json:"frequentist"`
	// RelativeRisk is the ratio of a proportion to the control's, with its
	// Katz interval (a rate metric only).
	RelativeRisk *RelativeRiskVs `json:"relative_risk,omitempty"`
	Reason       stats.Reason    `json:"reason,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// RelativeRiskVs is pB/pA with its confidence interval.
type RelativeRiskVs struct {
	Ratio              float64  `json:"ratio"`
	ConfidenceInterval Interval `json:"confidence_interval"`
}

// BayesianVs is the Bayesian part of a VsControl entry.
type BayesianVs struct {
	CredibleInterval Interval `json:"credible_interval"`
	ProbBeatControl  float64  `json:"prob_beat_control"`
	Risk             any      `json:"risk"`
}

// FrequentVs is the frequentist part of a VsControl entry.
type FrequentVs struct {
	PValue             float64  `json:"p_value"`
	ConfidenceInterval Interval `json:"confidence_interval"`
	DifferenceInterval any      `json:"difference_interval"`
	// AdjustedPValue is p_value adjusted across the variants when the
	// analysis applies a correction (holm or benjamini_hochberg).
	AdjustedPValue *float64 `json:"adjusted_p_value,omitempty"`
}

// metric is one of the nine compared metrics: how its sufficient
// statistics come out of the warehouse sums.
type metric struct {
	name          string
	kind          stats.MetricKind
	money         bool
	lowerIsBetter bool
	nonNegative   bool // its values cannot be negative: its lift stays above −100 %
	stats         func(s Sums) stats.GroupStats
	// capped are the winsorized sums of a money metric.
	capped func(s Sums) *stats.CappedSums
}

func proportion(count func(s Sums) int64) func(s Sums) stats.GroupStats {
	return func(s Sums) stats.GroupStats { return stats.GroupStats{N: s.N, Sum: float64(count(s))} }
}

// compared are the nine metrics of vs_control, in the contract's order.
var compared = []metric{
	{name: "conversion_rate", kind: stats.KindProportion, stats: proportion(func(s Sums) int64 { return s.Converted })},
	{name: "revenue_per_visitor", kind: stats.KindMean, money: true, nonNegative: true, stats: func(s Sums) stats.GroupStats {
		return stats.GroupStats{N: s.N, Sum: s.Revenue, SumSquares: s.RevenueSq}
	}, capped: func(s Sums) *stats.CappedSums {
		return &stats.CappedSums{Sum: s.RevenueCapped, SumSquares: s.RevenueCappedSq}
	}},
	{name: "average_order_value", kind: stats.KindRatio, money: true, nonNegative: true, stats: func(s Sums) stats.GroupStats {
		return stats.GroupStats{N: s.N, Sum: s.Revenue, SumSquares: s.RevenueSq, DenominatorSum: s.Orders,
			DenominatorSumSquares: s.OrdersSq, CrossSum: s.RevenueOrders}
	}, capped: func(s Sums) *stats.CappedSums {
		return &stats.CappedSums{Sum: s.RevenueCapped, SumSquares: s.RevenueCappedSq, CrossSum: s.RevenueOrdersCapped}
	}},
	{name: "profit_per_visitor", kind: stats.KindMean, money: true, stats: func(s Sums) stats.GroupStats {
		return stats.GroupStats{N: s.N, Sum: s.Profit, SumSquares: s.ProfitSq}
	}, capped: func(s Sums) *stats.CappedSums {
		return &stats.CappedSums{Sum: s.ProfitCapped, SumSquares: s.ProfitCappedSq}
	}},
	{name: "add_to_cart_rate", kind: stats.KindProportion, stats: proportion(func(s Sums) int64 { return s.AddedToCart })},
	{name: "reached_checkout_rate", kind: stats.KindProportion, stats: proportion(func(s Sums) int64 { return s.ReachedCheckout })},
	{name: "click_through_rate", kind: stats.KindProportion, stats: proportion(func(s Sums) int64 { return s.ClickedThrough })},
	{name: "bounce_rate", kind: stats.KindProportion, lowerIsBetter: true, stats: proportion(func(s Sums) int64 { return s.Bounced })},
	{name: "avg_staying_time", kind: stats.KindMean, nonNegative: true, stats: func(s Sums) stats.GroupStats {
		return stats.GroupStats{N: s.N, Sum: s.Staying, SumSquares: s.StayingSq}
	}},
}

func ratio(num, den float64) float64 {
	if den == 0 {
		return 0
	}
	return num / den
}

// formatMoney writes an amount as the contract's decimal string with the
// currency's ISO 4217 minor units (JPY "1500", KWD "12.345"), rounded
// half-even (package money). The statistics compute in float64; this is
// the one place their amounts are rounded.
func formatMoney(amount float64, currency string) experiment.Money {
	return experiment.Money{Amount: money.FormatFloat(amount, currency), Currency: currency}
}

// groupMetrics turns one group's sums into its §2.7 values.
func groupMetrics(index int, s Sums, currency string) GroupMetrics {
	n := float64(s.N)
	return GroupMetrics{
		TestGroupIndex:      index,
		SampleSize:          s.N,
		SessionCount:        s.Sessions,
		ConversionRate:      ratio(float64(s.Converted), n),
		RevenuePerVisitor:   formatMoney(ratio(s.Revenue, n), currency),
		AverageOrderValue:   formatMoney(ratio(s.Revenue, s.Orders), currency),
		ProfitPerVisitor:    formatMoney(ratio(s.Profit, n), currency),
		AddToCartRate:       ratio(float64(s.AddedToCart), n),
		ReachedCheckoutRate: ratio(float64(s.ReachedCheckout), n),
		PageViewCount:       s.PageViews,
		ClickThroughCount:   s.ClickedThrough,
		ClickThroughRate:    ratio(float64(s.ClickedThrough), n),
		BounceRate:          ratio(float64(s.Bounced), n),
		AvgStayingTime:      ratio(s.Staying, n),
		Orders:              int64(math.Round(s.Orders)),
		Revenue:             formatMoney(s.Revenue, currency),
	}
}

// comparison holds the analysis of every compared metric for one set of
// groups (the whole test, or one breakdown cell).
type comparison struct {
	analyses map[string]*stats.Analysis
	warnings []string
	// cuped is how CUPED shaped each adjusted metric.
	cuped map[string]CUPEDMetric
}

// anyComputable reports whether some metric compared some variant.
func (c *comparison) anyComputable() bool {
	for _, a := range c.analyses {
		for _, cmp := range a.Comparisons {
			if cmp.Computable {
				return true
			}
		}
	}
	return false
}

// compare runs the stats engine on every compared metric with the options
// of set. sums is indexed by test group index, control first.
func compare(sums []Sums, set settings) comparison {
	c := comparison{analyses: map[string]*stats.Analysis{}, cuped: map[string]CUPEDMetric{}}
	if len(sums) < 2 {
		return c
	}
	for _, m := range compared {
		a, adjusted, warning, err := analyzeMetric(m, sums, set)
		if adjusted != nil {
			c.cuped[m.name] = *adjusted
		}
		if warning != "" {
			c.warnings = append(c.warnings, warning)
		}
		if err != nil {
			// Sums the engine refuses cannot come from real rows; say so
			// rather than fail the whole snapshot.
			c.warnings = append(c.warnings, fmt.Sprintf("%s could not be compared: %v", m.name, err))
			continue
		}
		c.analyses[m.name] = &a
	}
	return c
}

// vsControl is the vs_control object of a variant, or nil for the control.
func (c comparison) vsControl(index int, currency string) map[string]*VsControl {
	if index == 0 {
		return nil
	}
	out := make(map[string]*VsControl, len(compared))
	for _, m := range compared {
		a := c.analyses[m.name]
		if a == nil {
			out[m.name] = &VsControl{Reason: "not_computed", Message: "This metric could not be compared."}
			continue
		}
		var cmp *stats.Comparison
		for i := range a.Comparisons {
			if a.Comparisons[i].TestGroupIndex == index {
				cmp = &a.Comparisons[i]
			}
		}
		if cmp == nil || !cmp.Computable {
			v := &VsControl{Reason: "not_computable"}
			if cmp != nil {
				v.Reason, v.Message = cmp.Reason, cmp.Message
			}
			out[m.name] = v
			continue
		}
		amount := func(x float64) any {
			if m.money {
				return formatMoney(x, currency)
			}
			return x
		}
		f, b := cmp.Frequentist, cmp.Bayesian
		var rr *RelativeRiskVs
		if r := cmp.RelativeRisk; r != nil {
			rr = &RelativeRiskVs{Ratio: r.Ratio, ConfidenceInterval: Interval(r.ConfidenceInterval)}
		}
		out[m.name] = &VsControl{
			RelativeRisk: rr,
			Lift:         cmp.Lift,
			Difference:   amount(*cmp.Difference),
			Bayesian: &BayesianVs{CredibleInterval: Interval(b.CredibleInterval), ProbBeatControl: b.ProbBeatControl,
				Risk: amount(b.Risk)},
			Frequentist: &FrequentVs{PValue: f.PValue, ConfidenceInterval: Interval(f.ConfidenceInterval),
				DifferenceInterval: map[string]any{"lower": amount(f.DifferenceInterval.Lower), "upper": amount(f.DifferenceInterval.Upper)},
				AdjustedPValue:     f.AdjustedPValue},
		}
	}
	return out
}

// Decision thresholds of the snapshot's outcome.
const (
	// MinSampleSize is the fewest units a group needs before a snapshot
	// names a winner.
	MinSampleSize = 100
	// WinProbability is the chance to beat control (or, for the control,
	// to beat every variant) that makes a winner.
	WinProbability = 0.95
)

// outcome decides the snapshot's outcome on the primary metric: a variant
// wins when its chance to beat control reaches WinProbability; the control
// wins when every variant's chance is at most 1 − WinProbability; too few
// units or no computable comparison is insufficient_data.
func outcome(c comparison, sums []Sums, primary string) (string, *int) {
	for _, s := range sums {
		if s.N < MinSampleSize {
			return "insufficient_data", nil
		}
	}
	a := c.analyses[primary]
	if a == nil || len(a.Comparisons) == 0 {
		return "insufficient_data", nil
	}
	best, bestP, allLose := -1, 0.0, true
	for _, cmp := range a.Comparisons {
		if !cmp.Computable {
			return "insufficient_data", nil
		}
		p := cmp.Bayesian.ProbBeatControl
		if p > bestP {
			best, bestP = cmp.TestGroupIndex, p
		}
		if p > 1-WinProbability {
			allLose = false
		}
	}
	switch {
	case bestP >= WinProbability:
		return "winner", &best
	case allLose:
		zero := 0
		return "winner", &zero
	}
	return "inconclusive", nil
}

// sumsByGroup orders rows (of one breakdown cell) by test group index,
// filling groups without units with zero sums.
func sumsByGroup(rows []GroupRow, groups int) []Sums {
	out := make([]Sums, groups)
	for _, r := range rows {
		if r.TestGroup >= 0 && r.TestGroup < groups {
			out[r.TestGroup] = r.Sums
		}
	}
	return out
}

// byKey splits rows by breakdown key, keys sorted.
func byKey(rows []GroupRow) ([]string, map[string][]GroupRow) {
	m := map[string][]GroupRow{}
	var keys []string
	for _, r := range rows {
		if _, ok := m[r.Key]; !ok {
			keys = append(keys, r.Key)
		}
		m[r.Key] = append(m[r.Key], r)
	}
	sort.Strings(keys)
	return keys, m
}
