package stats

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func mustAnalyze(t *testing.T, req AnalysisRequest) Analysis {
	t.Helper()
	a, err := Analyze(req)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return a
}

func TestAnalyzeNotComputable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		kind   MetricKind
		groups []GroupStats
		want   Reason
		// message must name the group at fault.
		message string
	}{
		{"empty control", KindProportion, []GroupStats{{N: 0}, {N: 10, Sum: 3}}, ReasonEmptyGroup, "control (test group 0)"},
		{"empty variant", KindMean, []GroupStats{{N: 10, Sum: 30, SumSquares: 100}, {N: 0}}, ReasonEmptyGroup, "variant (test group 1)"},
		{"one unit", KindMean, []GroupStats{{N: 1, Sum: 5, SumSquares: 25}, {N: 10, Sum: 30, SumSquares: 100}}, ReasonTooFewUnits, "single unit"},
		{"one unit proportion", KindProportion, []GroupStats{{N: 10, Sum: 3}, {N: 1, Sum: 1}}, ReasonTooFewUnits, "variant"},
		{"no conversions in control", KindProportion, []GroupStats{{N: 50, Sum: 0}, {N: 50, Sum: 5}}, ReasonControlMeanZero, "control mean is 0"},
		{"nothing anywhere", KindProportion, []GroupStats{{N: 50}, {N: 50}}, ReasonControlMeanZero, "control mean is 0"},
		{"everyone converts", KindProportion, []GroupStats{{N: 20, Sum: 20}, {N: 30, Sum: 30}}, ReasonZeroVariance, "zero variance"},
		{"identical values", KindMean, []GroupStats{{N: 3, Sum: 0.3, SumSquares: 0.03}, {N: 4, Sum: 0.4, SumSquares: 0.04}}, ReasonZeroVariance, "zero variance"},
		// A variant at zero against a control with conversions is compared
		// now (TestOneGroupWithoutSpreadIsCompared); only the delta method
		// refuses it.
		{"negative control mean", KindMean, []GroupStats{{N: 4, Sum: -8, SumSquares: 20}, {N: 4, Sum: 4, SumSquares: 10}}, ReasonControlMeanNegative, "negative"},
		{"ratio without orders", KindRatio, []GroupStats{{N: 5}, {N: 5, Sum: 100, SumSquares: 5000, DenominatorSum: 2, DenominatorSumSquares: 2, CrossSum: 100}}, ReasonZeroDenominator, "denominator"},
		{"ratio too extreme", KindRatio, []GroupStats{
			// Units (1e150, 1e-200) and (0, 1e-200): valid sums, a ratio past float64.
			{N: 2, Sum: 1e150, SumSquares: 1e300, DenominatorSum: 2e-200, DenominatorSumSquares: 0, CrossSum: 1e-50},
			{N: 2, Sum: 3, SumSquares: 5, DenominatorSum: 2, DenominatorSumSquares: 2, CrossSum: 3},
		}, ReasonNumericOverflow, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := mustAnalyze(t, AnalysisRequest{MetricKind: tt.kind, Groups: tt.groups, Options: Options{Holm: true}})
			c := a.Comparisons[0]
			want := Comparison{TestGroupIndex: 1, Reason: tt.want}
			if diff := cmp.Diff(want, c, cmpopts.IgnoreFields(Comparison{}, "Message")); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(c.Message, tt.message) {
				t.Errorf("message %q does not contain %q", c.Message, tt.message)
			}
			if _, err := json.Marshal(a); err != nil {
				t.Errorf("the analysis does not encode: %v", err)
			}
		})
	}
}

