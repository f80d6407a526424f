package stats

import (
	"math"
	"testing"
)

// TestSimulateCUPED: on correlated pre/post revenue, CUPED keeps A/A false
// positives in the 99.9 % binomial band of α in each direction, and its
// power at a planted lift matches normal theory with the variance reduced
// by 1 − ρ² (and the unadjusted analysis of the same tests matches the
// unreduced theory), each within the binomial band of the theory.
func TestSimulateCUPED(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rho  float64
		lift float64
	}{
		{"AA strong", 0.8, 0},
		{"AA weak", 0.3, 0},
		{"power", 0.7, 0.15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := SimulationConfig{Kind: KindMean, Visitors: 5000, Runs: 600, Conversion: 0.05, Sigma: 1,
				Lift: tc.lift, CUPEDCorrelation: tc.rho, Seed: 11}
			r, err := Simulate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.WithoutCUPED == nil {
				t.Fatal("no unadjusted rates")
			}
			if tc.lift == 0 {
				lo, hi := binomialBand(cfg.Runs, 0.025)
				for _, d := range []Rate{r.Losses, r.Wins, r.WithoutCUPED.Losses, r.WithoutCUPED.Wins} {
					if d.Count < lo || d.Count > hi {
						t.Errorf("%d of %d A/A tests significant in one direction, outside [%d, %d]", d.Count, cfg.Runs, lo, hi)
					}
				}
				return
			}
			for _, c := range []struct {
				got       Rate
				reduction float64
			}{{r.Significant, 1 - tc.rho*tc.rho}, {r.WithoutCUPED.Significant, 1}} {
				want := NormalPowerMean(cfg.Conversion, cfg.Sigma, tc.rho, tc.lift, cfg.Visitors, DefaultLevel, c.reduction)
				lo, hi := binomialBand(cfg.Runs, want)
				if c.got.Count < lo || c.got.Count > hi {
					t.Errorf("reduction %.2f: power %d/%d, theory %.3f, band [%d, %d]", c.reduction, c.got.Count, cfg.Runs, want, lo, hi)
				}
			}
			if !(r.Significant.Rate > r.WithoutCUPED.Significant.Rate) {
				t.Errorf("CUPED power %v not above the unadjusted %v", r.Significant.Rate, r.WithoutCUPED.Significant.Rate)
			}
		})
	}
	if _, err := Simulate(SimulationConfig{Kind: KindRatio, Visitors: 10, Runs: 1, Conversion: 0.1, CUPEDCorrelation: 0.5}); err == nil {
		t.Error("accepted CUPED on a ratio simulation")
	}
}

// TestNormalPowerMean: no lift is α; CUPED's reduction raises power.
func TestNormalPowerMean(t *testing.T) {
	t.Parallel()
	if p := NormalPowerMean(0.03, 1, 0.7, 0, 20000, 0.95, 1); math.Abs(p-0.05) > 1e-12 {
		t.Errorf("power at no lift %v, want α", p)
	}
	if a, b := NormalPowerMean(0.03, 1, 0.7, 0.1, 20000, 0.95, 1), NormalPowerMean(0.03, 1, 0.7, 0.1, 20000, 0.95, 0.51); !(b > a) {
		t.Errorf("reduced variance power %v not above %v", b, a)
	}
}
