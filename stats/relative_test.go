package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestRelativeIsSymmetricUnderSwap: calling either group the control gives
// the same p-value, and the lift interval maps to its reciprocal, so an A/A
// test is as likely to "lose" as to "win".
func TestRelativeIsSymmetricUnderSwap(t *testing.T) {
	t.Parallel()
	pairs := [][2]GroupStats{
		{{N: 20000, Sum: 600}, {N: 20000, Sum: 660}},
		{{N: 3407, Sum: 1396.87, SumSquares: 52377.9767}, {N: 3461, Sum: 2422.7, SumSquares: 134698.29}},
		{{N: 500, Sum: 40}, {N: 450, Sum: 21}},
	}
	for _, seq := range []*Sequential{nil, {TuningParameter: 5000}} {
		for _, pair := range pairs {
			kind := KindProportion
			if pair[0].SumSquares != 0 {
				kind = KindMean
			}
			opts := Options{Sequential: seq}
			ab := mustAnalyze(t, AnalysisRequest{MetricKind: kind, Groups: pair[:], Options: opts}).Comparisons[0]
			ba := mustAnalyze(t, AnalysisRequest{MetricKind: kind, Groups: []GroupStats{pair[1], pair[0]}, Options: opts}).Comparisons[0]
			fa, fb := ab.Frequentist, ba.Frequentist
			// The ratio interval [l, u] of B/A is [1/u, 1/l] for A/B.
			swapped := Interval{1/(1+fb.ConfidenceInterval.Upper) - 1, 1/(1+fb.ConfidenceInterval.Lower) - 1}
			got := []float64{fb.PValue, fb.DifferencePValue, swapped.Lower, swapped.Upper, 1 - ba.Bayesian.ProbBeatControl}
			want := []float64{fa.PValue, fa.PValue, fa.ConfidenceInterval.Lower, fa.ConfidenceInterval.Upper, ab.Bayesian.ProbBeatControl}
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-12)); diff != "" {
				t.Errorf("%s %+v sequential %v: swapped mismatch (-ab +ba):\n%s", kind, pair, seq != nil, diff)
			}
		}
	}
}

// TestRelativeIntervalAgreesWithPValue: the Fieller interval excludes 0
// exactly when the difference test rejects, fixed-horizon or sequential.
func TestRelativeIntervalAgreesWithPValue(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 500 {
		n := int64(50 + rng.IntN(5000))
		pa := 0.02 + 0.3*rng.Float64()
		pb := pa * (0.7 + 0.6*rng.Float64())
		groups := []GroupStats{{N: n, Sum: math.Round(pa * float64(n))}, {N: n + 7, Sum: math.Round(pb * float64(n+7))}}
		opts := Options{}
		if i%2 == 1 {
			opts.Sequential = &Sequential{TuningParameter: 2000}
		}
		c := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups, Options: opts}).Comparisons[0]
		if !c.Computable {
			continue
		}
		f := c.Frequentist
		excludes := f.ConfidenceInterval.Lower > 0 || f.ConfidenceInterval.Upper < 0
		diffExcludes := f.DifferenceInterval.Lower > 0 || f.DifferenceInterval.Upper < 0
		if (f.PValue < 0.05) != excludes || excludes != diffExcludes || f.PValue != f.DifferencePValue {
			t.Errorf("%+v: p %v, lift interval %+v, difference interval %+v", groups, f.PValue, f.ConfidenceInterval, f.DifferenceInterval)
		}
		if !(f.ConfidenceInterval.Lower <= *c.Lift && *c.Lift <= f.ConfidenceInterval.Upper) {
			t.Errorf("%+v: lift %v outside its interval %+v", groups, *c.Lift, f.ConfidenceInterval)
		}
	}
}

