package stats

import (
	"errors"
	"fmt"
)

// CUPED (Deng et al. 2013, "Improving the sensitivity of online controlled
// experiments by utilizing pre-experiment data") analyses Y − θ(X − X̄)
// instead of Y, X a unit's value of the same metric before the test. X is
// independent of the assignment, so the adjusted mean keeps its expectation
// while its variance shrinks by the share of Y's variance that X explains
// (1 − ρ²). θ = Cov(Y, X)/Var(X) is pooled over the groups from their
// within-group sums, and X̄ is the pooled mean, so every group is shifted by
// the same rule and a treatment effect on Y cannot leak into θ.

// cupedAdjustment is θ and the covariate mean X̄ each group is centred on.
// keepBase leaves summary.base at the unadjusted mean (cupedFitJoint).
// ratio marks a fit of a ratio metric (cuped_ratio.go), whose xbar is
// the pooled pre-exposure ratio.
type cupedAdjustment struct {
	theta, xbar float64
	keepBase    bool
	ratio       bool
}

// cupedFit computes θ from the groups that have at least two units. A
// covariate without spread explains nothing: θ = 0 leaves Y as it is.
func cupedFit(groups []GroupStats) cupedAdjustment {
	var cov, varX, sumX, n float64
	for _, g := range groups {
		if g.N < 2 {
			continue
		}
		ng := float64(g.N)
		sumY, _ := analysedY(g)
		x := g.Covariate
		cov += x.CrossSum - x.Sum*(sumY/ng)
		varX += centered(x.SumSquares, x.Sum, ng)
		sumX += x.Sum
		n += ng
	}
	if varX == 0 || n == 0 {
		return cupedAdjustment{}
	}
	return cupedAdjustment{theta: cov / varX, xbar: sumX / n}
}

// cupedFitJoint is the convention of GrowthBook's gbstats and PostHog
// (compute_theta in both), kept so that RelativeDelta reproduces their
// published CUPED values: θ from the groups' sums pooled as if one sample,
// Cov(Y, X)/Var(X) over all units, so that a difference between the groups'
// means enters θ; each group's mean becomes Ȳ_g − θX̄_g (X̄ = 0, not
// centred); and the relative lift divides the adjusted difference by the
// control's unadjusted mean. cupedFit (within groups, centred) is the
// default because a treatment effect cannot leak into its θ, and its
// adjusted control mean, not Ȳ_A, is the control's best estimate.
func cupedFitJoint(groups []GroupStats) cupedAdjustment {
	var sumY, sumX, sqX, cross, n float64
	for _, g := range groups {
		y, _ := analysedY(g)
		sumY += y
		sumX += g.Covariate.Sum
		sqX += g.Covariate.SumSquares
		cross += g.Covariate.CrossSum
		n += float64(g.N)
	}
	varX := centered(sqX, sumX, n)
	if varX == 0 || n < 2 {
		return cupedAdjustment{keepBase: true}
	}
	return cupedAdjustment{theta: (cross - sumY*(sumX/n)) / varX, keepBase: true}
}

// apply shifts a group's mean by −θ(X̄_g − X̄) and replaces its per-unit
// variance by Var(Y − θX) = Var Y − 2θ·Cov(Y, X) + θ²·Var X.
func (c cupedAdjustment) apply(s summary, g GroupStats) summary {
	if c.ratio {
		return c.applyRatio(s, g)
	}
	n := float64(g.N)
	sumY, _ := analysedY(g)
	x := g.Covariate
	covYX := (x.CrossSum - x.Sum*(sumY/n)) / (n - 1)
	varX := centered(x.SumSquares, x.Sum, n) / (n - 1)
	s.mean -= c.theta * (x.Sum/n - c.xbar)
	v := s.variance - 2*c.theta*covYX + c.theta*c.theta*varX
	// Var(Y − θX) ≥ 0 always; rounding may leave a hair below.
	if v <= 1e-10*s.variance {
		v = 0
	}
	s.variance = v
	if !c.keepBase {
		s.base = s.mean
	}
	return s
}

// analysedY is ΣY and ΣY² as analysed: capped when winsorized.
func analysedY(g GroupStats) (sum, sq float64) {
	if c := g.Winsorized; c != nil {
		return c.Sum, c.SumSquares
	}
	return g.Sum, g.SumSquares
}

// validateCovariate checks the covariate sums like the metric's own: a
// covariate is required exactly with options.cuped, and its cross sum must
// fit the variances of X and Y (the capped Y when winsorized).
func (r AnalysisRequest) validateCovariate(g GroupStats) error {
	x := g.Covariate
	switch {
	case !r.Options.CUPED && x == nil:
		return nil
	case !r.Options.CUPED:
		return errors.New("covariate sums given but options.cuped is not set")
	case x == nil:
		return errors.New("options.cuped is set but covariate sums are missing")
	}
	for _, v := range []float64{x.Sum, x.SumSquares, x.CrossSum} {
		if !finite(v) {
			return fmt.Errorf("covariate sums contain %v, not a finite number", v)
		}
	}
	n := float64(g.N)
	if err := checkMoments("covariate.sum", "covariate.sum_squares", n, x.Sum, x.SumSquares); err != nil {
		return err
	}
	sumY, sqY := analysedY(g)
	if err := checkCovariance("covariate.cross_sum", n, sumY, sqY, x.Sum, x.SumSquares, x.CrossSum); err != nil {
		return err
	}
	if r.MetricKind == KindRatio {
		return validateRatioCovariate(g)
	}
	return nil
}
