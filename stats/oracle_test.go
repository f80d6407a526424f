package stats

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// oracleFile is written by testdata/oracle.py (NumPy/SciPy on raw per-unit
// data); see that script's header for how and when to regenerate it.
const oracleFile = "testdata/oracle.json"

type oracleDoc struct {
	Cases []struct {
		Name     string          `json:"name"`
		Request  json.RawMessage `json:"request"`
		Expected struct {
			Comparisons []flatComparison `json:"comparisons"`
			SRM         *flatSRM         `json:"srm"`
		} `json:"expected"`
	} `json:"cases"`
	Winsorize []struct {
		Values       []float64 `json:"values"`
		Denominators []float64 `json:"denominators"`
		Percentile   float64   `json:"percentile"`
		Cap          float64   `json:"cap"`
		CappedSums
	} `json:"winsorize"`
}

// flatComparison is a Comparison with every number at top level, the shape
// the oracle writes; absent numbers are zero on both sides.
type flatComparison struct {
	TestGroupIndex           int        `json:"test_group_index"`
	Computable               bool       `json:"computable"`
	Reason                   Reason     `json:"reason"`
	Lift                     float64    `json:"lift"`
	Difference               float64    `json:"difference"`
	PValue                   float64    `json:"p_value"`
	ConfidenceInterval       [2]float64 `json:"confidence_interval"`
	DifferencePValue         float64    `json:"difference_p_value"`
	DifferenceInterval       [2]float64 `json:"difference_interval"`
	DegreesOfFreedom         float64    `json:"degrees_of_freedom"`
	AdjustedPValue           float64    `json:"adjusted_p_value"`
	AdjustedDifferencePValue float64    `json:"adjusted_difference_p_value"`
	ExpectedLift             float64    `json:"expected_lift"`
	CredibleInterval         [2]float64 `json:"credible_interval"`
	ProbBeatControl          float64    `json:"prob_beat_control"`
	Risk                     float64    `json:"risk"`
}

type flatSRM struct {
	Status    SRMStatus `json:"status"`
	ChiSquare float64   `json:"chi_square"`
	PValue    float64   `json:"p_value"`
}

func flatten(c Comparison) flatComparison {
	out := flatComparison{TestGroupIndex: c.TestGroupIndex, Computable: c.Computable, Reason: c.Reason}
	if !c.Computable {
		return out
	}
	f, b := c.Frequentist, c.Bayesian
	out.Lift, out.Difference = *c.Lift, *c.Difference
	out.PValue, out.DifferencePValue = f.PValue, f.DifferencePValue
	out.ConfidenceInterval = [2]float64{f.ConfidenceInterval.Lower, f.ConfidenceInterval.Upper}
	out.DifferenceInterval = [2]float64{f.DifferenceInterval.Lower, f.DifferenceInterval.Upper}
	out.DegreesOfFreedom = deref(f.DegreesOfFreedom)
	out.AdjustedPValue, out.AdjustedDifferencePValue = deref(f.AdjustedPValue), deref(f.AdjustedDifferencePValue)
	out.ExpectedLift, out.ProbBeatControl, out.Risk = b.ExpectedLift, b.ProbBeatControl, b.Risk
	out.CredibleInterval = [2]float64{b.CredibleInterval.Lower, b.CredibleInterval.Upper}
	return out
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func loadOracle(t *testing.T) oracleDoc {
	t.Helper()
	data, err := os.ReadFile(oracleFile)
	if err != nil {
		t.Fatalf("read oracle: %v", err)
	}
	var doc oracleDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decode oracle: %v", err)
	}
	if len(doc.Cases) == 0 || len(doc.Winsorize) == 0 {
		t.Fatal("oracle file holds no cases")
	}
	return doc
}

// oracleTolerance allows for SciPy and gonum computing the t distribution by
// different routes, for variances from raw values versus from sums, and for
// the normal standing in for t past 10⁷ degrees of freedom.
var oracleTolerance = cmpopts.EquateApprox(1e-6, 1e-9)

func TestOracle(t *testing.T) {
	t.Parallel()
	for _, tc := range loadOracle(t).Cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			req, err := ParseRequest(tc.Request)
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			// The oracle was generated for the delta method on the ratio
			// (gbstats), the default before the Fieller method; it checks
			// that method, still available as an option. The default's
			// difference test is the same Welch test: TestFiellerKeepsOracleDifference.
			req.Options.RelativeMethod = RelativeDelta
			a, err := Analyze(req)
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			got := make([]flatComparison, len(a.Comparisons))
			for i, c := range a.Comparisons {
				got[i] = flatten(c)
			}
			if diff := cmp.Diff(tc.Expected.Comparisons, got, oracleTolerance); diff != "" {
				t.Errorf("comparisons mismatch (-oracle +engine):\n%s", diff)
			}
			var gotSRM *flatSRM
			if s := a.SRM; s != nil {
				gotSRM = &flatSRM{Status: s.Status, ChiSquare: deref(s.ChiSquare), PValue: deref(s.PValue)}
			}
			if diff := cmp.Diff(tc.Expected.SRM, gotSRM, oracleTolerance); diff != "" {
				t.Errorf("srm mismatch (-oracle +engine):\n%s", diff)
			}
		})
	}
}

func TestOracleWinsorize(t *testing.T) {
	t.Parallel()
	for _, tc := range loadOracle(t).Winsorize {
		limit, err := WinsorCap(tc.Values, tc.Percentile)
		if err != nil {
			t.Fatalf("WinsorCap: %v", err)
		}
		if diff := cmp.Diff(tc.Cap, limit, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
			t.Errorf("cap of %d values at %v mismatch (-oracle +engine):\n%s", len(tc.Values), tc.Percentile, diff)
		}
		got, err := Winsorize(tc.Values, tc.Denominators, tc.Cap)
		if err != nil {
			t.Fatalf("Winsorize: %v", err)
		}
		if diff := cmp.Diff(tc.CappedSums, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
			t.Errorf("capped sums of %d values mismatch (-oracle +engine):\n%s", len(tc.Values), diff)
		}
	}
}
