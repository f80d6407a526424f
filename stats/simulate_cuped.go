package stats

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// CUPED in the simulation (SimulationConfig.CUPEDCorrelation = ρ > 0, mean
// metrics): each visitor's revenue before the test, X, and in it, Y, are
// drawn so that their correlation is exactly ρ. X and a fresh E are
// independent draws of the same per-visitor revenue (a buyer with
// probability Conversion, a lognormal order of mean 50 and σ Sigma), and
//
//	Y = (1 + lift)·(ρ·X + √(1 − ρ²)·E),
//
// so Var Y = Var X (before the lift) and Cov(X, Y) = ρ·Var X. Each test is
// analysed twice on the same draws, with and without CUPED: the adjusted
// difference's variance is (1 − ρ²) times the raw one's, which is what
// NormalPowerMean predicts the power from.

// DirectionRates are the significant tests of one analysis, by direction.
type DirectionRates struct {
	NotComputable int  `json:"not_computable"`
	Losses        Rate `json:"losses"`
	Wins          Rate `json:"wins"`
	Significant   Rate `json:"significant"`
}

// cupedRun is one run's two verdicts: with CUPED and on the same data
// without.
type cupedRun struct{ adjusted, plain outcome }

// simulateCUPED runs cfg.Runs tests of correlated pre/post revenue and
// analyses each with and without CUPED.
func simulateCUPED(cfg SimulationConfig) (SimulationResult, error) {
	alpha := 1 - cfg.Level
	runs, err := parallelRuns(cfg.Runs, cfg.Workers, func(run int) (cupedRun, error) {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(run)))
		req := AnalysisRequest{MetricKind: KindMean, ConfidenceLevel: cfg.Level,
			Options: Options{RelativeMethod: cfg.Method, CUPED: true}}
		req.Groups = []GroupStats{cfg.cupedGroup(rng, 0), cfg.cupedGroup(rng, cfg.Lift)}
		adjusted, err := Analyze(req)
		if err != nil {
			return cupedRun{}, err
		}
		req.Options.CUPED = false
		for i := range req.Groups {
			req.Groups[i].Covariate = nil
		}
		plain, err := Analyze(req)
		if err != nil {
			return cupedRun{}, err
		}
		return cupedRun{verdict(adjusted.Comparisons[0], alpha), verdict(plain.Comparisons[0], alpha)}, nil
	})
	if err != nil {
		return SimulationResult{}, err
	}
	var adj, plain [4]int
	for _, r := range runs {
		adj[r.adjusted]++
		plain[r.plain]++
	}
	a, p := directionRates(adj, cfg.Runs), directionRates(plain, cfg.Runs)
	return SimulationResult{Config: cfg, NotComputable: a.NotComputable, Losses: a.Losses, Wins: a.Wins,
		Significant: a.Significant, WithoutCUPED: &p}, nil
}

func directionRates(n [4]int, runs int) DirectionRates {
	return DirectionRates{NotComputable: n[skipped], Losses: wilson(n[loss], runs), Wins: wilson(n[win], runs),
		Significant: wilson(n[loss]+n[win], runs)}
}

// cupedGroup draws one group's visitors (X and E as in the comment above)
// and returns its sums with the covariate's.
func (cfg SimulationConfig) cupedGroup(rng *rand.Rand, lift float64) GroupStats {
	mu := math.Log(meanOrderValue) - cfg.Sigma*cfg.Sigma/2
	order := func() float64 { return math.Exp(mu + cfg.Sigma*rng.NormFloat64()) }
	rho := cfg.CUPEDCorrelation
	fresh := math.Sqrt(1 - rho*rho)
	// Buyers before the test and fresh buyers in it, each a Bernoulli
	// process over the visitors (in visitor order, so the sums add up in
	// one order and the run is reproducible); a visitor may be both.
	type spend struct {
		visitor int
		amount  float64
	}
	draw := func() []spend {
		var out []spend
		for v := nextBuyer(rng, cfg.Conversion, -1); v < cfg.Visitors; v = nextBuyer(rng, cfg.Conversion, v) {
			out = append(out, spend{v, order()})
		}
		return out
	}
	pre, now := draw(), draw()
	g := GroupStats{N: int64(cfg.Visitors), Covariate: &CovariateSums{}}
	add := func(x, e float64) {
		y := (1 + lift) * (rho*x + fresh*e)
		g.Sum += y
		g.SumSquares += y * y
		g.Covariate.Sum += x
		g.Covariate.SumSquares += x * x
		g.Covariate.CrossSum += x * y
	}
	// Merge the two visitor-ordered lists.
	for i, j := 0, 0; i < len(pre) || j < len(now); {
		switch {
		case j == len(now) || (i < len(pre) && pre[i].visitor < now[j].visitor):
			add(pre[i].amount, 0)
			i++
		case i == len(pre) || now[j].visitor < pre[i].visitor:
			add(0, now[j].amount)
			j++
		default:
			add(pre[i].amount, now[j].amount)
			i, j = i+1, j+1
		}
	}
	return g
}

// NormalPowerMean is the power of the two-sided test of a difference in
// means by normal theory, for the revenue of the CUPED simulation: per
// visitor mean p·50·(ρ + √(1 − ρ²)) and variance p·50²·e^{σ²} − (p·50)², the
// variant's scaled by 1 + lift, n visitors a group; reduction multiplies
// the difference's variance (1 − ρ² under CUPED, 1 without).
func NormalPowerMean(p, sigma, rho, lift float64, visitors int, level, reduction float64) float64 {
	m := p * meanOrderValue
	varY := p*meanOrderValue*meanOrderValue*math.Exp(sigma*sigma) - m*m
	mean := m * (rho + math.Sqrt(1-rho*rho))
	n := float64(visitors)
	se := math.Sqrt(reduction * varY * (1 + (1+lift)*(1+lift)) / n)
	z := distuv.UnitNormal.Quantile((1 + level) / 2)
	d := math.Abs(lift*mean) / se
	return distuv.UnitNormal.CDF(d-z) + distuv.UnitNormal.CDF(-d-z)
}
