package stats

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"
)

// fuzzGroup reads nine fuzzed numbers as one group. With fromMoments the
// numbers are a mean, a spread and a correlation from which consistent sums
// are built, so the fuzzer reaches the arithmetic instead of stopping at
// validation; otherwise they are the raw sums, so validation is fuzzed too.
func fuzzGroup(fromMoments bool, n int64, v [8]float64) GroupStats {
	if !fromMoments {
		return GroupStats{N: n, Sum: v[0], SumSquares: v[1], DenominatorSum: v[2], DenominatorSumSquares: v[3],
			CrossSum: v[4], Winsorized: &CappedSums{Sum: v[5], SumSquares: v[6], CrossSum: v[7]}}
	}
	m, sm, d, sd := v[0], math.Abs(v[1]), math.Abs(v[2]), math.Abs(v[3])
	rho := math.Max(-1, math.Min(1, v[4]))
	k := float64(n)
	g := GroupStats{N: n, Sum: k * m, SumSquares: k * (sm*sm + m*m), DenominatorSum: k * d,
		DenominatorSumSquares: k * (sd*sd + d*d), CrossSum: k * (rho*sm*sd + m*d)}
	// Capping lowers the mean and the spread.
	shrink := 1 / (1 + math.Abs(v[5]))
	cm, csm := m-math.Abs(v[6]), sm*shrink
	g.Winsorized = &CappedSums{Sum: k * cm, SumSquares: k * (csm*csm + cm*cm), CrossSum: k * (rho*csm*sd + cm*d)}
	return g
}

// fuzzCovariate is a CUPED covariate for g: the analysed metric itself
// (θ = 1, nothing left of the variance) or one uncorrelated with it, with
// mean m and unit variance.
func fuzzCovariate(g GroupStats, same bool, m float64) *CovariateSums {
	sum, sq := analysedY(g)
	if same {
		return &CovariateSums{Sum: sum, SumSquares: sq, CrossSum: sq}
	}
	k := float64(g.N)
	return &CovariateSums{Sum: k * m, SumSquares: k * (m*m + 1), CrossSum: m * sum}
}

