package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var approx = cmpopts.EquateApprox(1e-12, 1e-15)

func TestLowerIsBetterFlipsChanceAndRisk(t *testing.T) {
	t.Parallel()
	groups := []GroupStats{{N: 2000, Sum: 800}, {N: 2000, Sum: 740}}
	higher := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups}).Comparisons[0]
	lower := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups, LowerIsBetter: true}).Comparisons[0]
	// For Δ ~ N(μ, σ²): P(Δ<0) = 1 − P(Δ>0) and E[max(Δ,0)] − E[max(−Δ,0)] = μ.
	got := []float64{lower.Bayesian.ProbBeatControl, lower.Bayesian.Risk - higher.Bayesian.Risk}
	want := []float64{1 - higher.Bayesian.ProbBeatControl, *higher.Difference}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if lower.Bayesian.ProbBeatControl < 0.9 {
		t.Errorf("a 3-point drop in bounce rate should very likely beat control, got %v", lower.Bayesian.ProbBeatControl)
	}
	// The frequentist test is two-sided: direction does not change it.
	if diff := cmp.Diff(higher.Frequentist, lower.Frequentist); diff != "" {
		t.Errorf("frequentist part changed (-higher +lower):\n%s", diff)
	}
}

func TestProperPriorShrinksTowardsItsMean(t *testing.T) {
	t.Parallel()
	groups := []GroupStats{{N: 200, Sum: 20}, {N: 200, Sum: 30}}
	flat := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups}).Comparisons[0].Bayesian
	prior := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups,
		Options: Options{Prior: &Prior{Mean: 0, StdDev: 0.1}}}).Comparisons[0].Bayesian
	if !(0 < prior.ExpectedLift && prior.ExpectedLift < flat.ExpectedLift) {
		t.Errorf("expected lift %v should lie between the prior mean 0 and the observed %v", prior.ExpectedLift, flat.ExpectedLift)
	}
	flatWidth := flat.CredibleInterval.Upper - flat.CredibleInterval.Lower
	priorWidth := prior.CredibleInterval.Upper - prior.CredibleInterval.Lower
	if priorWidth >= flatWidth {
		t.Errorf("a proper prior should narrow the interval: %v vs flat %v", priorWidth, flatWidth)
	}
	if prior.ProbBeatControl >= flat.ProbBeatControl {
		t.Errorf("shrinking towards 0 should lower the chance: %v vs flat %v", prior.ProbBeatControl, flat.ProbBeatControl)
	}
}

func TestHolm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    []float64
		want []float64
	}{
		{"one test is unadjusted", []float64{0.03}, []float64{0.03}},
		{"step-down keeps order monotone", []float64{0.01, 0.04, 0.03}, []float64{0.03, 0.06, 0.06}},
		{"capped at 1", []float64{0.6, 0.7}, []float64{1, 1}},
		{"ties", []float64{0.02, 0.02, 0.5}, []float64{0.06, 0.06, 0.5}},
		{"none", nil, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, holm(tt.p), approx); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHolmAcrossVariants(t *testing.T) {
	t.Parallel()
	req := AnalysisRequest{MetricKind: KindProportion, Options: Options{Holm: true}, Groups: []GroupStats{
		{N: 5000, Sum: 500}, {N: 5000, Sum: 560}, {N: 5000, Sum: 505}, {N: 5000, Sum: 610},
	}}
	cs := mustAnalyze(t, req).Comparisons
	var raw, adjusted []float64
	for _, c := range cs {
		raw = append(raw, c.Frequentist.DifferencePValue)
		adjusted = append(adjusted, *c.Frequentist.AdjustedDifferencePValue)
	}
	if diff := cmp.Diff(holm(raw), adjusted); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	plain := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: req.Groups}).Comparisons[0]
	if plain.Frequentist.AdjustedPValue != nil {
		t.Error("adjusted p-values without the holm option")
	}
}

func TestSequentialIntervalAgreesWithPValue(t *testing.T) {
	t.Parallel()
	alpha := 0.05
	for _, e := range []effect{{0.1, 0.01}, {0.3, 0.01}, {-0.25, 0.004}, {0, 1}, {1e-3, 1e-9}} {
		for _, n := range []float64{100, 5000, 1e6} {
			p, ci := sequentialTest(e, n, alpha, 5000)
			excludesZero := ci.Lower > 0 || ci.Upper < 0
			if (p <= alpha) != excludesZero {
				t.Errorf("effect %+v n %v: p %v but interval %+v", e, n, p, ci)
			}
		}
	}
}

