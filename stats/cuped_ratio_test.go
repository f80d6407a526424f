package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ratioUnits are per-unit values of a ratio metric and its pre-exposure
// ratio: M, D (revenue and orders in the test) and X, Xd (before it).
type ratioUnits struct{ m, d, x, xd []float64 }

// drawRatioUnits draws n units whose pre-exposure orders and revenue
// predict the test's with strength rho (0: independent).
func drawRatioUnits(r *rand.Rand, n int, rho, lift float64) ratioUnits {
	var u ratioUnits
	for range n {
		xd := float64(r.IntN(3))
		d := math.Max(0, math.Round(rho*xd+(1-rho)*float64(r.IntN(3))))
		aov := 50 * math.Exp(0.5*r.NormFloat64())
		preAOV := 50 * math.Exp(0.5*r.NormFloat64())
		x := xd * preAOV
		m := d * (1 + lift) * (rho*preAOV + (1-rho)*aov)
		u.m, u.d, u.x, u.xd = append(u.m, m), append(u.d, d), append(u.x, x), append(u.xd, xd)
	}
	return u
}

func sumProducts(a, b []float64) (s float64) {
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func sumOf(a []float64) (s float64) {
	for _, v := range a {
		s += v
	}
	return s
}

// stats are the sufficient statistics the warehouse would send.
func (u ratioUnits) stats() GroupStats {
	return GroupStats{N: int64(len(u.m)), Sum: sumOf(u.m), SumSquares: sumProducts(u.m, u.m),
		DenominatorSum: sumOf(u.d), DenominatorSumSquares: sumProducts(u.d, u.d), CrossSum: sumProducts(u.m, u.d),
		Covariate: &CovariateSums{Sum: sumOf(u.x), SumSquares: sumProducts(u.x, u.x), CrossSum: sumProducts(u.m, u.x),
			DenominatorSum: sumOf(u.xd), DenominatorSumSquares: sumProducts(u.xd, u.xd),
			DenominatorCrossSum: sumProducts(u.d, u.xd), PreCrossSum: sumProducts(u.x, u.xd),
			NumeratorPreDenominatorCrossSum: sumProducts(u.m, u.xd), DenominatorPreNumeratorCrossSum: sumProducts(u.d, u.x)}}
}

// linearized are the units' influence values of R = ΣM/ΣD and P = ΣX/ΣXd:
// u = (m − R·d)/d̄ and v = (x − P·xd)/x̄d, computed from the raw arrays.
func (u ratioUnits) linearized() (R, P float64, lu, lv []float64) {
	n := float64(len(u.m))
	R, P = sumOf(u.m)/sumOf(u.d), sumOf(u.x)/sumOf(u.xd)
	dbar, xdbar := sumOf(u.d)/n, sumOf(u.xd)/n
	for i := range u.m {
		lu = append(lu, (u.m[i]-R*u.d[i])/dbar)
		lv = append(lv, (u.x[i]-P*u.xd[i])/xdbar)
	}
	return R, P, lu, lv
}

func covOf(a, b []float64) float64 {
	n := float64(len(a))
	return (sumProducts(a, b) - sumOf(a)*sumOf(b)/n) / (n - 1)
}

// TestCUPEDRatio checks the sums-only ratio CUPED against the same
// adjustment done on the raw units: θ the within-group regression of the
// linearized R on the linearized P, each group's mean R − θ(P − P̄) and its
// per-unit variance Var(u − θv); and that the adjustment narrows the
// interval exactly when the pre-exposure ratio predicts.
func TestCUPEDRatio(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		rho      float64
		narrower bool
	}{
		{"predictive history", 0.8, true},
		{"unrelated history", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(7, uint64(tc.rho*10)))
			units := []ratioUnits{drawRatioUnits(r, 3000, tc.rho, 0), drawRatioUnits(r, 2500, tc.rho, 0.05)}
			req := AnalysisRequest{MetricKind: KindRatio, Options: Options{CUPED: true}}
			for _, u := range units {
				req.Groups = append(req.Groups, u.stats())
			}
			a := mustAnalyze(t, req)
			var cov, vv, sx, sxd float64
			for _, u := range units {
				_, _, lu, lv := u.linearized()
				w := float64(len(lu) - 1)
				cov += w * covOf(lu, lv)
				vv += w * covOf(lv, lv)
				sx += sumOf(u.x)
				sxd += sumOf(u.xd)
			}
			theta := cov / vv
			if math.Abs(*a.CUPEDTheta-theta) > 1e-9*math.Max(1, math.Abs(theta)) {
				t.Fatalf("theta %v, from the units %v", *a.CUPEDTheta, theta)
			}
			for i, u := range units {
				R, P, lu, lv := u.linearized()
				adj := make([]float64, len(lu))
				for k := range lu {
					adj[k] = lu[k] - theta*lv[k]
				}
				wantMean, wantVar := R-theta*(P-sx/sxd), covOf(adj, adj)
				if g := a.Groups[i]; math.Abs(*g.Mean-wantMean) > 1e-9*wantMean || math.Abs(*g.Variance-wantVar) > 1e-7*wantVar {
					t.Errorf("group %d: mean %v variance %v, from the units %v %v", i, *g.Mean, *g.Variance, wantMean, wantVar)
				}
			}
			req.Options.CUPED = false
			for i := range req.Groups {
				req.Groups[i].Covariate = nil
			}
			raw := mustAnalyze(t, req)
			width := func(a Analysis) float64 {
				ci := a.Comparisons[0].Frequentist.DifferenceInterval
				return ci.Upper - ci.Lower
			}
			if narrower := width(a) < 0.8*width(raw); narrower != tc.narrower {
				t.Errorf("CUPED width %v, raw %v: narrower by a fifth = %v, want %v", width(a), width(raw), narrower, tc.narrower)
			}
		})
	}
}

