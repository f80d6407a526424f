package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/stat/distuv"
)

// Simulation checks the engine the way a merchant meets it: many A/B tests
// on synthetic stores, each analysed by Analyze from its sufficient
// statistics, counting how often a test comes out significant in each
// direction. With no planted lift (an A/A test) that is the false-positive
// rate, which must be α split evenly between "wins" and "losses" (DESIGN
// §11: 5 % ± 0.75 %, each direction 2.5 % ± 0.6 %); with a planted lift it
// is the power.

// SimulationConfig describes the synthetic store and the analysis.
type SimulationConfig struct {
	Kind MetricKind
	// Visitors per group, and the number of simulated tests.
	Visitors, Runs int
	// Conversion is the control's share of visitors who buy.
	Conversion float64
	// Sigma is the σ of the lognormal order values (mean ≈ 50 whatever σ);
	// 2 is a heavy tail, with the largest of a thousand orders ~50× the mean.
	Sigma float64
	// Lift is the planted relative lift of the variant: on the conversion
	// rate for proportions, on order values for mean and ratio; 0 is A/A.
	Lift float64
	// Winsorize is the percentile among converters at which money values
	// are capped (ConverterCap); 0 turns it off. Ignored for proportions.
	Winsorize float64
	// Method is the relative method analysed; default RelativeFieller.
	Method RelativeMethod
	// Level is the confidence level; default 0.95.
	Level float64
	// CUPEDCorrelation ρ > 0 draws each visitor's revenue before the test
	// with correlation ρ to its revenue in it and analyses every test with
	// and without CUPED (simulate_cuped.go); mean metrics only.
	CUPEDCorrelation float64 `json:"cuped_correlation,omitempty"`
	Seed             uint64
	// Workers run tests in parallel; 0 means one per CPU. The results do
	// not depend on it: every run has its own generator.
	Workers int `json:"-"`
}

// SimulationResult counts the significant tests. Rates are over all runs;
// a run whose comparison is not computable counts in neither direction.
type SimulationResult struct {
	Config SimulationConfig `json:"config"`
	// NotComputable counts runs without a comparison.
	NotComputable int `json:"not_computable"`
	// Losses and Wins are the runs with p < α and a lift below and above 0.
	Losses      Rate `json:"losses"`
	Wins        Rate `json:"wins"`
	Significant Rate `json:"significant"`
	// WithoutCUPED are the same tests analysed without CUPED; present with
	// Config.CUPEDCorrelation (the rates above are then CUPED's).
	WithoutCUPED *DirectionRates `json:"without_cuped,omitempty"`
}

// Rate is a count out of n runs with its Monte Carlo standard error
// √(rate(1 − rate)/n) and its Wilson score 95 % interval.
type Rate struct {
	Count    int      `json:"count"`
	Runs     int      `json:"runs"`
	Rate     float64  `json:"rate"`
	StdErr   float64  `json:"std_err"`
	Interval Interval `json:"interval"`
}

// Order values: lognormal with mean meanOrderValue; a converter places
// another order with probability repeatOrder each time (ratio metrics).
const (
	meanOrderValue = 50
	repeatOrder    = 0.2
)

// outcome is what one simulated test concluded.
type outcome int8

const (
	neutral outcome = iota
	loss
	win
	skipped
)

// Simulate runs cfg.Runs tests. Each run draws from its own generator
// seeded by (Seed, run), so results depend only on the configuration, not
// on how many workers share the runs.
func Simulate(cfg SimulationConfig) (SimulationResult, error) {
	if err := cfg.validate(); err != nil {
		return SimulationResult{}, fmt.Errorf("%w: simulation: %v", ErrInvalidRequest, err)
	}
	if cfg.CUPEDCorrelation > 0 {
		return simulateCUPED(cfg)
	}
	alpha := 1 - cfg.Level
	outcomes, err := parallelRuns(cfg.Runs, cfg.Workers, func(run int) (outcome, error) {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(run)))
		req, err := cfg.request(rng)
		if err != nil {
			return 0, err
		}
		a, err := Analyze(req)
		if err != nil {
			return 0, err
		}
		return verdict(a.Comparisons[0], alpha), nil
	})
	if err != nil {
		return SimulationResult{}, err
	}
	var n [4]int
	for _, o := range outcomes {
		n[o]++
	}
	return SimulationResult{
		Config:        cfg,
		NotComputable: n[skipped],
		Losses:        wilson(n[loss], cfg.Runs),
		Wins:          wilson(n[win], cfg.Runs),
		Significant:   wilson(n[loss]+n[win], cfg.Runs),
	}, nil
}