// TestDefaultKeepsPublishedDifference: DESIGN §8 case 1's absolute figures
// do not depend on the relative method, and by default the relative
// p-value is the absolute one.
func TestDefaultKeepsPublishedDifference(t *testing.T) {
	t.Parallel()
	c := mustAnalyze(t, AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{
		{N: 3407, Sum: 1396.87, SumSquares: 52377.9767},
		{N: 3461, Sum: 2422.7, SumSquares: 134698.29},
	}}).Comparisons[0]
	f := c.Frequentist
	got := []float64{*c.Lift, *c.Difference, f.DifferencePValue, f.PValue, f.DifferenceInterval.Lower, f.DifferenceInterval.Upper}
	want := []float64{0.70732, 0.29, 0.02016, 0.02016, 0.04538, 0.53462}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 5e-6)); diff != "" {
		t.Errorf("mismatch (-published +got):\n%s", diff)
	}
	// Rejected at 5 %, so the lift interval excludes 0 (the delta method's
	// [−0.03526, 1.44989] did not: the two p-values disagreed).
	if f.ConfidenceInterval.Lower <= 0 {
		t.Errorf("lift interval %+v includes 0 though p = %v", f.ConfidenceInterval, f.PValue)
	}
}

// TestAverageOrderValueWithoutOrdersIsRefused: average order value of a
// group with no orders is 0/0, undefined whatever the method, so the
// comparison is refused with a reason naming the group, not compared.
func TestAverageOrderValueWithoutOrdersIsRefused(t *testing.T) {
	t.Parallel()
	groups := []GroupStats{
		{N: 1000, Sum: 350, SumSquares: 17500, DenominatorSum: 7, DenominatorSumSquares: 7, CrossSum: 350},
		{N: 1000},
	}
	for _, method := range []RelativeMethod{RelativeFieller, RelativeDelta} {
		a := mustAnalyze(t, AnalysisRequest{MetricKind: KindRatio, Groups: groups, Options: Options{RelativeMethod: method}})
		checkAnalysis(t, a)
		c := a.Comparisons[0]
		if c.Computable || c.Reason != ReasonZeroDenominator || !strings.Contains(c.Message, "variant (test group 1)") {
			t.Errorf("%s: %v", method, c)
		}
	}
}

func TestOneGroupWithoutSpreadIsCompared(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		kind   MetricKind
		groups []GroupStats
	}{
		{"variant with 0 orders against 7", KindProportion, []GroupStats{{N: 1000, Sum: 7}, {N: 1000, Sum: 0}}},
		{"everyone converts in the variant", KindProportion, []GroupStats{{N: 200, Sum: 150}, {N: 200, Sum: 200}}},
		{"variant values all alike", KindMean, []GroupStats{{N: 10, Sum: 30, SumSquares: 100}, {N: 12, Sum: 36, SumSquares: 108}}},
		// Revenue per visitor: seven orders of 50 against none at all.
		{"revenue: variant with 0 orders against 7", KindMean, []GroupStats{{N: 1000, Sum: 350, SumSquares: 17500}, {N: 1000}}},
		{"control values all alike", KindMean, []GroupStats{{N: 10, Sum: 30, SumSquares: 90}, {N: 12, Sum: 36, SumSquares: 120}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := mustAnalyze(t, AnalysisRequest{MetricKind: tt.kind, Groups: tt.groups})
			c := a.Comparisons[0]
			if !c.Computable {
				t.Fatalf("not compared: %v", c)
			}
			checkAnalysis(t, a)
			f := c.Frequentist
			if f.DifferenceInterval.Upper-f.DifferenceInterval.Lower <= 0 || f.PValue <= 0 {
				t.Errorf("fake certainty: %+v", f)
			}
			// Nor a lift known to the point: 300 visitors without an order
			// do not prove the variant's revenue is exactly 0 (stats audit S2).
			if ci, cr := f.ConfidenceInterval, c.Bayesian.CredibleInterval; !(ci.Upper > ci.Lower) || !(cr.Upper > cr.Lower) {
				t.Errorf("lift intervals %+v and %+v: fake certainty", ci, cr)
			}
			legacy := mustAnalyze(t, AnalysisRequest{MetricKind: tt.kind, Groups: tt.groups,
				Options: Options{RelativeMethod: RelativeDelta}}).Comparisons[0]
			if tt.groups[1].Sum == 0 && legacy.Reason != ReasonZeroVariance {
				t.Errorf("the delta method should still refuse: %v", legacy)
			}
		})
	}
	// 0 of 1000 against 7 of 1000: Welch with the variant's variance that of
	// 1/1002 (Agresti–Caffo), not 0. Hand-computed: vA = 0.007·0.993/1000,
	// vB = (1/1002)(1001/1002)/1000.
	c := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: tests[0].groups}).Comparisons[0]
	vA, vB := 0.007*0.993/1000, (1.0/1002)*(1001.0/1002)/1000
	df := welchDFOf(vA, vB, 1000, 1000)
	p, _ := tTest(effect{-0.007, vA + vB}, df, 0.95)
	if diff := cmp.Diff([]float64{p, -1}, []float64{c.Frequentist.PValue, *c.Lift}, approx); diff != "" {
		t.Errorf("mismatch (-hand +got):\n%s", diff)
	}
	if p > 0.02 || p < 0.005 {
		t.Errorf("p = %v: 7 vs 0 in 1000 should be significant but not certain", p)
	}
	if ci := c.Frequentist.ConfidenceInterval; ci.Lower != -1 || !(ci.Upper > -1 && ci.Upper < 0) {
		t.Errorf("lift interval %+v, want [−1, u < 0]: a rate cannot fall below 0", ci)
	}
}