func TestSequentialIsWiderThanFixedHorizon(t *testing.T) {
	t.Parallel()
	groups := []GroupStats{{N: 2500, Sum: 250}, {N: 2500, Sum: 290}}
	fixed := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups}).Comparisons[0].Frequentist
	seq := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: groups,
		Options: Options{Sequential: &Sequential{TuningParameter: 5000}}}).Comparisons[0].Frequentist
	if !seq.Sequential || seq.DegreesOfFreedom != nil {
		t.Errorf("sequential result not marked: %+v", seq)
	}
	ratio := (seq.ConfidenceInterval.Upper - seq.ConfidenceInterval.Lower) /
		(fixed.ConfidenceInterval.Upper - fixed.ConfidenceInterval.Lower)
	// At n = tuning the price of looking any time is a modestly wider
	// interval (about 1.55× at α = 0.05), not an unusable one.
	if ratio < 1.2 || ratio > 2 {
		t.Errorf("sequential/fixed width ratio = %v, want within [1.2, 2]", ratio)
	}
	if seq.PValue < fixed.PValue {
		t.Errorf("sequential p %v below fixed-horizon p %v", seq.PValue, fixed.PValue)
	}
}

// TestSequentialSurvivesDailyPeeking simulates A/A tests looked at every
// day and stopped at the first significant result. The Welch test's false
// positive rate grows with every look; the sequential test's stays under α.
func TestSequentialSurvivesDailyPeeking(t *testing.T) {
	t.Parallel()
	const (
		experiments = 400
		days        = 30
		perDay      = 200
		rate        = 0.1
		alpha       = 0.05
	)
	rng := rand.New(rand.NewPCG(7, 11))
	var fixedHits, seqHits int
	for range experiments {
		var a, b GroupStats
		fixedFired, seqFired := false, false
		for range days {
			a.N, b.N = a.N+perDay, b.N+perDay
			a.Sum += float64(binomial(rng, perDay, rate))
			b.Sum += float64(binomial(rng, perDay, rate))
			fixedFired = fixedFired || significant(t, a, b, nil, alpha)
			seqFired = seqFired || significant(t, a, b, &Sequential{TuningParameter: days * perDay * 2}, alpha)
		}
		fixedHits += boolInt(fixedFired)
		seqHits += boolInt(seqFired)
	}
	fixedRate, seqRate := float64(fixedHits)/experiments, float64(seqHits)/experiments
	if seqRate > alpha {
		t.Errorf("sequential false positive rate under daily peeking = %v, want ≤ %v", seqRate, alpha)
	}
	if fixedRate < 2*alpha {
		t.Errorf("fixed-horizon rate under peeking = %v; the simulation should show it inflated", fixedRate)
	}
	t.Logf("false positive rate with %d daily looks: Welch %.3f, sequential %.3f", days, fixedRate, seqRate)
}

func significant(t *testing.T, a, b GroupStats, seq *Sequential, alpha float64) bool {
	c := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Groups: []GroupStats{a, b},
		ConfidenceLevel: 1 - alpha, Options: Options{Sequential: seq}}).Comparisons[0]
	return c.Computable && c.Frequentist.DifferencePValue < alpha
}