// verdict reads one comparison at level 1 − alpha.
func verdict(c Comparison, alpha float64) outcome {
	switch {
	case !c.Computable:
		return skipped
	case c.Frequentist.PValue < alpha && *c.Lift < 0:
		return loss
	case c.Frequentist.PValue < alpha && *c.Lift > 0:
		return win
	}
	return neutral
}

// parallelRuns calls one for runs 0..runs−1 on workers goroutines (one per
// CPU when 0) and returns the results in run order; the first error wins.
func parallelRuns[T any](runs, workers int, one func(run int) (T, error)) ([]T, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]T, runs)
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				run := int(next.Add(1) - 1)
				if run >= runs || errs[w] != nil {
					return
				}
				out[run], errs[w] = one(run)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // every worker meets the same bad configuration: one is enough
		}
	}
	return out, nil
}

func (cfg *SimulationConfig) validate() error {
	if cfg.Method == "" {
		cfg.Method = RelativeFieller
	}
	if cfg.Level == 0 {
		cfg.Level = DefaultLevel
	}
	switch {
	case cfg.Kind != KindProportion && cfg.Kind != KindMean && cfg.Kind != KindRatio:
		return fmt.Errorf("kind %q is not proportion, mean or ratio", cfg.Kind)
	case cfg.Visitors < 2 || cfg.Runs < 1:
		return errors.New("need at least 2 visitors a group and 1 run")
	case !isProbability(cfg.Conversion) || !(cfg.Conversion*(1+cfg.Lift) < 1) || cfg.Lift <= -1:
		return errors.New("conversion and conversion×(1+lift) must lie strictly between 0 and 1")
	case !(cfg.Sigma >= 0) || math.IsInf(cfg.Sigma, 0):
		return fmt.Errorf("sigma %v is not a non-negative number", cfg.Sigma)
	case cfg.Winsorize != 0 && !isProbability(cfg.Winsorize):
		return fmt.Errorf("winsorize %v is not 0 (off) or strictly between 0 and 1", cfg.Winsorize)
	case !isProbability(cfg.Level):
		return fmt.Errorf("level %v is not strictly between 0 and 1", cfg.Level)
	case cfg.CUPEDCorrelation != 0 && (cfg.Kind != KindMean || !(cfg.CUPEDCorrelation > 0 && cfg.CUPEDCorrelation < 1)):
		return fmt.Errorf("cuped correlation %v: a mean metric and 0 < ρ < 1 (0 = off)", cfg.CUPEDCorrelation)
	case cfg.CUPEDCorrelation != 0 && cfg.Winsorize != 0:
		return errors.New("cuped correlation is simulated on raw revenue; set winsorize 0")
	}
	return nil
}

// buyer is one converter: which visitor, the revenue (M) and orders (D).
type buyer struct {
	visitor         int
	revenue, orders float64
}