// TestNonNegativeLiftStaysAboveMinusOne: revenue cannot fall below 0, so
// neither can its lift below −100 %; one $1,000,000 order made Fieller's
// interval reach −137,803 % (stats audit S3). Profit, which can be
// negative, keeps the unclamped interval.
func TestNonNegativeLiftStaysAboveMinusOne(t *testing.T) {
	t.Parallel()
	whale := []GroupStats{{N: 300, Sum: 750, SumSquares: 37500}, {N: 300, Sum: 1000750, SumSquares: 1000000037500}}
	for _, nonNegative := range []bool{true, false} {
		c := mustAnalyze(t, AnalysisRequest{MetricKind: KindMean, NonNegative: nonNegative, Groups: whale}).Comparisons[0]
		ci, cr := c.Frequentist.ConfidenceInterval, c.Bayesian.CredibleInterval
		if clamped := ci.Lower == -1 && cr.Lower == -1; clamped != nonNegative || !(ci.Upper > 0) {
			t.Errorf("non_negative %v: intervals %+v, %+v; want the lower ends at −1 exactly when non-negative", nonNegative, ci, cr)
		}
		if c.Frequentist.PValue < 0.2 {
			t.Errorf("p = %v: one order should not decide", c.Frequentist.PValue)
		}
	}
}

func TestDegenerateComparisonsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		groups []GroupStats
		want   Reason
	}{
		{"both all converted", []GroupStats{{N: 20, Sum: 20}, {N: 30, Sum: 30}}, ReasonZeroVariance},
		{"both at zero", []GroupStats{{N: 20}, {N: 30}}, ReasonControlMeanZero},
		{"control with 2 in 1000", []GroupStats{{N: 1000, Sum: 2}, {N: 1000, Sum: 9}}, ReasonControlMeanUncertain},
		{"empty variant", []GroupStats{{N: 1000, Sum: 20}, {N: 0}}, ReasonEmptyGroup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: tt.groups})
			checkAnalysis(t, a)
			if c := a.Comparisons[0]; c.Reason != tt.want || c.Message == "" {
				t.Errorf("got %v, want %s", c, tt.want)
			}
		})
	}
}

