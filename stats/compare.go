package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a two-sided interval.
type Interval struct {
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
}

// Frequentist is the hypothesis test of "no difference" between a variant
// and the control. PValue and ConfidenceInterval are on the relative lift,
// DifferencePValue and DifferenceInterval on the absolute difference; the two
// p-values differ because the lift's delta-method variance also carries the
// control mean's uncertainty.
type Frequentist struct {
	PValue             float64  `json:"p_value"`
	ConfidenceInterval Interval `json:"confidence_interval"`
	DifferencePValue   float64  `json:"difference_p_value"`
	DifferenceInterval Interval `json:"difference_interval"`
	// DegreesOfFreedom is Welch's; absent for the sequential test, which
	// rests on the normal approximation.
	DegreesOfFreedom *float64 `json:"degrees_of_freedom,omitempty"`
	// Sequential is true when the p-values and intervals are always-valid.
	Sequential bool `json:"sequential"`
	// AdjustedPValue and AdjustedDifferencePValue are Holm-adjusted across
	// the computable variants; present only with Options.Holm.
	AdjustedPValue           *float64 `json:"adjusted_p_value,omitempty"`
	AdjustedDifferencePValue *float64 `json:"adjusted_difference_p_value,omitempty"`
}

// Bayesian is the Gaussian posterior of the effect.
type Bayesian struct {
	// ExpectedLift is the posterior mean of the relative lift; it equals the
	// observed lift under the flat prior and is shrunk towards the prior mean
	// under a proper one.
	ExpectedLift     float64  `json:"expected_lift"`
	CredibleInterval Interval `json:"credible_interval"`
	// ProbBeatControl is P(variant better than control): lift > 0, or < 0
	// for lower-is-better metrics.
	ProbBeatControl float64 `json:"prob_beat_control"`
	// Risk is the expected loss of choosing the variant, E[max(−Δ, 0)] in the
	// metric's own units (Δ the absolute difference; E[max(Δ, 0)] for
	// lower-is-better metrics).
	Risk float64 `json:"risk"`
}

// Comparison is one variant against the control. Either Computable is true
// and every pointer is set, or it is false and Reason and Message say why.
type Comparison struct {
	TestGroupIndex int          `json:"test_group_index"`
	Computable     bool         `json:"computable"`
	Reason         Reason       `json:"reason,omitempty"`
	Message        string       `json:"message,omitempty"`
	Lift           *float64     `json:"lift,omitempty"`
	Difference     *float64     `json:"difference,omitempty"`
	Frequentist    *Frequentist `json:"frequentist,omitempty"`
	Bayesian       *Bayesian    `json:"bayesian,omitempty"`
	// RelativeRisk is present for proportion metrics under the default
	// relative method.
	RelativeRisk *RelativeRisk `json:"relative_risk,omitempty"`
}

// effect is an estimate with the variance of its sampling distribution.
type effect struct {
	estimate float64
	variance float64
}

// settings are the parts of a validated request that shape one comparison.
type settings struct {
	confidence    float64
	credible      float64
	lowerIsBetter bool
	sequential    *Sequential
	prior         *Prior
	kind          MetricKind
	nonNegative   bool // the metric's values cannot be negative (AnalysisRequest.NonNegative)
	method        RelativeMethod
}

// compare computes every number of a Comparison, or says why it cannot.
func compare(ctl, trt summary, set settings) (Comparison, *notComputable) {
	if set.method == RelativeDelta {
		return compareDelta(ctl, trt, set)
	}
	return compareFieller(ctl, trt, set)
}

// compareDelta is the GrowthBook method (RelativeDelta): the relative lift
// tested on its own, with its delta-method variance.
func compareDelta(ctl, trt summary, set settings) (Comparison, *notComputable) {
	rel, abs, nc := effects(ctl, trt)
	if nc != nil {
		return Comparison{}, nc
	}
	c := Comparison{
		Computable:  true,
		Lift:        &rel.estimate,
		Difference:  &abs.estimate,
		Frequentist: frequentist(rel, abs, ctl, trt, set),
		Bayesian:    bayesian(rel, abs, ctl.mean, set),
	}
	if !c.finite() {
		return Comparison{}, &notComputable{ReasonNumericOverflow, "the values are too extreme to compute with"}
	}
	return c, nil
}