// request draws one test and builds its analysis request.
func (cfg SimulationConfig) request(rng *rand.Rand) (AnalysisRequest, error) {
	req := AnalysisRequest{MetricKind: cfg.Kind, Options: Options{RelativeMethod: cfg.Method}}
	req.ConfidenceLevel = cfg.Level
	buyers := [2][]buyer{cfg.draw(rng, 0), cfg.draw(rng, cfg.Lift)}
	for _, b := range buyers {
		req.Groups = append(req.Groups, sums(cfg.Kind, cfg.Visitors, b, math.Inf(1)))
	}
	var pooled []float64
	for _, group := range buyers {
		for _, b := range group {
			pooled = append(pooled, b.revenue)
		}
	}
	// Nobody bought (tiny tests): nothing to cap, and the analysis says
	// the test cannot be compared, a run counted as not computable.
	if cfg.Kind == KindProportion || cfg.Winsorize == 0 || len(pooled) == 0 {
		return req, nil
	}
	limit, err := ConverterCap(pooled, cfg.Winsorize)
	if err != nil {
		return AnalysisRequest{}, err
	}
	req.Options.Winsorization = &Winsorization{Percentile: cfg.Winsorize, Cap: limit}
	for g, b := range buyers {
		capped := sums(cfg.Kind, cfg.Visitors, b, limit)
		req.Groups[g].Winsorized = &CappedSums{Sum: capped.Sum, SumSquares: capped.SumSquares, CrossSum: capped.CrossSum}
	}
	return req, nil
}

// draw simulates one group's visitors and returns its converters, in
// visitor order. lift scales the conversion rate (proportions) or the order
// values.
func (cfg SimulationConfig) draw(rng *rand.Rand, lift float64) []buyer {
	rate, scale := cfg.Conversion, 1.0
	if cfg.Kind == KindProportion {
		rate *= 1 + lift
	} else {
		scale += lift
	}
	mu := math.Log(meanOrderValue) - cfg.Sigma*cfg.Sigma/2
	var out []buyer
	for v := nextBuyer(rng, rate, -1); v < cfg.Visitors; v = nextBuyer(rng, rate, v) {
		b := buyer{visitor: v, orders: 1, revenue: scale * math.Exp(mu+cfg.Sigma*rng.NormFloat64())}
		for cfg.Kind == KindRatio && rng.Float64() < repeatOrder {
			b.orders++
			b.revenue += scale * math.Exp(mu+cfg.Sigma*rng.NormFloat64())
		}
		out = append(out, b)
	}
	return out
}

// nextBuyer is the index of the next visitor after v who buys, each buying
// independently with probability rate: the gap is geometric, drawn by
// inversion, which is the same Bernoulli process as a coin per visitor at
// one draw per buyer instead of one per visitor (30× fewer at 3 %).
func nextBuyer(rng *rand.Rand, rate float64, v int) int {
	// 1 − Float64() lies in (0, 1], so the log is finite.
	gap := math.Floor(math.Log(1-rng.Float64()) / math.Log1p(-rate))
	if gap > math.MaxInt32 {
		return math.MaxInt
	}
	return v + 1 + int(gap)
}

// sums are a group's sufficient statistics with revenue capped at limit;
// visitors who did not buy contribute zeros.
func sums(kind MetricKind, visitors int, buyers []buyer, limit float64) GroupStats {
	g := GroupStats{N: int64(visitors)}
	for _, b := range buyers {
		if kind == KindProportion {
			g.Sum++
			continue
		}
		m := math.Min(b.revenue, limit)
		g.Sum += m
		g.SumSquares += m * m
		if kind == KindRatio {
			g.DenominatorSum += b.orders
			g.DenominatorSumSquares += b.orders * b.orders
			g.CrossSum += m * b.orders
		}
	}
	return g
}

// wilson is count/n with the Wilson score 95 % interval, which unlike the
// normal one stays inside [0, 1] and is honest at rates near 0.
func wilson(count, n int) Rate {
	z := distuv.UnitNormal.Quantile(0.975)
	x, m := float64(count), float64(n)
	center := (x + z*z/2) / (m + z*z)
	half := z / (m + z*z) * math.Sqrt(x*(m-x)/m+z*z/4)
	return Rate{Count: count, Runs: n, Rate: x / m, StdErr: math.Sqrt(x / m * (1 - x/m) / m),
		Interval: Interval{math.Max(0, center-half), math.Min(1, center+half)}}
}