func TestRelativeRisk(t *testing.T) {
	t.Parallel()
	c := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion,
		Groups: []GroupStats{{N: 1000, Sum: 100}, {N: 1000, Sum: 120}}}).Comparisons[0]
	// Katz: se² = 1/120 − 1/1000 + 1/100 − 1/1000, at the test's critical value.
	crit := studentsT(*c.Frequentist.DegreesOfFreedom).Quantile(0.975)
	se := math.Sqrt(1.0/120 - 1.0/1000 + 1.0/100 - 1.0/1000)
	want := &RelativeRisk{Ratio: 1.2, ConfidenceInterval: Interval{1.2 * math.Exp(-crit*se), 1.2 * math.Exp(crit*se)}}
	if diff := cmp.Diff(want, c.RelativeRisk, approx); diff != "" {
		t.Errorf("mismatch (-hand +got):\n%s", diff)
	}
	zc := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion,
		Groups: []GroupStats{{N: 1000, Sum: 7}, {N: 1000}}}).Comparisons[0]
	zero := zc.RelativeRisk
	crit = studentsT(*zc.Frequentist.DegreesOfFreedom).Quantile(0.975)
	// Haldane-corrected Katz: ln(0.5/7.5) + crit·√(1/0.5 − 1/1001 + 1/7.5 − 1/1001).
	upper := math.Exp(math.Log(0.5/7.5) + crit*math.Sqrt(2+1/7.5-2.0/1001))
	if diff := cmp.Diff(&RelativeRisk{ConfidenceInterval: Interval{0, upper}}, zero, cmpopts.EquateApprox(1e-6, 0)); diff != "" {
		t.Errorf("0 vs 7 of 1000 (-hand +got):\n%s", diff)
	}
	mean := mustAnalyze(t, AnalysisRequest{MetricKind: KindMean,
		Groups: []GroupStats{{N: 10, Sum: 30, SumSquares: 100}, {N: 10, Sum: 32, SumSquares: 110}}}).Comparisons[0]
	if mean.RelativeRisk != nil {
		t.Errorf("a mean metric has no relative risk: %+v", mean.RelativeRisk)
	}
}

// whaleGroups are 20,000 visitors a group, 3 % of them buying lognormal
// orders (σ = 1, mean ≈ 50), and one $1,000,000 order in the control;
// capped carries the sums winsorized at the 99th percentile of converters.
func whaleGroups(t *testing.T) (groups []GroupStats, capped Winsorization) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	values := make([][]float64, 2)
	var converters []float64
	for g := range values {
		values[g] = make([]float64, 20000)
		for i := range values[g] {
			if rng.Float64() < 0.03 {
				values[g][i] = math.Exp(math.Log(50) - 0.5 + rng.NormFloat64())
				converters = append(converters, values[g][i])
			}
		}
	}
	values[0][0] = 1e6
	converters = append(converters, 1e6)
	limit, err := ConverterCap(converters, DefaultWinsorPercentile)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		g := GroupStats{N: int64(len(v))}
		for _, y := range v {
			g.Sum += y
			g.SumSquares += y * y
		}
		c, err := Winsorize(v, nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		g.Winsorized = &c
		groups = append(groups, g)
	}
	return groups, Winsorization{Percentile: DefaultWinsorPercentile, Cap: limit}
}

// TestOneWhaleDoesNotDecide: one $1,000,000 order made the delta method
// certain (p ≈ 1e-116: the lift ≈ −1 with the control's huge variance
// scaled away). Unwinsorized, the Fieller method sees that the control mean
// is then not distinguishable from 0 (the order is half of it) and refuses
// the relative lift; winsorized at the default cap the order is one large
// order among many and the test is not significant.
func TestOneWhaleDoesNotDecide(t *testing.T) {
	t.Parallel()
	groups, w := whaleGroups(t)
	raw := make([]GroupStats, len(groups))
	for i, g := range groups {
		g.Winsorized = nil
		raw[i] = g
	}
	legacy := mustAnalyze(t, AnalysisRequest{MetricKind: KindMean, Groups: raw,
		Options: Options{RelativeMethod: RelativeDelta}}).Comparisons[0]
	if legacy.Frequentist.PValue > 1e-50 {
		t.Fatalf("the delta method was expected to be fooled; p = %v", legacy.Frequentist.PValue)
	}
	plain := mustAnalyze(t, AnalysisRequest{MetricKind: KindMean, Groups: raw}).Comparisons[0]
	capped := mustAnalyze(t, AnalysisRequest{MetricKind: KindMean, Groups: groups,
		Options: Options{Winsorization: &w}}).Comparisons[0]
	if plain.Reason != ReasonControlMeanUncertain {
		t.Errorf("raw: %v, want %s", plain, ReasonControlMeanUncertain)
	}
	if !capped.Computable || capped.Frequentist.PValue < 0.05 {
		t.Errorf("winsorized: one order decides the test: %v", capped)
	}
	if math.Abs(*capped.Lift) > 0.2 {
		t.Errorf("winsorized lift %v: the whale still dominates", *capped.Lift)
	}
}