// TestCUPEDRatioFallsBack: a group with no orders before the test leaves
// the pre-exposure ratio undefined, so nothing is adjusted (θ = 0), and
// inconsistent pre-exposure sums are refused.
func TestCUPEDRatioFallsBack(t *testing.T) {
	t.Parallel()
	a, b := gbRatioCUPED()
	noHistory := *b.Covariate
	noHistory.DenominatorSum, noHistory.DenominatorSumSquares, noHistory.DenominatorCrossSum = 0, 0, 0
	noHistory.PreCrossSum, noHistory.NumeratorPreDenominatorCrossSum = 0, 0
	bNo := b
	bNo.Covariate = &noHistory
	got := mustAnalyze(t, AnalysisRequest{MetricKind: KindRatio, Groups: []GroupStats{a, bNo}, Options: Options{CUPED: true}})
	plainA, plainB := a, b
	plainA.Covariate, plainB.Covariate = nil, nil
	plain := mustAnalyze(t, AnalysisRequest{MetricKind: KindRatio, Groups: []GroupStats{plainA, plainB}})
	if *got.CUPEDTheta != 0 || *got.Comparisons[0].Lift != *plain.Comparisons[0].Lift {
		t.Errorf("theta %v lift %v, want 0 and the unadjusted %v", *got.CUPEDTheta, *got.Comparisons[0].Lift, *plain.Comparisons[0].Lift)
	}
	bad := *b.Covariate
	bad.PreCrossSum = 1e6
	bBad := b
	bBad.Covariate = &bad
	if _, err := Analyze(AnalysisRequest{MetricKind: KindRatio, Groups: []GroupStats{a, bBad}, Options: Options{CUPED: true}}); err == nil {
		t.Error("accepted a pre_cross_sum larger than the variances allow")
	}
}

// TestCUPEDRatioAA: ratio CUPED keeps A/A false positives at α in each
// direction (the 99.9 % binomial band of 2.5 %), under both relative
// methods, on units whose pre-exposure ratio predicts the test's.
func TestCUPEDRatioAA(t *testing.T) {
	t.Parallel()
	const runs = 600
	for _, method := range []RelativeMethod{RelativeFieller, RelativeDelta} {
		t.Run(string(method), func(t *testing.T) {
			t.Parallel()
			type verdicts struct{ loss, win bool }
			out, err := parallelRuns(runs, 0, func(run int) (verdicts, error) {
				r := rand.New(rand.NewPCG(21, uint64(run)))
				req := AnalysisRequest{MetricKind: KindRatio, Options: Options{CUPED: true, RelativeMethod: method},
					Groups: []GroupStats{drawRatioUnits(r, 1000, 0.8, 0).stats(), drawRatioUnits(r, 1000, 0.8, 0).stats()}}
				a, err := Analyze(req)
				if err != nil {
					return verdicts{}, err
				}
				c := a.Comparisons[0]
				sig := c.Computable && c.Frequentist.PValue < 0.05
				return verdicts{sig && *c.Lift < 0, sig && *c.Lift > 0}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var losses, wins int
			for _, v := range out {
				if v.loss {
					losses++
				}
				if v.win {
					wins++
				}
			}
			t.Logf("%d losses, %d wins of %d", losses, wins, runs)
			lo, hi := binomialBand(runs, 0.025)
			if losses < lo || losses > hi || wins < lo || wins > hi {
				t.Errorf("%d losses, %d wins of %d A/A tests, want each in [%d, %d]", losses, wins, runs, lo, hi)
			}
		})
	}
}