// effects are the relative lift (B − A)/A and the difference B − A, with
// their delta-method and Welch variances (DESIGN §8). The lift divides by
// the control's base, its mean except under CUPED (cupedFitJoint), where
// the variance keeps the published libraries' form
// s²_B/(n_B·base²) + s²_A·m_B²/(n_A·base⁴).
func effects(ctl, trt summary) (rel, abs effect, nc *notComputable) {
	switch {
	case ctl.base == 0:
		return rel, abs, &notComputable{ReasonControlMeanZero, "the control mean is 0, so a relative lift is undefined"}
	case ctl.base < 0:
		return rel, abs, &notComputable{ReasonControlMeanNegative, "the control mean is negative, so a relative lift has no meaningful sign"}
	}
	seA, seB := ctl.variance/ctl.n, trt.variance/trt.n
	abs = effect{trt.mean - ctl.mean, seA + seB}
	r := trt.mean / ctl.base
	rel = effect{abs.estimate / ctl.base, (seB + seA*r*r) / (ctl.base * ctl.base)}
	if ctl.ratioBase != nil {
		rel.variance = relativeVariance(ctl, trt)
	}
	if abs.variance == 0 || rel.variance == 0 {
		return rel, abs, &notComputable{ReasonZeroVariance, "the estimate has zero variance (all units alike), so there is no test or interval to give"}
	}
	return rel, abs, nil
}

func frequentist(rel, abs effect, ctl, trt summary, set settings) *Frequentist {
	f := &Frequentist{}
	if s := set.sequential; s != nil {
		n := ctl.n + trt.n
		alpha := 1 - set.confidence
		f.Sequential = true
		f.PValue, f.ConfidenceInterval = sequentialTest(rel, n, alpha, s.TuningParameter)
		f.DifferencePValue, f.DifferenceInterval = sequentialTest(abs, n, alpha, s.TuningParameter)
		return f
	}
	df := welchDF(ctl, trt)
	f.DegreesOfFreedom = &df
	f.PValue, f.ConfidenceInterval = tTest(rel, df, set.confidence)
	f.DifferencePValue, f.DifferenceInterval = tTest(abs, df, set.confidence)
	return f
}

// sequentialCritical is the always-valid boundary in standard errors: the
// sequential interval is estimate ± sequentialCritical·sd.
func sequentialCritical(n, alpha, tuning float64) float64 {
	rho2 := (-2*math.Log(alpha) + math.Log(1-2*math.Log(alpha))) / tuning
	k := n*rho2 + 1
	return math.Sqrt(2 * k / (n * rho2) * math.Log(math.Sqrt(k)/alpha))
}

// welchDF is the Welch–Satterthwaite degrees of freedom, written with the
// shares of the two variances so that large sums cannot overflow.
func welchDF(ctl, trt summary) float64 {
	return welchDFOf(ctl.variance/ctl.n, trt.variance/trt.n, ctl.n, trt.n)
}

// distribution is what a test needs from the reference distribution.
type distribution interface {
	Survival(x float64) float64
	Quantile(p float64) float64
}