func TestBenjaminiHochberg(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    []float64
		want []float64
	}{
		// Sorted 0.01, 0.03, 0.04, 0.2 → m·p/rank 0.04, 0.06, 0.0533, 0.2,
		// then the running minimum from the largest down.
		{"step-up", []float64{0.01, 0.04, 0.03, 0.2}, []float64{0.04, 0.16 / 3, 0.16 / 3, 0.2}},
		{"one test is unadjusted", []float64{0.03}, []float64{0.03}},
		{"capped at 1", []float64{0.9, 0.8}, []float64{0.9, 0.9}},
		{"none", nil, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, benjaminiHochberg(tt.p), approx); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	groups := []GroupStats{{N: 5000, Sum: 500}, {N: 5000, Sum: 560}, {N: 5000, Sum: 505}, {N: 5000, Sum: 610}}
	cs := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups,
		Options: Options{Correction: CorrectionBenjaminiHochberg}}).Comparisons
	var raw, adjusted []float64
	for _, c := range cs {
		raw = append(raw, c.Frequentist.PValue)
		adjusted = append(adjusted, *c.Frequentist.AdjustedPValue)
	}
	if diff := cmp.Diff(benjaminiHochberg(raw), adjusted); diff != "" {
		t.Errorf("across variants (-want +got):\n%s", diff)
	}
	_, err := Analyze(AnalysisRequest{MetricKind: KindProportion, Groups: groups,
		Options: Options{Holm: true, Correction: CorrectionBenjaminiHochberg}})
	if err == nil || !strings.Contains(err.Error(), "contradicts") {
		t.Errorf("holm with benjamini_hochberg: err = %v", err)
	}
}

// TestCUPED against values computed by hand from the units
// A: (x, y) = (1, 2), (2, 4), (3, 7) and B: (2, 4), (3, 5), (4, 9).
// Within-group Σ(x−x̄)(y−ȳ) = 5 and Σ(x−x̄)² = 2 in each, so θ = 10/4 = 2.5;
// X̄ = 15/6 = 2.5. Adjusted means: 13/3 − 2.5·(2 − 2.5) = 67/12 and
// 6 − 2.5·(3 − 2.5) = 19/4. Adjusted variances Var Y − 2θ Cov + θ² Var X:
// 19/3 − 12.5 + 6.25 = 1/12 and 7 − 12.5 + 6.25 = 3/4.
func TestCUPED(t *testing.T) {
	t.Parallel()
	groups := []GroupStats{
		{N: 3, Sum: 13, SumSquares: 69, Covariate: &CovariateSums{Sum: 6, SumSquares: 14, CrossSum: 31}},
		{N: 3, Sum: 18, SumSquares: 122, Covariate: &CovariateSums{Sum: 9, SumSquares: 29, CrossSum: 59}},
	}
	a := mustAnalyze(t, AnalysisRequest{MetricKind: KindMean, Groups: groups, Options: Options{CUPED: true}})
	got := []float64{*a.Groups[0].Mean, *a.Groups[0].Variance, *a.Groups[1].Mean, *a.Groups[1].Variance}
	want := []float64{67.0 / 12, 1.0 / 12, 19.0 / 4, 3.0 / 4}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("mismatch (-hand +got):\n%s", diff)
	}
	if d := *a.Comparisons[0].Difference; math.Abs(d-(19.0/4-67.0/12)) > 1e-12 {
		t.Errorf("difference %v, want %v", d, 19.0/4-67.0/12)
	}
	for _, bad := range []AnalysisRequest{
		{MetricKind: KindMean, Groups: []GroupStats{groups[0], {N: 3, Sum: 18, SumSquares: 122}}, Options: Options{CUPED: true}},
		{MetricKind: KindMean, Groups: groups},
		{MetricKind: KindProportion, Groups: []GroupStats{{N: 3, Sum: 1}, {N: 3, Sum: 2}}, Options: Options{CUPED: true}},
		{MetricKind: KindMean, Groups: []GroupStats{groups[0], {N: 3, Sum: 18, SumSquares: 122,
			Covariate: &CovariateSums{Sum: 9, SumSquares: 29, CrossSum: 500}}}, Options: Options{CUPED: true}},
	} {
		if _, err := Analyze(bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}
