package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// PeekingConfig simulates merchants who look at a conversion test every
// day and stop at the first significant result. Visitors arrive evenly over
// Days; at the end of each day the test is analysed on everyone so far,
// once with the fixed-horizon Welch test and once with the always-valid
// sequential test.
type PeekingConfig struct {
	// Visitors per group by the last day, days of the test, and runs.
	Visitors, Days, Runs int
	Conversion           float64
	// Lift is the planted relative lift on the variant's conversion rate.
	Lift  float64
	Level float64
	// TuningParameter of the sequential test; default 2·Visitors, the total
	// sample size the test is planned to reach (see Sequential).
	TuningParameter float64
	Seed            uint64
	Workers         int `json:"-"`
}

// PeekingResult counts the tests significant at any look and at the last.
type PeekingResult struct {
	Config PeekingConfig `json:"config"`
	// FixedFinal looks once, on the last day: the test as designed.
	FixedFinal Rate `json:"fixed_final"`
	// FixedPeeked is the Welch test stopped at the first daily look with
	// p < α: what peeking does to a fixed-horizon test.
	FixedPeeked Rate `json:"fixed_peeked"`
	// SequentialPeeked and SequentialFinal are the always-valid test, looked
	// at daily and on the last day only.
	SequentialPeeked Rate `json:"sequential_peeked"`
	SequentialFinal  Rate `json:"sequential_final"`
}

// peekOutcome is one run's four verdicts: significant or not.
type peekOutcome struct{ fixedFinal, fixedAny, seqFinal, seqAny bool }

// SimulatePeeking runs cfg.Runs daily-peeked conversion tests.
func SimulatePeeking(cfg PeekingConfig) (PeekingResult, error) {
	if err := cfg.validate(); err != nil {
		return PeekingResult{}, fmt.Errorf("%w: peeking simulation: %v", ErrInvalidRequest, err)
	}
	outcomes, err := parallelRuns(cfg.Runs, cfg.Workers, cfg.run)
	if err != nil {
		return PeekingResult{}, err
	}
	var n [4]int
	for _, o := range outcomes {
		for i, hit := range []bool{o.fixedFinal, o.fixedAny, o.seqFinal, o.seqAny} {
			if hit {
				n[i]++
			}
		}
	}
	return PeekingResult{
		Config:           cfg,
		FixedFinal:       wilson(n[0], cfg.Runs),
		FixedPeeked:      wilson(n[1], cfg.Runs),
		SequentialFinal:  wilson(n[2], cfg.Runs),
		SequentialPeeked: wilson(n[3], cfg.Runs),
	}, nil
}

func (cfg *PeekingConfig) validate() error {
	if cfg.Level == 0 {
		cfg.Level = DefaultLevel
	}
	if cfg.TuningParameter == 0 {
		cfg.TuningParameter = 2 * float64(cfg.Visitors)
	}
	switch {
	case cfg.Days < 1 || cfg.Visitors < 2*cfg.Days || cfg.Runs < 1:
		return errors.New("need at least 1 day, 2 visitors a group a day and 1 run")
	case !isProbability(cfg.Conversion) || !(cfg.Conversion*(1+cfg.Lift) < 1) || cfg.Lift <= -1:
		return errors.New("conversion and conversion×(1+lift) must lie strictly between 0 and 1")
	case !isProbability(cfg.Level):
		return fmt.Errorf("level %v is not strictly between 0 and 1", cfg.Level)
	case !finite(cfg.TuningParameter) || cfg.TuningParameter < 0:
		return fmt.Errorf("tuning parameter %v is not a positive number", cfg.TuningParameter)
	}
	return nil
}

// run draws one test's visitors once and analyses it at every day's end.
func (cfg PeekingConfig) run(run int) (peekOutcome, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(run)))
	store := SimulationConfig{Kind: KindProportion, Visitors: cfg.Visitors, Conversion: cfg.Conversion}
	buyers := [2][]buyer{store.draw(rng, 0), store.draw(rng, cfg.Lift)}
	alpha := 1 - cfg.Level
	var o peekOutcome
	seen := [2]int{}
	for day := 1; day <= cfg.Days; day++ {
		n := cfg.Visitors * day / cfg.Days
		req := AnalysisRequest{MetricKind: KindProportion, ConfidenceLevel: cfg.Level}
		for g := range buyers {
			for seen[g] < len(buyers[g]) && buyers[g][seen[g]].visitor < n {
				seen[g]++
			}
			req.Groups = append(req.Groups, GroupStats{N: int64(n), Sum: float64(seen[g])})
		}
		fixed, err := rejects(req, alpha)
		if err != nil {
			return o, err
		}
		req.Options.Sequential = &Sequential{TuningParameter: cfg.TuningParameter}
		seq, err := rejects(req, alpha)
		if err != nil {
			return o, err
		}
		o.fixedAny, o.seqAny = o.fixedAny || fixed, o.seqAny || seq
		o.fixedFinal, o.seqFinal = fixed, seq
	}
	return o, nil
}

// rejects analyses req and reports p < alpha (either direction).
func rejects(req AnalysisRequest, alpha float64) (bool, error) {
	a, err := Analyze(req)
	if err != nil {
		return false, err
	}
	v := verdict(a.Comparisons[0], alpha)
	return v == win || v == loss, nil
}

// NormalPower is the power of the two-sided test of two proportions at
// level, visitors a group, control rate p and planted relative lift, by the
// normal approximation: Φ(|Δ|/se − z) + Φ(−|Δ|/se − z) with
// se² = p₁(1 − p₁)/n + p₂(1 − p₂)/n. It is what a sample-size calculator
// promises, and what the simulated power should match.
func NormalPower(p, lift float64, visitors int, level float64) float64 {
	q := p * (1 + lift)
	n := float64(visitors)
	se := math.Sqrt(p*(1-p)/n + q*(1-q)/n)
	z := distuv.UnitNormal.Quantile((1 + level) / 2)
	d := math.Abs(q-p) / se
	return distuv.UnitNormal.CDF(d-z) + distuv.UnitNormal.CDF(-d-z)
}
