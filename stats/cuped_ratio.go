package stats

import "errors"

// CUPED for a ratio metric R = ΣM/ΣD (average order value: revenue over
// orders) is regression adjustment with the same ratio before the test,
// P = ΣX/ΣXd, as GrowthBook's RegressionAdjustedRatioStatistic does: the
// group's estimate becomes R − θ(P − P̄). Both ratios are linearized by the
// delta method in the four means (M̄, D̄, X̄, X̄d) with their 4×4 per-unit
// covariance Λ, so with the gradients a = ∇R and b = ∇P:
//
//	Var(R − θP) = a'Λa − 2θ·a'Λb + θ²·b'Λb,  θ = Σ a'Λb / Σ b'Λb.
//
// The default pools θ within groups weighted by n_g − 1 and centres on the
// pooled P̄ = ΣX/ΣXd, as cupedFit does for means. Under RelativeDelta the
// fit is GrowthBook's compute_theta_regression_adjusted_ratio (per-unit
// covariances summed over the groups unweighted, P not centred, the lift
// over the control's unadjusted ratio), so its published case reproduces.

// ratioMoments are one group's four means and their per-unit covariance.
type ratioMoments struct {
	mean [4]float64    // M̄, D̄, X̄, X̄d
	cov  [4][4]float64 // Λ, with n − 1 in the denominator
}

// ratioMomentsOf reads the moments from a group's sums (M capped when
// winsorized); ok is false when a denominator mean is 0, where neither
// ratio can be linearized.
func ratioMomentsOf(g GroupStats) (ratioMoments, bool) {
	n := float64(g.N)
	x := g.Covariate
	sumM, sqM, crossMD := g.Sum, g.SumSquares, g.CrossSum
	if c := g.Winsorized; c != nil {
		sumM, sqM, crossMD = c.Sum, c.SumSquares, c.CrossSum
	}
	sums := [4]float64{sumM, g.DenominatorSum, x.Sum, x.DenominatorSum}
	// products[i][j] = Σ v_i·v_j in the order M, D, X, Xd.
	products := [4][4]float64{
		{sqM, crossMD, x.CrossSum, x.NumeratorPreDenominatorCrossSum},
		{crossMD, g.DenominatorSumSquares, x.DenominatorPreNumeratorCrossSum, x.DenominatorCrossSum},
		{x.CrossSum, x.DenominatorPreNumeratorCrossSum, x.SumSquares, x.PreCrossSum},
		{x.NumeratorPreDenominatorCrossSum, x.DenominatorCrossSum, x.PreCrossSum, x.DenominatorSumSquares},
	}
	var m ratioMoments
	for i := range sums {
		m.mean[i] = sums[i] / n
	}
	for i := range sums {
		for j := range sums {
			m.cov[i][j] = (products[i][j] - sums[i]*sums[j]/n) / (n - 1)
		}
	}
	return m, m.mean[1] != 0 && m.mean[3] != 0
}

// gradients are ∇R and ∇P in (M̄, D̄, X̄, X̄d).
func (m ratioMoments) gradients() (a, b [4]float64) {
	a = [4]float64{1 / m.mean[1], -m.mean[0] / (m.mean[1] * m.mean[1]), 0, 0}
	b = [4]float64{0, 0, 1 / m.mean[3], -m.mean[2] / (m.mean[3] * m.mean[3])}
	return a, b
}

// quad is u'Λv.
func (m ratioMoments) quad(u, v [4]float64) float64 {
	var s float64
	for i := range u {
		for j := range v {
			s += u[i] * m.cov[i][j] * v[j]
		}
	}
	return s
}

// cupedFitRatio fits θ for ratio metrics: within groups weighted by n − 1
// and centred (joint false), or GrowthBook's unweighted sum, not centred.
// A group whose denominators are all 0 before the test leaves P undefined:
// then nothing is adjusted (θ = 0), as GrowthBook falls back.
func cupedFitRatio(groups []GroupStats, joint bool) cupedAdjustment {
	var cov, varP, sumX, sumXd float64
	for _, g := range groups {
		if g.N < 2 || g.DenominatorSum == 0 {
			continue
		}
		m, ok := ratioMomentsOf(g)
		if !ok {
			return cupedAdjustment{keepBase: joint, ratio: true}
		}
		a, b := m.gradients()
		w := 1.0
		if !joint {
			w = float64(g.N) - 1
		}
		cov += w * m.quad(a, b)
		varP += w * m.quad(b, b)
		sumX += g.Covariate.Sum
		sumXd += g.Covariate.DenominatorSum
	}
	if varP <= 0 || sumXd == 0 {
		return cupedAdjustment{keepBase: joint, ratio: true}
	}
	fit := cupedAdjustment{theta: cov / varP, keepBase: joint, ratio: true}
	if !joint {
		fit.xbar = sumX / sumXd
	}
	return fit
}

