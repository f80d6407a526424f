package stats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// published is the slice of a comparison that DESIGN §8's reference cases
// state. The cases are GrowthBook's gbstats test cases, quoted to 5
// decimals, so agreement within 5e-6 is agreement to (better than) 4.
type published struct {
	Lift, Difference         float64
	PValue, DifferencePValue float64
	CI, DifferenceCI         Interval
	Credible                 Interval
	Chance                   float64
}

func TestPublishedReferenceCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  AnalysisRequest
		// pick chooses which published fields a case states; the rest are
		// zeroed on both sides.
		pick func(Comparison) published
		want published
	}{
		{
			name: "1 mean metric, Welch t-test relative and absolute",
			req: AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{
				{N: 3407, Sum: 1396.87, SumSquares: 52377.9767},
				{N: 3461, Sum: 2422.7, SumSquares: 134698.29},
			}},
			pick: func(c Comparison) published {
				f := c.Frequentist
				return published{Lift: *c.Lift, Difference: *c.Difference, PValue: f.PValue,
					DifferencePValue: f.DifferencePValue, CI: f.ConfidenceInterval, DifferenceCI: f.DifferenceInterval}
			},
			want: published{
				Lift: 0.70732, CI: Interval{-0.03526, 1.44989}, PValue: 0.06191,
				Difference: 0.29, DifferenceCI: Interval{0.04538, 0.53462}, DifferencePValue: 0.02016,
			},
		},
		{
			name: "2 proportions, relative",
			req: AnalysisRequest{MetricKind: KindProportion, Groups: []GroupStats{
				{N: 28, Sum: 14}, {N: 30, Sum: 16},
			}},
			pick: func(c Comparison) published {
				return published{Lift: *c.Lift, CI: c.Frequentist.ConfidenceInterval, PValue: c.Frequentist.PValue}
			},
			want: published{Lift: 0.06667, CI: Interval{-0.47767, 0.61101}, PValue: 0.80707},
		},
		{
			name: "3 Bayesian proportions, flat prior",
			req: AnalysisRequest{MetricKind: KindProportion, Groups: []GroupStats{
				{N: 100, Sum: 49}, {N: 100, Sum: 51},
			}},
			pick: func(c Comparison) published {
				return published{Lift: *c.Lift, Credible: c.Bayesian.CredibleInterval, Chance: c.Bayesian.ProbBeatControl}
			},
			want: published{Lift: 0.04082, Credible: Interval{-0.24779, 0.32943}, Chance: 0.60918},
		},
		{
			name: "4 Bayesian mean, flat prior",
			req: AnalysisRequest{MetricKind: KindMean, Groups: []GroupStats{
				{N: 10, Sum: 100, SumSquares: 1002.25}, {N: 10, Sum: 105, SumSquares: 1111.5},
			}},
			pick: func(c Comparison) published {
				return published{Lift: *c.Lift, Credible: c.Bayesian.CredibleInterval, Chance: c.Bayesian.ProbBeatControl}
			},
			want: published{Lift: 0.05, Credible: Interval{-0.02, 0.12}, Chance: 0.91923},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The published values are gbstats', defined by the delta
			// method on the ratio: reproduce them with that method.
			tt.req.Options.RelativeMethod = RelativeDelta
			a, err := Analyze(tt.req)
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			c := a.Comparisons[0]
			if !c.Computable {
				t.Fatalf("not computable: %v", c)
			}
			if diff := cmp.Diff(tt.want, tt.pick(c), cmpopts.EquateApprox(0, 5e-6)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPublishedReferenceSRM(t *testing.T) {
	t.Parallel()
	got, err := CheckSRM([]int64{1000, 1200}, []float64{1, 1})
	if err != nil {
		t.Fatalf("CheckSRM: %v", err)
	}
	// Published to 5 significant digits: 0.000020079.
	if got.PValue == nil || *got.PValue < 0.0000200785 || *got.PValue >= 0.0000200795 {
		t.Errorf("p = %v, want 0.000020079", got.PValue)
	}
	if got.Status != SRMMismatch {
		t.Errorf("status = %q, want %q (p < 0.001)", got.Status, SRMMismatch)
	}
}
