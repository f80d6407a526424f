package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"errors"
	"testing"
)

// TestSimulateAA runs small A/A simulations with fixed seeds (so the counts
// are fixed) and checks the false positives of each metric kind, overall and
// per direction, lie in the 99.9 % binomial band of a true α = 5 % (α/2 per
// direction): with 600 runs about 2.4 %–8.3 %, and 0.7 %–5 % a direction.
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
			lo, hi := binomialBand(cfg.Runs, 0.05)
			dlo, dhi := binomialBand(cfg.Runs, 0.025)
			if n := r.Significant.Count; n < lo || n > hi {
				t.Errorf("%d of %d A/A tests significant, outside [%d, %d]", n, cfg.Runs, lo, hi)
			}
			for _, d := range []Rate{r.Losses, r.Wins} {
				if d.Count < dlo || d.Count > dhi {
					t.Errorf("%d of %d A/A tests significant in one direction, outside [%d, %d]: %+v", d.Count, cfg.Runs, dlo, dhi, r)
				}
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

// binomialBand is the central 99.9 % range of counts of a Binomial(n, p):
// a simulation whose true rate is p lands outside it once in a thousand.
func binomialBand(n int, p float64) (lo, hi int) {
	b := distuv.Binomial{N: float64(n), P: p}
	for lo = 0; b.CDF(float64(lo)) < 0.0005; lo++ {
	}
	for hi = n; hi > 0 && b.CDF(float64(hi-1)) >= 0.9995; hi-- {
	}
	return lo, hi
}

func TestBinomialBand(t *testing.T) {
	t.Parallel()
	// Binomial(300, 0.05): mean 15, sd 3.77; 99.9 % ≈ 15 ± 3.29·3.77.
	lo, hi := binomialBand(300, 0.05)
	if lo < 3 || lo > 6 || hi < 27 || hi > 30 {
		t.Errorf("band = [%d, %d]", lo, hi)
	}
}

func TestSimulatePeeking(t *testing.T) {
	t.Parallel()
	cfg := PeekingConfig{Visitors: 5000, Days: 14, Runs: 300, Conversion: 0.05, Seed: 5}
	r, err := SimulatePeeking(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The always-valid test may be looked at daily: its rate is at most α,
	// so its count stays under the binomial band's top for a true 5 %.
	if _, hi := binomialBand(cfg.Runs, 0.05); r.SequentialPeeked.Count > hi {
		t.Errorf("sequential test peeked daily: %d of %d significant, above %d", r.SequentialPeeked.Count, cfg.Runs, hi)
	}
	// The fixed test looked at once is a 5 % test...
	if lo, hi := binomialBand(cfg.Runs, 0.05); r.FixedFinal.Count < lo || r.FixedFinal.Count > hi {
		t.Errorf("fixed test at the last look: %d of %d significant, outside [%d, %d]", r.FixedFinal.Count, cfg.Runs, lo, hi)
	}
	// ...and peeked daily over 14 days it is not: about 20 % (Armitage et
	// al. 1969 give 20 % for 15 looks), far above any 5 % band.
	if lo, _ := binomialBand(cfg.Runs, 0.12); r.FixedPeeked.Count < lo {
		t.Errorf("fixed test peeked daily: only %d of %d significant", r.FixedPeeked.Count, cfg.Runs)
	}
	if r.FixedPeeked.Count < r.FixedFinal.Count || r.SequentialPeeked.Count < r.SequentialFinal.Count {
		t.Errorf("a daily look found fewer than the last look alone: %+v", r)
	}
	if r.Config.TuningParameter != 10000 {
		t.Errorf("tuning parameter default = %v, want the planned total 10000", r.Config.TuningParameter)
	}
}

func TestNormalPower(t *testing.T) {
	t.Parallel()
	// 3 % → 3.3 % at 20,000 a group: se = √(.03·.97 + .033·.967)/√20000
	// = 0.0017467, |Δ|/se = 1.71752, power = Φ(1.71752 − 1.95996) +
	// Φ(−1.71752 − 1.95996) = 0.40422 + 0.00012 = 0.40434.
	if got := NormalPower(0.03, 0.1, 20000, 0.95); math.Abs(got-0.40434) > 5e-5 {
		t.Errorf("NormalPower = %v, want 0.40434", got)
	}
	if got := NormalPower(0.03, 0, 20000, 0.95); math.Abs(got-0.05) > 1e-12 {
		t.Errorf("NormalPower at no lift = %v, want α", got)
	}
}

func TestSimulatedPowerMatchesNormalTheory(t *testing.T) {
	t.Parallel()
	cfg := SimulationConfig{Kind: KindProportion, Visitors: 5000, Runs: 300, Conversion: 0.05, Lift: 0.2, Seed: 6}
	r, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := NormalPower(cfg.Conversion, cfg.Lift, cfg.Visitors, DefaultLevel)
	if lo, hi := binomialBand(cfg.Runs, want); r.Significant.Count < lo || r.Significant.Count > hi {
		t.Errorf("power %d of %d, outside [%d, %d] around normal theory %.3f", r.Significant.Count, cfg.Runs, lo, hi, want)
	}
}

func TestSimulateWorkersDoNotChangeResults(t *testing.T) {
	t.Parallel()
	cfg := SimulationConfig{Kind: KindRatio, Visitors: 1000, Runs: 50, Conversion: 0.1, Sigma: 1, Winsorize: 0.99, Seed: 7, Workers: 1}
	one, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workers = 3
	three, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	one.Config.Workers, three.Config.Workers = 0, 0
	if one != three {
		t.Errorf("1 worker %+v, 3 workers %+v", one, three)
	}
}

func TestSimulateReport(t *testing.T) {
	t.Parallel()
	r, err := SimulateReport(ReportConfig{Visitors: 1000, Runs: 20, Conversion: 0.1, Days: 7, PowerLift: 0.1, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.AA) != 9 || r.AA[0].Config.Kind != KindProportion || r.AA[4].Config.Sigma != 2 || r.AA[4].Config.Winsorize != DefaultWinsorPercentile {
		t.Errorf("rows: %+v", r.AA)
	}
	for _, row := range r.AA {
		if row.Config.Lift != 0 || row.Significant.Runs != 20 {
			t.Errorf("not an A/A row of 20 runs: %+v", row)
		}
	}
	if r.Peeking.Config.Days != 7 || r.Peeking.Config.Lift != 0 || r.Power.Config.Lift != 0.1 || r.NormalPower != NormalPower(0.1, 0.1, 1000, 0.95) {
		t.Errorf("peeking %+v, power %+v, normal %v", r.Peeking.Config, r.Power.Config, r.NormalPower)
	}
	// The peeked power run sees the same lift; on its last day it is the
	// fixed test at full size, so it cannot find more than the daily looks.
	if p := r.PeekingPower; p.Config.Lift != 0.1 || p.Config.Days != 7 || p.FixedFinal.Count > p.FixedPeeked.Count {
		t.Errorf("peeking power %+v", p)
	}
}