// studentsT is Student's t with df degrees of freedom. Past 10⁷ it is the
// normal to within 10⁻⁷, and gonum's incomplete beta loses accuracy there
// (it returns garbage near 10¹⁵), so the normal stands in.
func studentsT(df float64) distribution {
	if df > 1e7 {
		return distuv.UnitNormal
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
}

// tTest is the two-sided test of estimate = 0 and its confidence interval.
func tTest(e effect, df, level float64) (float64, Interval) {
	sd := math.Sqrt(e.variance)
	dist := studentsT(df)
	p := 0.0
	if t := math.Abs(e.estimate) / sd; !math.IsInf(t, 0) {
		p = math.Min(1, 2*dist.Survival(t))
	}
	q := dist.Quantile((1 + level) / 2)
	return p, Interval{e.estimate - q*sd, e.estimate + q*sd}
}

// sequentialTest is the two-sided always-valid test: the asymptotic
// confidence sequence of Waudby-Smith et al. (2021, "Time-uniform central
// limit theory and asymptotic confidence sequences", arXiv:2103.06476) with
// the normal-mixture boundary of Howard et al. (2021), which is what
// GrowthBook calls sequential testing. Its intervals cover the truth at every
// sample size at once with probability 1 − alpha, so results may be looked at
// daily without inflating false positives. n is the total sample size and
// the per-unit variance is σ² = n·e.variance; the half-width is
//
//	σ·√(2(nρ² + 1)/(n²ρ²) · ln(√(nρ² + 1)/α)).
//
// The mixing parameter ρ² = (−2 ln α + ln(1 − 2 ln α))/tuning makes the
// boundary narrowest at n = tuning.
func sequentialTest(e effect, n, alpha, tuning float64) (float64, Interval) {
	rho2 := (-2*math.Log(alpha) + math.Log(1-2*math.Log(alpha))) / tuning
	k := n*rho2 + 1
	half := math.Sqrt(e.variance) * sequentialCritical(n, alpha, tuning)
	// The p-value is 1/E for the mixture e-value E; it is ≤ alpha exactly
	// when the interval excludes 0. Working with log E avoids overflow.
	logE := rho2*n*(e.estimate*e.estimate/e.variance)/(2*k) - 0.5*math.Log(k)
	p := 1.0
	if logE > 0 {
		p = math.Exp(-logE)
	}
	return p, Interval{e.estimate - half, e.estimate + half}
}

func bayesian(rel, abs effect, ctlMean float64, set settings) *Bayesian {
	mu, v := posterior(rel, set.prior, 1)
	dmu, dv := posterior(abs, set.prior, ctlMean)
	sd := math.Sqrt(v)
	z := distuv.UnitNormal.Quantile((1 + set.credible) / 2)
	// better flips the sign of "good" for lower-is-better metrics.
	better := 1.0
	if set.lowerIsBetter {
		better = -1
	}
	return &Bayesian{
		ExpectedLift:     mu,
		CredibleInterval: Interval{mu - z*sd, mu + z*sd},
		ProbBeatControl:  distuv.UnitNormal.CDF(better * mu / sd),
		Risk:             expectedLoss(better*dmu, math.Sqrt(dv)),
	}
}

// posterior combines the Gaussian likelihood of an effect with the prior.
// The prior is stated on the relative lift; scale (the control mean) carries
// it to the absolute difference. No prior means the flat one, under which
// the posterior is the likelihood.
func posterior(e effect, prior *Prior, scale float64) (mean, variance float64) {
	if prior == nil {
		return e.estimate, e.variance
	}
	pm := prior.Mean * scale
	pv := prior.StdDev * scale * prior.StdDev * scale
	precision := 1/pv + 1/e.variance
	return (pm/pv + e.estimate/e.variance) / precision, 1 / precision
}

// expectedLoss is E[max(−X, 0)] for X ~ N(m, s²): s·φ(m/s) − m·Φ(−m/s).
// Rounding can leave a hair below zero when m/s is large.
func expectedLoss(m, s float64) float64 {
	x := m / s
	return math.Max(0, s*distuv.UnitNormal.Prob(x)-m*distuv.UnitNormal.CDF(-x))
}

// finite reports whether every number of a computed comparison is finite.
func (c Comparison) finite() bool {
	f, b := c.Frequentist, c.Bayesian
	for _, v := range []float64{
		*c.Lift, *c.Difference,
		f.PValue, f.ConfidenceInterval.Lower, f.ConfidenceInterval.Upper,
		f.DifferencePValue, f.DifferenceInterval.Lower, f.DifferenceInterval.Upper,
		b.ExpectedLift, b.CredibleInterval.Lower, b.CredibleInterval.Upper, b.ProbBeatControl, b.Risk,
	} {
		if !finite(v) {
			return false
		}
	}
	if r := c.RelativeRisk; r != nil && !(finite(r.Ratio) && finite(r.ConfidenceInterval.Lower) && finite(r.ConfidenceInterval.Upper)) {
		return false
	}
	return f.DegreesOfFreedom == nil || finite(*f.DegreesOfFreedom)
}