// applyRatio replaces the group's ratio by R − θ(P − P̄) and its per-unit
// variance by Var(R − θP). Under RelativeDelta it keeps what the lift's
// variance needs of the unadjusted control ratio (base): its own variance
// and its covariance with the adjusted estimate.
func (c cupedAdjustment) applyRatio(s summary, g GroupStats) summary {
	if c.theta == 0 {
		return s
	}
	m, ok := ratioMomentsOf(g)
	if !ok {
		return s
	}
	a, b := m.gradients()
	varR, covRP, varP := m.quad(a, a), m.quad(a, b), m.quad(b, b)
	s.mean -= c.theta * (m.mean[2]/m.mean[3] - c.xbar)
	v := varR - 2*c.theta*covRP + c.theta*c.theta*varP
	if v <= 1e-10*varR {
		v = 0
	}
	s.variance = v
	if c.keepBase {
		s.ratioBase = &ratioBase{variance: varR, cov: varR - c.theta*covRP}
	} else {
		s.base = s.mean
	}
	return s
}

// ratioBase is what the delta method needs of a control whose lift divides
// by its unadjusted ratio B while its estimate A = R − θP is adjusted: the
// per-unit Var B and Cov(A, B).
type ratioBase struct {
	variance, cov float64
}

// relativeVariance is the delta-method variance of (T − A)/B when the
// control carries a ratioBase (GrowthBook's
// frequentist_variance_relative_cuped_ratio): with g = T − A,
// Var T/(n_T B²) + (Var A/B² + 2g·Cov(A,B)/B³ + g²·Var B/B⁴)/n_A.
func relativeVariance(ctl, trt summary) float64 {
	b, g := ctl.base, trt.mean-ctl.mean
	rb := ctl.ratioBase
	vA := ctl.variance/(b*b) + 2*g*rb.cov/(b*b*b) + g*g*rb.variance/(b*b*b*b)
	return trt.variance/(trt.n*b*b) + vA/ctl.n
}

// validateRatioCovariate checks the ratio covariate's sums like the
// metric's own: moments of X and Xd, and every covariance within the
// bounds the variances allow.
func validateRatioCovariate(g GroupStats) error {
	x := g.Covariate
	for _, v := range []float64{x.DenominatorSum, x.DenominatorSumSquares, x.DenominatorCrossSum, x.PreCrossSum,
		x.NumeratorPreDenominatorCrossSum, x.DenominatorPreNumeratorCrossSum} {
		if !finite(v) {
			return errors.New("covariate sums contain a value that is not a finite number")
		}
	}
	if x.DenominatorSum < 0 {
		return errors.New("covariate.denominator_sum is negative")
	}
	n := float64(g.N)
	if err := checkMoments("covariate.denominator_sum", "covariate.denominator_sum_squares", n, x.DenominatorSum, x.DenominatorSumSquares); err != nil {
		return err
	}
	sumM, sqM := analysedY(g)
	pairs := []struct {
		name              string
		s1, q1, s2, q2, c float64
	}{
		{"covariate.denominator_cross_sum", g.DenominatorSum, g.DenominatorSumSquares, x.DenominatorSum, x.DenominatorSumSquares, x.DenominatorCrossSum},
		{"covariate.pre_cross_sum", x.Sum, x.SumSquares, x.DenominatorSum, x.DenominatorSumSquares, x.PreCrossSum},
		{"covariate.numerator_pre_denominator_cross_sum", sumM, sqM, x.DenominatorSum, x.DenominatorSumSquares, x.NumeratorPreDenominatorCrossSum},
		{"covariate.denominator_pre_numerator_cross_sum", g.DenominatorSum, g.DenominatorSumSquares, x.Sum, x.SumSquares, x.DenominatorPreNumeratorCrossSum},
	}
	for _, p := range pairs {
		if err := checkCovariance(p.name, n, p.s1, p.q1, p.s2, p.q2, p.c); err != nil {
			return err
		}
	}
	return nil
}
