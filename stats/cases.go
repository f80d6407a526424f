package stats

import (
	"fmt"
	"math"
	"slices"
)

// ReferenceCase is a test case from the published test suite of another A/B
// statistics library: its inputs, as sufficient statistics, and the values
// its test asserts, each with the precision the test asserts it to. The
// engine must reproduce every value; `lift stats --case NAME` shows it.
type ReferenceCase struct {
	Name string `json:"name"`
	// Source is repository@commit, path and test name.
	Source  string           `json:"source"`
	Request AnalysisRequest  `json:"request"`
	Want    []PublishedValue `json:"want"`
	// Note says how the case maps onto the engine where it is not obvious.
	Note string `json:"note,omitempty"`
}

// PublishedValue is one asserted value. Places is the source test's own
// precision (assertAlmostEqual's places, or the decimals it rounds both
// sides to): agreement means |got − value| < ½·10^−places.
type PublishedValue struct {
	Field  string  `json:"field"`
	Value  float64 `json:"value"`
	Places int     `json:"places"`
}

// CaseCheck is one published value against the engine's.
type CaseCheck struct {
	PublishedValue
	Got   float64 `json:"got"`
	Agree bool    `json:"agree"`
}

// The sources, pinned to the commits read.
const (
	gbCommit       = "growthbook/growthbook@8f1db4456915a8e7b7faf23d5632ca7219d2f469"
	gbFrequentist  = gbCommit + " packages/stats/tests/frequentist/test_tests.py "
	gbBayesian     = gbCommit + " packages/stats/tests/bayesian/test_tests.py "
	gbSharedModels = gbCommit + " packages/stats/tests/test_shared_models.py "
	phFrequentist  = "PostHog/posthog@03f2add8efc9c7f41c8286d695f4b47caac61464 products/experiments/stats/tests/test_frequentist.py "
	phCUPED        = "PostHog/posthog@3c072358ecafeb396ff8bc08bad4901f581bd524 products/experiments/stats/tests/test_cuped.py "
)

// Published method notes.
const (
	noteDelta = "relative lift by the delta method on the ratio of means (relative_method delta), as the source computes it"
	noteRisk  = noteDelta + "; for proportions this is the relative risk pB/pA − 1 with the delta-method interval. The default's relative_risk uses the Katz log interval instead, which is better behaved near 0 and so differs"
	noteCUPED = "CUPED under relative_method delta follows the source's convention: theta from the groups' pooled sums, adjusted means Ȳ − θX̄, lift over the unadjusted control mean"
)

// noteRatioCUPED says how GrowthBook's RegressionAdjustedRatioStatistic maps
// onto a ratio request with a covariate.
const noteRatioCUPED = "CUPED of a ratio metric under relative_method delta, as the source's RegressionAdjustedRatioStatistic: " +
	"m_post/d_post are sum and denominator_sum, m_pre/d_pre the covariate's sum and denominator_sum, each sum of products its cross sum; " +
	"theta by compute_theta_regression_adjusted_ratio, the lift over the control's unadjusted ratio"

// gbRatioCUPED are the two groups of GrowthBook's regression-adjusted ratio
// tests (n = 100 each), copied from the source.
func gbRatioCUPED() (a, b GroupStats) {
	a = GroupStats{N: 100, Sum: 485.112236689623, SumSquares: 2715.484666118136,
		DenominatorSum: 679.9093275844917, DenominatorSumSquares: 4939.424001640236, CrossSum: 3602.146836776702,
		Covariate: &CovariateSums{Sum: 192.59138069991536, SumSquares: 460.076026390857, CrossSum: 1113.6215759318352,
			DenominatorSum: 290.1398399750233, DenominatorSumSquares: 920.9461385038898, DenominatorCrossSum: 2130.9404074446747,
			PreCrossSum: 634.239482353647, NumeratorPreDenominatorCrossSum: 1559.2878434944676,
			DenominatorPreNumeratorCrossSum: 1460.3181079276983}}
	b = GroupStats{N: 100, Sum: 514.7757826608777, SumSquares: 2994.897482705013,
		DenominatorSum: 705.4090874383759, DenominatorSumSquares: 5291.36604146392, CrossSum: 3918.1561431600717,
		Covariate: &CovariateSums{Sum: 206.94157227402536, SumSquares: 514.2903702246757, CrossSum: 1237.0953021125997,
			DenominatorSum: 302.54389139107326, DenominatorSumSquares: 994.4506208125663, DenominatorCrossSum: 2292.081739775257,
			PreCrossSum: 698.4173425817908, NumeratorPreDenominatorCrossSum: 1701.0287270040265,
			DenominatorPreNumeratorCrossSum: 1604.0759503266522}}
	return a, b
}

