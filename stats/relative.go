package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// RelativeRisk is the ratio of two proportions pB/pA (lift + 1) with its
// log-scale (Katz) interval, the conventional figure for conversion rates.
type RelativeRisk struct {
	Ratio              float64  `json:"ratio"`
	ConfidenceInterval Interval `json:"confidence_interval"`
}

// Reasons specific to the default relative method.
const (
	// ReasonControlMeanUncertain: the control mean is not distinguishable
	// from 0 at the confidence level, so any ratio to it is unbounded.
	ReasonControlMeanUncertain Reason = "control_mean_uncertain"
)

// compareFieller is the default comparison (RelativeFieller). Everything is
// tested on the absolute difference B − A, whose Welch statistic does not
// care which group is called control, so A/A tests err as often in each
// direction; the relative figures are derived from the same test, never
// tested on their own.
func compareFieller(ctl, trt summary, set settings) (Comparison, *notComputable) {
	if nc := fiellerDegenerate(ctl, trt); nc != nil {
		return Comparison{}, nc
	}
	vA := safeVariance(ctl, trt, set.kind) / ctl.n
	vB := safeVariance(trt, ctl, set.kind) / trt.n
	abs := effect{trt.mean - ctl.mean, vA + vB}
	lift := trt.mean/ctl.mean - 1
	f, crit := differenceTest(abs, ctl, trt, vA, vB, set)
	ci, ok := liftInterval(abs.estimate, abs.variance, ctl.mean, vA, 1, crit)
	if !ok {
		return Comparison{}, &notComputable{ReasonControlMeanUncertain,
			"the control mean is not distinguishable from 0 at the confidence level, so the relative lift's interval is unbounded"}
	}
	f.PValue, f.ConfidenceInterval = f.DifferencePValue, ci
	b, ok := bayesianFromDifference(abs, ctl.mean, vA, set)
	if !ok {
		return Comparison{}, &notComputable{ReasonControlMeanUncertain,
			"the control mean is not distinguishable from 0 at the credible level, so the relative lift's interval is unbounded"}
	}
	c := Comparison{Computable: true, Lift: &lift, Difference: &abs.estimate, Frequentist: f, Bayesian: b}
	if set.kind == KindProportion || set.nonNegative {
		// A rate (or revenue, an order value) cannot fall below 0, so
		// neither can the lift below −100 %; Fieller's normal
		// approximation does not know that near 0.
		f.ConfidenceInterval = atLeastMinusOne(f.ConfidenceInterval)
		b.CredibleInterval = atLeastMinusOne(b.CredibleInterval)
	}
	if set.kind == KindProportion {
		c.RelativeRisk = relativeRisk(ctl, trt, crit)
	}
	if !c.finite() {
		return Comparison{}, &notComputable{ReasonNumericOverflow, "the values are too extreme to compute with"}
	}
	return c, nil
}

// fiellerDegenerate says why two groups cannot be compared at all.
func fiellerDegenerate(ctl, trt summary) *notComputable {
	switch {
	case ctl.mean == 0:
		return &notComputable{ReasonControlMeanZero, "the control mean is 0, so a relative lift is undefined"}
	case ctl.mean < 0:
		return &notComputable{ReasonControlMeanNegative, "the control mean is negative, so a relative lift has no meaningful sign"}
	case ctl.variance == 0 && trt.variance == 0:
		// Neither group shows any spread: a test would claim certainty that
		// two constants differ, which no finite sample supports.
		return &notComputable{ReasonZeroVariance, "neither group has any spread (zero variance: all units alike), so there is no test or interval to give"}
	}
	return nil
}

// atLeastMinusOne clamps both ends, so a prior centred below −100 % gives
// [−1, −1] rather than an interval out of order.
func atLeastMinusOne(in Interval) Interval {
	return Interval{math.Max(-1, in.Lower), math.Max(-1, in.Upper)}
}

// safeVariance is a group's per-unit variance, except where an observed
// variance of 0 would claim the group's mean is known exactly: a
// proportion at 0 or 100 % gets the variance of the Agresti–Caffo adjusted
// rate (x+1)/(n+2), so 0 of 5,000 still allows a few in 5,000; a mean
// whose units are all alike (300 visitors, none of whom bought: revenue 0
// each) gets the other group's variance, as a pooled test would, so its
// lift is not a point at −100 %.
func safeVariance(s, other summary, kind MetricKind) float64 {
	switch {
	case s.variance > 0:
		return s.variance
	case kind == KindProportion:
		p := (s.mean*s.n + 1) / (s.n + 2)
		return p * (1 - p)
	case kind == KindMean:
		return other.variance
	}
	return s.variance
}

