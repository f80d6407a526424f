package stats

import (
	"fmt"
	"math"
)

// Reason says why a comparison is not computable. The values are stable
// codes; Comparison.Message carries the words for people.
type Reason string

const (
	ReasonEmptyGroup          Reason = "empty_group"
	ReasonTooFewUnits         Reason = "too_few_units"
	ReasonZeroDenominator     Reason = "zero_denominator"
	ReasonControlMeanZero     Reason = "control_mean_zero"
	ReasonControlMeanNegative Reason = "control_mean_negative"
	ReasonZeroVariance        Reason = "zero_variance"
	ReasonNumericOverflow     Reason = "numeric_overflow"
)

// notComputable is a Reason with the sentence that explains it.
type notComputable struct {
	reason  Reason
	message string
}

// summary is all a comparison needs from a group: the metric's mean and the
// variance of one unit's contribution, so that Var(mean) = variance/n.
type summary struct {
	n        float64
	mean     float64
	variance float64
	// base is what the delta method's relative lift divides by: the mean,
	// except under CUPED with RelativeDelta, where the published libraries
	// divide by the unadjusted mean (see cupedFitJoint).
	base float64
	// ratioBase is set for a ratio control under CUPED with RelativeDelta
	// (cuped_ratio.go): the lift's variance needs base's own.
	ratioBase *ratioBase
}

// summarize turns sufficient statistics into a summary. capped, when not nil,
// replaces the (numerator) sums by their winsorized versions.
func summarize(kind MetricKind, g GroupStats, capped *CappedSums) (summary, *notComputable) {
	if g.N == 0 {
		return summary{}, &notComputable{ReasonEmptyGroup, "the group has no units"}
	}
	// One unit gives no estimate of spread, and Welch's degrees of freedom
	// divide by n−1.
	if g.N == 1 {
		return summary{}, &notComputable{ReasonTooFewUnits, "the group has a single unit; at least 2 are needed"}
	}
	sum, sq, cross := g.Sum, g.SumSquares, g.CrossSum
	if capped != nil {
		sum, sq, cross = capped.Sum, capped.SumSquares, capped.CrossSum
	}
	n := float64(g.N)
	var s summary
	switch kind {
	case KindProportion:
		p := sum / n
		s = summary{n: n, mean: p, variance: p * (1 - p)}
	case KindMean:
		s = summary{n: n, mean: sum / n, variance: sampleVariance(sq, sum, n)}
	case KindRatio:
		if g.DenominatorSum == 0 {
			return summary{}, &notComputable{ReasonZeroDenominator, "the ratio's denominator sums to 0"}
		}
		s = ratioSummary(n, sum, sq, g.DenominatorSum, g.DenominatorSumSquares, cross)
	}
	if !finite(s.mean) || !finite(s.variance) {
		return summary{}, &notComputable{ReasonNumericOverflow, "the sums are too large to compute with"}
	}
	s.base = s.mean
	return s, nil
}

// centered is Σy² − (Σy)²/n, the sum of squared deviations. It is a
// difference of large numbers, so a result within rounding of zero is zero:
// otherwise identical values would show a tiny false spread and a wild
// t statistic.
func centered(sq, sum, n float64) float64 {
	c := sq - sum*(sum/n)
	if c <= 1e-10*math.Abs(sq) {
		return 0
	}
	return c
}

func sampleVariance(sq, sum, n float64) float64 {
	return centered(sq, sum, n) / (n - 1)
}

// ratioSummary applies the delta method to Σm/Σd: with r = m̄/d̄ the per-unit
// variance is (Var m − 2r·Cov(m,d) + r²·Var d)/d̄².
func ratioSummary(n, sm, sqm, sd, sqd, cross float64) summary {
	md := sd / n
	r := sm / sd
	vm := sampleVariance(sqm, sm, n)
	vd := sampleVariance(sqd, sd, n)
	cov := (cross - sm*md) / (n - 1)
	if math.Abs(cross-sm*md) <= 1e-10*math.Abs(cross) {
		cov = 0
	}
	spread := vm + r*r*vd
	v := (spread - 2*r*cov) / (md * md)
	// Perfectly proportional m and d leave only rounding noise here.
	if v <= 1e-10*spread/(md*md) {
		v = 0
	}
	return summary{n: n, mean: r, variance: v}
}

// groupProblem names the group in a notComputable so the message says whose
// fault it is.
func groupProblem(nc *notComputable, role string, index int) *notComputable {
	return &notComputable{nc.reason, fmt.Sprintf("%s (test group %d): %s", role, index, nc.message)}
}
