package stats

import (
	"errors"
	"testing"
)

// TestSimulateAA runs small A/A simulations with fixed seeds (so the counts
// are fixed) and checks the false-positive rate of each metric kind lies in
// a wide binomial band around α = 5 %: with 600 runs the 99.9 % band of a
// true 5 % is about 2.4 %–8.3 %, and of 2.5 % per direction about 0.7 %–5 %.
func TestSimulateAA(t *testing.T) {
	t.Parallel()
	for _, cfg := range []SimulationConfig{
		{Kind: KindProportion, Visitors: 2000, Runs: 600, Conversion: 0.05, Seed: 1},
		{Kind: KindMean, Visitors: 2000, Runs: 600, Conversion: 0.05, Sigma: 2, Winsorize: DefaultWinsorPercentile, Seed: 2},
		{Kind: KindRatio, Visitors: 2000, Runs: 600, Conversion: 0.05, Sigma: 1, Seed: 3},
	} {
		t.Run(string(cfg.Kind), func(t *testing.T) {
			t.Parallel()
			r, err := Simulate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Significant.Rate < 0.024 || r.Significant.Rate > 0.083 ||
				r.Wins.Rate < 0.007 || r.Wins.Rate > 0.05 || r.Losses.Rate < 0.007 || r.Losses.Rate > 0.05 {
				t.Errorf("A/A rates out of band: %+v", r)
			}
			// At 100 buyers a group with σ = 2, a control mean can be too
			// uncertain for a relative lift now and then; rarely.
			if r.NotComputable > cfg.Runs/100 {
				t.Errorf("%d runs not computable", r.NotComputable)
			}
			again, _ := Simulate(cfg)
			if again != r {
				t.Errorf("not deterministic: %+v then %+v", r, again)
			}
		})
	}
}

func TestSimulatePower(t *testing.T) {
	t.Parallel()
	r, err := Simulate(SimulationConfig{Kind: KindProportion, Visitors: 5000, Runs: 200, Conversion: 0.05, Lift: 0.3, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	// 250 vs 325 expected conversions: z ≈ 3.2, power ≈ 0.89.
	if r.Wins.Rate < 0.75 || r.Losses.Count != 0 {
		t.Errorf("power at a 30 %% lift: %+v", r)
	}
	if !(r.Wins.Interval.Lower < r.Wins.Rate && r.Wins.Rate < r.Wins.Interval.Upper) {
		t.Errorf("rate outside its interval: %+v", r.Wins)
	}
}

func TestSimulateRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []SimulationConfig{
		{Kind: "count", Visitors: 10, Runs: 1, Conversion: 0.1},
		{Kind: KindMean, Visitors: 1, Runs: 1, Conversion: 0.1},
		{Kind: KindProportion, Visitors: 10, Runs: 1, Conversion: 0.8, Lift: 0.5},
		{Kind: KindMean, Visitors: 10, Runs: 1, Conversion: 0.1, Winsorize: 1.5},
	} {
		if _, err := Simulate(cfg); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%+v: err = %v", cfg, err)
		}
	}
}

func TestWilson(t *testing.T) {
	t.Parallel()
	// Wilson 95 % for 50/1000, by hand: center (50 + 1.92)/1003.84 = 0.05172,
	// half 1.96/1003.84·√(47.5 + 0.96) = 0.01359.
	r := wilson(50, 1000)
	if r.Rate != 0.05 || r.Interval.Lower < 0.03812 || r.Interval.Lower > 0.03814 || r.Interval.Upper < 0.06530 || r.Interval.Upper > 0.06532 {
		t.Errorf("wilson(50, 1000) = %+v", r)
	}
}