// differenceTest is the test of B − A = 0 (Welch, or the always-valid test)
// and the critical value its interval uses, so the relative interval can be
// built to agree with it.
func differenceTest(abs effect, ctl, trt summary, vA, vB float64, set settings) (*Frequentist, float64) {
	f := &Frequentist{}
	if s := set.sequential; s != nil {
		n := ctl.n + trt.n
		alpha := 1 - set.confidence
		f.Sequential = true
		f.DifferencePValue, f.DifferenceInterval = sequentialTest(abs, n, alpha, s.TuningParameter)
		return f, sequentialCritical(n, alpha, s.TuningParameter)
	}
	df := welchDFOf(vA, vB, ctl.n, trt.n)
	f.DegreesOfFreedom = &df
	f.DifferencePValue, f.DifferenceInterval = tTest(abs, df, set.confidence)
	return f, studentsT(df).Quantile((1 + set.confidence) / 2)
}

// liftInterval is Fieller's interval for λ = Δ/μ_A − with Δ estimated by d
// (variance vd), μ_A by mA (variance vA) and Cov(d, mA) = −w·vA: the λ for
// which |d − λ·mA| ≤ crit·sd(d − λ·mA). At λ = 0 that is the test of Δ = 0,
// so the interval excludes 0 exactly when the test rejects, and it maps to
// the reciprocal interval when the groups swap. It is bounded only when mA
// itself is distinguishable from 0 (g < 1); otherwise ok is false. Scaled by
// mA² so that large means cannot overflow.
func liftInterval(d, vd, mA, vA, w, crit float64) (Interval, bool) {
	c2 := crit * crit
	g := c2 * (vA / mA) / mA
	if !(g < 1) {
		return Interval{}, false
	}
	q := d / mA
	h := c2 * (vd / mA) / mA
	b := q + w*g
	disc := math.Sqrt(math.Max(0, b*b-(1-g)*(q*q-h)))
	return Interval{(b - disc) / (1 - g), (b + disc) / (1 - g)}, true
}

// bayesianFromDifference is the Gaussian posterior of the difference Δ
// (flat or the relative prior scaled by the control mean), read three
// ways: the chance P(Δ > 0), the risk E[max(−Δ, 0)], and the lift Δ/μ_A
// with a Fieller-type credible interval. The chance and the p-value then
// come from the same Welch statistic and agree in direction.
func bayesianFromDifference(abs effect, ctlMean, vA float64, set settings) (*Bayesian, bool) {
	dmu, dv := posterior(abs, set.prior, ctlMean)
	z := distuv.UnitNormal.Quantile((1 + set.credible) / 2)
	// A prior shrinks the difference by w = dv/vd, and its covariance with
	// the control mean by as much.
	ci, ok := liftInterval(dmu, dv, ctlMean, vA, dv/abs.variance, z)
	if !ok {
		return nil, false
	}
	better := 1.0
	if set.lowerIsBetter {
		better = -1
	}
	sd := math.Sqrt(dv)
	return &Bayesian{
		ExpectedLift:     dmu / ctlMean,
		CredibleInterval: ci,
		ProbBeatControl:  distuv.UnitNormal.CDF(better * dmu / sd),
		Risk:             expectedLoss(better*dmu, sd),
	}, true
}

// relativeRisk is pB/pA with the Katz interval exp(ln RR ± crit·se),
// se² = 1/x_B − 1/n_B + 1/x_A − 1/n_A. A variant with no successes would make
// se infinite; then half a unit is added to every cell (Haldane) and the
// lower bound is 0, which is all that 0 successes can say.
func relativeRisk(ctl, trt summary, crit float64) *RelativeRisk {
	xA, nA, xB, nB := ctl.mean*ctl.n, ctl.n, trt.mean*trt.n, trt.n
	zero := xB == 0
	if zero {
		xA, nA, xB, nB = xA+0.5, nA+1, xB+0.5, nB+1
	}
	logRR := math.Log((xB / nB) / (xA / nA))
	se := math.Sqrt(math.Max(0, 1/xB-1/nB+1/xA-1/nA))
	ci := Interval{math.Exp(logRR - crit*se), math.Exp(logRR + crit*se)}
	if zero {
		ci.Lower = 0
	}
	return &RelativeRisk{Ratio: trt.mean / ctl.mean, ConfidenceInterval: ci}
}

// welchDFOf is the Welch–Satterthwaite degrees of freedom from the
// variances of the two means, as shares so that large sums cannot overflow.
func welchDFOf(vA, vB, nA, nB float64) float64 {
	a, b := vA/(vA+vB), vB/(vA+vB)
	return 1 / (a*a/(nA-1) + b*b/(nB-1))
}