func binomial(rng *rand.Rand, n int, p float64) int {
	k := 0
	for range n {
		if rng.Float64() < p {
			k++
		}
	}
	return k
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestWinsorizationUsesCappedSums(t *testing.T) {
	t.Parallel()
	// Ten visitors per group; one whale in the variant.
	control := []float64{0, 0, 20, 0, 35, 0, 0, 25, 0, 30}
	variant := []float64{0, 0, 22, 0, 31, 0, 5000, 24, 0, 0}
	limit, err := WinsorCap(append(append([]float64{}, control...), variant...), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	group := func(v []float64) GroupStats {
		raw, _ := Winsorize(v, nil, math.MaxFloat64) // a cap nothing reaches: raw sums
		capped, _ := Winsorize(v, nil, limit)
		return GroupStats{N: int64(len(v)), Sum: raw.Sum, SumSquares: raw.SumSquares, Winsorized: &capped}
	}
	req := AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{group(control), group(variant)},
		Options: Options{Winsorization: &Winsorization{Percentile: 0.9, Cap: limit}}}
	a := mustAnalyze(t, req)
	c := a.Comparisons[0]
	// Type-7 quantile of the 20 pooled values: 31 + 0.1·(35 − 31).
	if diff := cmp.Diff(31.4, limit, approx); diff != "" {
		t.Errorf("cap mismatch (-want +got):\n%s", diff)
	}
	wantMeans := []float64{(20 + limit + 25 + 30) / 10, (22 + 31 + limit + 24) / 10}
	if diff := cmp.Diff(wantMeans, []float64{*a.Groups[0].Mean, *a.Groups[1].Mean}, approx); diff != "" {
		t.Errorf("capped means mismatch (-want +got):\n%s", diff)
	}
	// Uncapped, the whale makes the variant a 46× "winner"; capped, the
	// difference is modest.
	if *c.Lift > 1 {
		t.Errorf("capped lift = %v, want the whale's effect gone", *c.Lift)
	}
}

func TestWinsorHelpersRejectBadInput(t *testing.T) {
	t.Parallel()
	if _, err := WinsorCap(nil, 0.9); err == nil {
		t.Error("WinsorCap of no values: no error")
	}
	if _, err := WinsorCap([]float64{1, 2}, 1); err == nil {
		t.Error("WinsorCap at percentile 1: no error")
	}
	if _, err := WinsorCap([]float64{1, math.NaN()}, 0.5); err == nil {
		t.Error("WinsorCap with NaN: no error")
	}
	if _, err := Winsorize([]float64{1, 2}, []float64{1}, 5); err == nil {
		t.Error("Winsorize with mismatched denominators: no error")
	}
}

func TestCheckSRM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		counts  []int64
		weights []float64
		want    SRMStatus
	}{
		{"balanced", []int64{1000, 1030}, []float64{50, 50}, SRMOK},
		{"published mismatch", []int64{1000, 1200}, []float64{50, 50}, SRMMismatch},
		{"unequal split honoured", []int64{7000, 3000}, []float64{70, 30}, SRMOK},
		{"three groups", []int64{3300, 3350, 3000}, []float64{1, 1, 1}, SRMMismatch},
		{"seven visitors", []int64{7, 100}, []float64{50, 50}, SRMInsufficientData},
		{"eight visitors is enough", []int64{8, 8}, []float64{50, 50}, SRMOK},
		{"a 0% group takes no part", []int64{500, 520, 0}, []float64{50, 50, 0}, SRMOK},
		{"a 0% group takes no part in a mismatch", []int64{1000, 1200, 0}, []float64{50, 50, 0}, SRMMismatch},
		{"visitors in a 0% group", []int64{500, 520, 3}, []float64{50, 50, 0}, SRMMismatch},
		{"one group left", []int64{500, 0}, []float64{100, 0}, SRMInsufficientData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := CheckSRM(tt.counts, tt.weights)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want {
				t.Errorf("status = %q, want %q", got.Status, tt.want)
			}
			if (got.PValue == nil) != (tt.want == SRMInsufficientData) {
				t.Errorf("p-value present = %v for status %q", got.PValue != nil, got.Status)
			}
		})
	}
	for _, bad := range []struct {
		counts  []int64
		weights []float64
	}{{[]int64{10}, []float64{1}}, {[]int64{10, 10}, []float64{1}}, {[]int64{-1, 10}, []float64{1, 1}}, {[]int64{10, 10}, []float64{1, math.Inf(1)}}, {[]int64{10, 10}, []float64{1, -1}}} {
		if _, err := CheckSRM(bad.counts, bad.weights); err == nil {
			t.Errorf("CheckSRM(%v, %v): no error", bad.counts, bad.weights)
		}
	}
}

func TestParseRequest(t *testing.T) {
	t.Parallel()
	got, err := ParseRequest([]byte(`{"metric_kind":"mean","groups":[{"n":10,"sum":5,"sum_squares":3}],
		"options":{"sequential":{},"holm":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{{N: 10, Sum: 5, SumSquares: 3}},
		Options: Options{Sequential: &Sequential{}, Holm: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		`{"metric_kind":"mean","groups":[{"n":10,"sum_square":3}]}`,
		`{"metric_kind":"mean"} {}`,
		`{"metric_kind":"mean","groups":[{"n":1.5}]}`,
		`[]`,
		``,
	} {
		if _, err := ParseRequest([]byte(bad)); err == nil {
			t.Errorf("ParseRequest(%s): no error", bad)
		}
	}
}