// meanGroup and the other constructors keep the table short: groups are
// listed control first.
func meanGroup(n int64, sum, sq float64) GroupStats {
	return GroupStats{N: n, Sum: sum, SumSquares: sq}
}

func propGroup(n int64, sum float64) GroupStats { return GroupStats{N: n, Sum: sum} }

func cupedGroup(n int64, sum, sq, xSum, xSq, cross float64) GroupStats {
	return GroupStats{N: n, Sum: sum, SumSquares: sq, Covariate: &CovariateSums{Sum: xSum, SumSquares: xSq, CrossSum: cross}}
}

func delta(kind MetricKind, groups ...GroupStats) AnalysisRequest {
	return AnalysisRequest{MetricKind: kind, Groups: groups, Options: Options{RelativeMethod: RelativeDelta}}
}

func want(places int, kv ...any) []PublishedValue {
	var out []PublishedValue
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, PublishedValue{Field: kv[i].(string), Value: kv[i+1].(float64), Places: places})
	}
	return out
}

// ReferenceCases are GrowthBook's and PostHog's published cases that the
// engine's inputs can express. Inputs and values are copied from the files
// named in Source; none is computed here.
func ReferenceCases() []ReferenceCase {
	gbMeanA, gbMeanB := meanGroup(3407, 1396.87, 52377.9767), meanGroup(3461, 2422.7, 134698.29)
	seqA := meanGroup(3000, 1396.87, 52377.9767)
	gbBayesA, gbBayesB := meanGroup(10, 100, 1002.25), meanGroup(10, 105, 1111.5)
	seqMean := delta(KindMean, seqA, gbMeanB)
	seqMean.Options.Sequential = &Sequential{TuningParameter: 1000}
	seqProp := delta(KindProportion, propGroup(3000, 1396), propGroup(3461, 2422))
	seqProp.Options.Sequential = &Sequential{TuningParameter: DefaultTuningParameter}
	prior := delta(KindMean, gbBayesA, gbBayesB)
	prior.Options.Prior = &Prior{Mean: 0.1, StdDev: math.Sqrt(0.1)}
	phCtl := cupedGroup(2801, 280, 560, 195, 390, -18)
	phTrt1 := cupedGroup(2800, 205, 510, 110, 380, -8)
	phTrt2 := cupedGroup(3500, 420, 840, 280, 560, -25)
	phSmall := cupedGroup(5, 14, 48, 28.5, 520.3, 85.2)
	// GrowthBook's arrays: post METRIC_3 = [2, 1, 5, 3], pre METRIC_1 =
	// [0.3, 0.5, 0.9, 22]: Σ 11, Σ² 39; Σ 23.7, Σ² 485.15; Σpost·pre 71.6.
	gbTheta := cupedGroup(4, 11, 39, 23.7, 485.15, 71.6)
	withCUPED := func(r AnalysisRequest) AnalysisRequest { r.Options.CUPED = true; return r }
	gbSeqCUPED := withCUPED(delta(KindMean, cupedGroup(3000, 1396.87, 52377.9767, 16.87, 527.9767, 1),
		cupedGroup(3461, 2422.7, 134698.29, 22.7, 1348.29, 1)))
	gbSeqCUPED.Options.Sequential = &Sequential{TuningParameter: DefaultTuningParameter}
	raA, raB := gbRatioCUPED()
	raSeq := withCUPED(delta(KindRatio, raA, raB))
	raSeq.Options.Sequential = &Sequential{TuningParameter: DefaultTuningParameter}
	return []ReferenceCase{
		{Name: "growthbook-mean-relative", Source: gbFrequentist + "TestTwoSidedTTest.test_two_sided_ttest", Note: noteDelta,
			Request: delta(KindMean, gbMeanA, gbMeanB),
			Want:    want(5, "lift", 0.70732, "ci.lower", -0.03526, "ci.upper", 1.44989, "p_value", 0.06191)},
		{Name: "growthbook-mean-absolute", Source: gbFrequentist + "TestTwoSidedTTest.test_two_sided_ttest_absolute",
			Note:    "the absolute difference by Welch's t-test: the default method, unchanged",
			Request: AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{gbMeanA, gbMeanB}},
			Want:    want(5, "difference", 0.29, "difference_ci.lower", 0.04538, "difference_ci.upper", 0.53462, "difference_p_value", 0.02016)},
		{Name: "growthbook-proportion-relative", Source: gbFrequentist + "TestTwoSidedTTest.test_two_sided_ttest_binom", Note: noteRisk,
			Request: delta(KindProportion, propGroup(28, 14), propGroup(30, 16)),
			Want:    want(5, "lift", 0.06667, "ci.lower", -0.47767, "ci.upper", 0.61101, "p_value", 0.80707)},
		{Name: "growthbook-sequential-mean", Source: gbFrequentist + "TestSequentialTTest.test_sequential_test_runs", Note: noteDelta,
			Request: seqMean,
			Want:    want(5, "lift", 0.50336, "ci.lower", -0.55844, "ci.upper", 1.56516, "p_value", 1.0)},
		{Name: "growthbook-sequential-proportion", Source: gbFrequentist + "TestSequentialTTest.test_sequential_test_runs_prop",
			Note: noteRisk + "; the source's default tuning parameter is 5000, as ours", Request: seqProp,
			Want: want(5, "lift", 0.50386, "ci.lower", 0.40098, "ci.upper", 0.60675, "p_value", 0.0)},
		{Name: "growthbook-bayesian-proportion", Source: gbBayesian + "TestBinom.test_bayesian_binomial_ab_test", Note: noteRisk,
			Request: delta(KindProportion, propGroup(100, 49), propGroup(100, 51)),
			Want:    want(5, "expected_lift", 0.04082, "credible.lower", -0.24779, "credible.upper", 0.32943, "chance", 0.60918)},
		{Name: "growthbook-bayesian-mean", Source: gbBayesian + "TestNorm.test_bayesian_gaussian_ab_test", Note: noteDelta,
			Request: delta(KindMean, gbBayesA, gbBayesB),
			Want:    want(5, "expected_lift", 0.05, "credible.lower", -0.02, "credible.upper", 0.12, "chance", 0.91923)},
		{Name: "growthbook-bayesian-mean-prior", Source: gbBayesian + "TestNorm.test_bayesian_gaussian_ab_test_informative",
			Note: noteDelta + "; the source's GaussianPrior(mean=0.1, variance=0.1) is our prior {mean 0.1, stddev √0.1}", Request: prior,
			Want: want(5, "expected_lift", 0.05063, "credible.lower", -0.01893, "credible.upper", 0.12019, "chance", 0.92315)},
		{Name: "growthbook-cuped-theta", Source: gbSharedModels + "TestComputeTheta.test_returns_0_no_variance",
			Note:    noteCUPED + "; the two groups are the same arrays, so only theta is asserted",
			Request: withCUPED(delta(KindMean, gbTheta, gbTheta)),
			Want:    want(5, "cuped_theta", 0.01864)},
		{Name: "growthbook-sequential-cuped", Source: gbFrequentist + "TestSequentialTTest.test_sequential_test_runs_ra",
			Note: noteCUPED + ". Only the lift is asserted here: the source's interval (-0.50969, 1.51646) uses gbstats' " +
				"relative CUPED variance (unadjusted treatment mean in the control term), PostHog's form gives (-0.50975, 1.51652)",
			Request: gbSeqCUPED,
			Want:    want(5, "lift", 0.50338, "p_value", 1.0)},
		{Name: "growthbook-ratio-cuped", Source: gbFrequentist + "TestTwoSidedTTest.test_two_sided_ttest_test_runs_ratio_ra",
			Note: noteRatioCUPED, Request: withCUPED(delta(KindRatio, raA, raB)),
			Want: want(5, "lift", -0.0007, "ci.lower", -0.00841, "ci.upper", 0.00700, "p_value", 0.85771)},
		{Name: "growthbook-sequential-ratio-cuped", Source: gbFrequentist + "TestSequentialTTest.test_sequential_test_runs_ratio_ra",
			Note: noteRatioCUPED + "; the source's default tuning parameter is 5000, as ours", Request: raSeq,
			Want: want(5, "lift", -0.0007, "ci.lower", -0.02063, "ci.upper", 0.01923, "p_value", 1.0)},
		{Name: "posthog-mean-relative", Source: phFrequentist + "TestTwoSidedTTest.test_two_sided_ttest_with_sample_mean", Note: noteDelta,
			Request: delta(KindMean, meanGroup(2507, 1196.87, 37377.9767), meanGroup(2461, 1922.7, 94698.29)),
			Want:    want(4, "lift", 0.63646, "ci.lower", -0.0875, "ci.upper", 1.36048, "p_value", 0.08487)},
		{Name: "posthog-proportion-relative", Source: phFrequentist + "TestTwoSidedTTest.test_two_sided_ttest_with_sample_proportion", Note: noteRisk,
			Request: delta(KindProportion, propGroup(1529, 87), propGroup(1471, 62)),
			Want:    want(4, "lift", -0.25925, "ci.lower", -0.49475, "ci.upper", -0.02376, "p_value", 0.030960)},
		{Name: "posthog-ratio-relative", Source: phFrequentist + "TestTwoSidedTTest.test_two_sided_ttest_with_ratio_statistic",
			Note: noteDelta + "; the ratio's variance by the delta method with the numerator/denominator covariance",
			Request: delta(KindRatio,
				GroupStats{N: 1966, Sum: 94605.79858780127, SumSquares: 10463129.505392816, DenominatorSum: 936, DenominatorSumSquares: 936, CrossSum: 94605.79858780127},
				GroupStats{N: 2034, Sum: 99673.9364269569, SumSquares: 11298745.182728939, DenominatorSum: 947, DenominatorSumSquares: 947, CrossSum: 99673.9364269569}),
			Want: want(4, "lift", 0.041333, "ci.lower", 0.01378609, "ci.upper", 0.0689, "p_value", 0.0032826)},
		{Name: "posthog-cuped-theta", Source: phCUPED + "TestCupedReferenceData.test_theta_pooled_identical_groups", Note: noteCUPED,
			Request: withCUPED(delta(KindMean, phSmall, phSmall)),
			Want:    want(7, "cuped_theta", 0.015090122)},
		{Name: "posthog-cuped-mean", Source: phCUPED + "TestCupedReferenceData.test_mean_metric_theta_and_adjusted_stats, test_mean_metric_relative_effect",
			Note: noteCUPED, Request: withCUPED(delta(KindMean, phCtl, phTrt1)),
			Want: slices.Concat(want(7, "cuped_theta", -0.069566052, "group0.mean", 0.104807347, "group1.mean", 0.075947238),
				want(5, "lift", -0.288704169, "ci.lower", -0.486775, "ci.upper", -0.090633))},
		{Name: "posthog-cuped-mean-bayesian", Source: phCUPED + "TestCupedReferenceData.test_mean_metric_relative_effect_bayesian",
			Note: noteCUPED, Request: withCUPED(delta(KindMean, phCtl, phTrt1)),
			Want: slices.Concat(want(4, "expected_lift", -0.288704169), want(5, "credible.lower", -0.486732, "credible.upper", -0.090676))},
		{Name: "posthog-cuped-three-armed-1", Source: phCUPED + "TestCupedReferenceData.test_three_armed_adjusted_stddev (treatment1_with_theta_from_treatment1)",
			Note: noteCUPED + "; theta from control and treatment 1, so the pair is analysed alone", Request: withCUPED(delta(KindMean, phCtl, phTrt1)),
			Want: want(5, "group1.sd", 0.420353709)},
		{Name: "posthog-cuped-three-armed-2", Source: phCUPED + "TestCupedReferenceData.test_three_armed_adjusted_stddev (control_with_theta_from_treatment2, treatment2_with_theta_from_treatment2)",
			Note: noteCUPED + "; theta from control and treatment 2, so the pair is analysed alone", Request: withCUPED(delta(KindMean, phCtl, phTrt2)),
			Want: want(5, "group0.sd", 0.434365539, "group1.sd", 0.473119119)},
	}
}