func FuzzAnalyze(f *testing.F) {
	f.Add(uint8(1), uint8(0), 0.95, 0.0, 0.3, 5000.0, 100.0,
		int64(3407), 1396.87, 52377.9767, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
		int64(3461), 2422.7, 134698.29, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
	f.Add(uint8(0), uint8(0xff), 0.9, 0.1, 0.2, 100.0, 5.0,
		int64(100), 49.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
		int64(100), 51.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
	f.Add(uint8(2), uint8(0x1f), 0.95, 0.0, 0.3, 5000.0, 300.0,
		int64(1000), 70.0, 30.0, 0.4, 0.6, 0.5, 1.0, 2.0, 3.0,
		int64(1000), 75.0, 35.0, 0.38, 0.6, 0.4, 1.0, 2.0, 3.0)
	f.Add(uint8(1), uint8(0x02), 0.95, 0.0, 0.3, 5000.0, 100.0,
		int64(1), 5.0, 25.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
		int64(0), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
	f.Add(uint8(1), uint8(0x03), 0.95, 0.0, 0.3, 5000.0, 100.0,
		int64(9), -1e-300, 1e-300, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
		int64(1<<62), 1e300, 1e-300, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
	f.Add(uint8(1|16), uint8(1|4|8), 0.95, 0.0, 0.3, 5000.0, 100.0,
		int64(3407), 4.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.5,
		int64(3461), 4.2, 2.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.5)
	f.Add(uint8(0|8|4), uint8(4|8), 0.95, 0.0, 0.3, 5000.0, 100.0,
		int64(1000), 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
		int64(1000), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
	f.Fuzz(func(t *testing.T, kind, flags uint8, level, priorMean, priorSD, tuning, limit float64,
		n0 int64, a0, a1, a2, a3, a4, a5, a6, a7 float64,
		n1 int64, b0, b1, b2, b3, b4, b5, b6, b7 float64) {
		fromMoments := flags&1 == 1
		groups := []GroupStats{
			fuzzGroup(fromMoments, n0, [8]float64{a0, a1, a2, a3, a4, a5, a6, a7}),
			fuzzGroup(fromMoments, n1, [8]float64{b0, b1, b2, b3, b4, b5, b6, b7}),
		}
		req := AnalysisRequest{
			MetricKind:      []MetricKind{KindProportion, KindMean, KindRatio}[int(kind)%3],
			LowerIsBetter:   flags&2 != 0,
			Groups:          groups,
			ConfidenceLevel: level, CredibleIntervalLevel: level,
			Options: Options{Holm: flags&4 != 0},
		}
		// A third group exercises Holm and a control that is not group 0.
		if flags&8 != 0 {
			req.Groups = append(req.Groups, groups[0])
			req.ControlIndex = 1
		}
		if flags&16 != 0 {
			req.Options.Sequential = &Sequential{TuningParameter: tuning}
		}
		if flags&32 != 0 {
			req.Options.Prior = &Prior{Mean: priorMean, StdDev: priorSD}
		}
		if flags&64 != 0 {
			req.Options.Winsorization = &Winsorization{Percentile: 0.99, Cap: limit}
		} else {
			for i := range req.Groups {
				req.Groups[i].Winsorized = nil
			}
		}
		// The kind byte's upper bits choose the newer options.
		if kind&4 != 0 {
			req.Options.RelativeMethod = RelativeDelta
		}
		if kind&8 != 0 {
			req.Options.Correction = CorrectionBenjaminiHochberg
		}
		if kind&16 != 0 {
			req.Options.CUPED = true
			for i := range req.Groups {
				req.Groups[i].Covariate = fuzzCovariate(req.Groups[i], kind&32 != 0, a7)
			}
		}
		if flags&128 != 0 {
			req.Splits = make([]float64, len(req.Groups))
			for i := range req.Splits {
				req.Splits[i] = float64(i + 1)
			}
		}
		a, err := Analyze(req)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error does not wrap ErrInvalidRequest: %v", err)
			}
			return
		}
		checkAnalysis(t, a)
	})
}

// FuzzParseRequest feeds arbitrary bytes through the path `lift stats` takes.
func FuzzParseRequest(f *testing.F) {
	if data, err := os.ReadFile(oracleFile); err == nil {
		var doc struct {
			Cases []struct {
				Request json.RawMessage `json:"request"`
			} `json:"cases"`
		}
		if json.Unmarshal(data, &doc) == nil {
			for _, c := range doc.Cases[:min(len(doc.Cases), 20)] {
				f.Add([]byte(c.Request))
			}
		}
	}
	// The published reference cases, CUPED under the delta method among them.
	for _, c := range ReferenceCases() {
		if data, err := json.Marshal(c.Request); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"metric_kind":"proportion","groups":[{"n":100,"sum":49},{"n":100,"sum":51}],"splits":[50,50]}`))
	f.Add([]byte(`{"metric_kind":"mean","groups":[{"n":2,"sum":1e308,"sum_squares":1e308},{"n":0,"sum":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := ParseRequest(data)
		if err != nil {
			return
		}
		a, err := Analyze(req)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error does not wrap ErrInvalidRequest: %v", err)
			}
			return
		}
		checkAnalysis(t, a)
	})
}

// checkAnalysis holds the promises of Analysis: JSON-encodable (no NaN or
// Inf anywhere), probabilities in [0, 1], ordered intervals, non-negative
// risk, and either all numbers or a reason.
func checkAnalysis(t *testing.T, a Analysis) {
	t.Helper()
	if _, err := json.Marshal(a); err != nil {
		t.Fatalf("analysis does not encode: %v\n%+v", err, a)
	}
	for _, c := range a.Comparisons {
		if !c.Computable {
			if c.Reason == "" || c.Message == "" || c.Lift != nil || c.Frequentist != nil || c.Bayesian != nil {
				t.Fatalf("not computable without a reason, or with numbers: %+v", c)
			}
			continue
		}
		if c.Reason != "" || c.Lift == nil || c.Difference == nil || c.Frequentist == nil || c.Bayesian == nil {
			t.Fatalf("computable but incomplete: %+v", c)
		}
		f, b := c.Frequentist, c.Bayesian
		probabilities := []float64{f.PValue, f.DifferencePValue, b.ProbBeatControl}
		if f.AdjustedPValue != nil {
			probabilities = append(probabilities, *f.AdjustedPValue, *f.AdjustedDifferencePValue)
		}
		for _, p := range probabilities {
			if !(p >= 0 && p <= 1) {
				t.Fatalf("probability %v outside [0, 1]: %v", p, c)
			}
		}
		for _, in := range []Interval{f.ConfidenceInterval, f.DifferenceInterval, b.CredibleInterval} {
			if !(in.Lower <= in.Upper) {
				t.Fatalf("interval %+v out of order: %v", in, c)
			}
		}
		if r := c.RelativeRisk; r != nil && !(0 <= r.ConfidenceInterval.Lower && r.ConfidenceInterval.Lower <= r.ConfidenceInterval.Upper && r.Ratio >= 0) {
			t.Fatalf("relative risk %+v out of order: %v", r, c)
		}
		if !(b.Risk >= 0) {
			t.Fatalf("negative risk %v: %v", b.Risk, c)
		}
	}
	if s := a.SRM; s != nil && s.PValue != nil && !(*s.PValue >= 0 && *s.PValue <= 1) {
		t.Fatalf("srm p-value %v outside [0, 1]", *s.PValue)
	}
}