func TestAnalyzeRejectsInvalidRequests(t *testing.T) {
	t.Parallel()
	two := []GroupStats{{N: 10, Sum: 5, SumSquares: 5}, {N: 10, Sum: 6, SumSquares: 6}}
	tests := []struct {
		name string
		req  AnalysisRequest
		want string
	}{
		{"no kind", AnalysisRequest{Groups: two}, "metric_kind is required"},
		{"unknown kind", AnalysisRequest{MetricKind: "median", Groups: two}, `"median"`},
		{"one group", AnalysisRequest{MetricKind: KindMean, Groups: two[:1]}, "at least one variant"},
		{"control out of range", AnalysisRequest{MetricKind: KindMean, Groups: two, ControlIndex: 2}, "control_index 2"},
		{"level 1", AnalysisRequest{MetricKind: KindMean, Groups: two, ConfidenceLevel: 1}, "confidence_level"},
		{"level negative", AnalysisRequest{MetricKind: KindMean, Groups: two, CredibleIntervalLevel: -0.9}, "credible_interval_level"},
		{"splits length", AnalysisRequest{MetricKind: KindMean, Groups: two, Splits: []float64{100}}, "1 weights for 2 groups"},
		{"zero split", AnalysisRequest{MetricKind: KindMean, Groups: two, Splits: []float64{100, 0}}, "splits[1]"},
		{"negative n", AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{{N: -1}, two[1]}}, "groups[0]: n -1"},
		{"NaN sum", AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{two[0], {N: 3, Sum: math.NaN()}}}, "groups[1]: sum NaN"},
		{"conversions above n", AnalysisRequest{MetricKind: KindProportion, Groups: []GroupStats{{N: 3, Sum: 4}, two[1]}}, "not a count"},
		{"impossible squares", AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{{N: 2, Sum: 10, SumSquares: 10}, two[1]}}, "no set of values"},
		{"sums without units", AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{{N: 0, Sum: 1, SumSquares: 1}, two[1]}}, "n is 0"},
		{"ratio covariance", AnalysisRequest{MetricKind: KindRatio, Groups: []GroupStats{
			{N: 3, Sum: 3, SumSquares: 5, DenominatorSum: 3, DenominatorSumSquares: 5, CrossSum: 50}, two[1],
		}}, "cross_sum"},
		{"prior without spread", AnalysisRequest{MetricKind: KindMean, Groups: two, Options: Options{Prior: &Prior{StdDev: 0}}}, "prior.stddev"},
		{"negative tuning", AnalysisRequest{MetricKind: KindMean, Groups: two, Options: Options{Sequential: &Sequential{TuningParameter: -5}}}, "tuning_parameter"},
		{"winsorized proportion", AnalysisRequest{MetricKind: KindProportion, Groups: two, Options: Options{Winsorization: &Winsorization{Percentile: 0.99, Cap: 1}}}, "proportion has no values"},
		{"winsorization without sums", AnalysisRequest{MetricKind: KindMean, Groups: two, Options: Options{Winsorization: &Winsorization{Percentile: 0.99, Cap: 1}}}, "winsorized sums are missing"},
		{"sums without winsorization", AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{
			{N: 10, Sum: 5, SumSquares: 5, Winsorized: &CappedSums{Sum: 5, SumSquares: 5}}, two[1],
		}}, "options.winsorization is not set"},
		{"capped above raw", AnalysisRequest{MetricKind: KindMean, Options: Options{Winsorization: &Winsorization{Percentile: 0.9, Cap: 100}}, Groups: []GroupStats{
			{N: 10, Sum: 5, SumSquares: 5, Winsorized: &CappedSums{Sum: 6, SumSquares: 6}},
			{N: 10, Sum: 6, SumSquares: 6, Winsorized: &CappedSums{Sum: 6, SumSquares: 6}},
		}}, "exceeds"},
		{"capped above n times cap", AnalysisRequest{MetricKind: KindMean, Options: Options{Winsorization: &Winsorization{Percentile: 0.9, Cap: 0.1}}, Groups: []GroupStats{
			{N: 10, Sum: 5, SumSquares: 5, Winsorized: &CappedSums{Sum: 5, SumSquares: 5}},
			{N: 10, Sum: 6, SumSquares: 6, Winsorized: &CappedSums{Sum: 1, SumSquares: 0.1}},
		}}, "n×cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Analyze(tt.req)
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want ErrInvalidRequest", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestAnalyzeDefaultsAndShape(t *testing.T) {
	t.Parallel()
	a := mustAnalyze(t, AnalysisRequest{
		MetricKind: KindProportion, ControlIndex: 1, Splits: []float64{34, 33, 33},
		Groups:  []GroupStats{{N: 1000, Sum: 120}, {N: 1010, Sum: 100}, {N: 990}},
		Options: Options{Sequential: &Sequential{}},
	})
	wantSettings := Settings{ConfidenceLevel: 0.95, CredibleIntervalLevel: 0.95,
		Options: Options{Sequential: &Sequential{TuningParameter: DefaultTuningParameter}, RelativeMethod: RelativeFieller}}
	if diff := cmp.Diff(wantSettings, a.Settings); diff != "" {
		t.Errorf("settings mismatch (-want +got):\n%s", diff)
	}
	// The control is skipped; every other group is compared in index order,
	// including group 2 with no conversions at all (its rate is compared
	// with the control's; only the delta method refused it).
	var got []string
	for _, c := range a.Comparisons {
		got = append(got, c.String()[:len("group 0: ")]+string(c.Reason))
	}
	if diff := cmp.Diff([]string{"group 0: ", "group 2: "}, got); diff != "" {
		t.Errorf("comparisons mismatch (-want +got):\n%s", diff)
	}
	if a.Groups[2].Mean == nil || *a.Groups[2].Mean != 0 {
		t.Errorf("group 2 mean = %v, want 0", a.Groups[2].Mean)
	}
	if a.SRM == nil || a.SRM.Status != SRMOK {
		t.Errorf("srm = %+v, want ok", a.SRM)
	}
}

// TestAnalysisJSONNames pins the field names the API maps onto a results
// snapshot's vs_control entry (contract §2.8).
func TestAnalysisJSONNames(t *testing.T) {
	t.Parallel()
	a := mustAnalyze(t, AnalysisRequest{MetricKind: KindProportion, Splits: []float64{50, 50}, Options: Options{Holm: true},
		Groups: []GroupStats{{N: 1000, Sum: 100}, {N: 1000, Sum: 120}}})
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	paths := [][]string{
		{"analysis", "confidence_level"}, {"analysis", "credible_interval_level"}, {"srm", "status"}, {"srm", "p_value"},
		{"comparisons", "0", "lift"}, {"comparisons", "0", "difference"},
		{"comparisons", "0", "bayesian", "credible_interval", "lower"}, {"comparisons", "0", "bayesian", "credible_interval", "upper"},
		{"comparisons", "0", "bayesian", "prob_beat_control"}, {"comparisons", "0", "bayesian", "risk"},
		{"comparisons", "0", "frequentist", "p_value"}, {"comparisons", "0", "frequentist", "adjusted_p_value"},
		{"comparisons", "0", "frequentist", "confidence_interval", "lower"},
		{"comparisons", "0", "frequentist", "difference_interval", "upper"},
		{"groups", "1", "mean"},
	}
	for _, p := range paths {
		if !hasPath(doc, p) {
			t.Errorf("encoded analysis has no %s:\n%s", strings.Join(p, "."), data)
		}
	}
}

func hasPath(v any, path []string) bool {
	for _, key := range path {
		switch node := v.(type) {
		case map[string]any:
			v = node[key]
		case []any:
			if key != "0" && key != "1" || len(node) <= int(key[0]-'0') {
				return false
			}
			v = node[key[0]-'0']
		default:
			return false
		}
		if v == nil {
			return false
		}
	}
	return true
}