// FindReferenceCase returns the case called name.
func FindReferenceCase(name string) (ReferenceCase, bool) {
	for _, c := range ReferenceCases() {
		if c.Name == name {
			return c, true
		}
	}
	return ReferenceCase{}, false
}

// Check analyses the case and compares every published value.
func (c ReferenceCase) Check() (Analysis, []CaseCheck, error) {
	a, err := Analyze(c.Request)
	if err != nil {
		return Analysis{}, nil, err
	}
	var out []CaseCheck
	for _, w := range c.Want {
		got, err := a.Value(w.Field)
		if err != nil {
			return a, nil, fmt.Errorf("case %s: %w", c.Name, err)
		}
		tol := 0.5*math.Pow(10, -float64(w.Places)) + 1e-12
		out = append(out, CaseCheck{PublishedValue: w, Got: got, Agree: math.Abs(got-w.Value) < tol})
	}
	return a, out, nil
}

// Value reads one named figure of the first comparison (or a group) of an
// analysis, by the names ReferenceCase uses.
func (a Analysis) Value(field string) (float64, error) {
	switch field {
	case "cuped_theta":
		if a.CUPEDTheta != nil {
			return *a.CUPEDTheta, nil
		}
	case "group0.mean", "group1.mean", "group0.sd", "group1.sd":
		g := a.Groups[int(field[5]-'0')]
		switch {
		case g.Mean == nil:
		case field[7:] == "mean":
			return *g.Mean, nil
		default:
			return math.Sqrt(*g.Variance), nil
		}
	default:
		if c := a.Comparisons[0]; c.Computable {
			return comparisonValue(c, field)
		}
	}
	return 0, fmt.Errorf("%s: not in the analysis", field)
}

func comparisonValue(c Comparison, field string) (float64, error) {
	f, b := c.Frequentist, c.Bayesian
	v, ok := map[string]float64{
		"lift": *c.Lift, "difference": *c.Difference,
		"p_value": f.PValue, "ci.lower": f.ConfidenceInterval.Lower, "ci.upper": f.ConfidenceInterval.Upper,
		"difference_p_value":  f.DifferencePValue,
		"difference_ci.lower": f.DifferenceInterval.Lower, "difference_ci.upper": f.DifferenceInterval.Upper,
		"expected_lift": b.ExpectedLift, "chance": b.ProbBeatControl,
		"credible.lower": b.CredibleInterval.Lower, "credible.upper": b.CredibleInterval.Upper,
	}[field]
	if !ok {
		return 0, fmt.Errorf("%s: no such field", field)
	}
	return v, nil
}
