package stats

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// ErrInvalidRequest is wrapped by every error that Analyze and ParseRequest
// return: the request itself is wrong (a missing field, sums that no data set
// could produce), as opposed to valid data on which a comparison is not
// computable, which is reported inside the Analysis.
var ErrInvalidRequest = errors.New("invalid analysis request")

// MetricKind says how a group's sufficient statistics become a mean and a
// per-unit variance.
type MetricKind string

const (
	// KindProportion is a rate of units that did something (conversion, bounce):
	// Sum counts them and the variance is p(1−p).
	KindProportion MetricKind = "proportion"
	// KindMean is a per-unit value (revenue per visitor): Sum and SumSquares
	// are Σy and Σy² over the units.
	KindMean MetricKind = "mean"
	// KindRatio is Σnumerator/Σdenominator over units (average order value =
	// revenue/orders per visitor), with its variance by the delta method.
	KindRatio MetricKind = "ratio"
)

// Defaults filled in when the request leaves a field at zero.
const (
	DefaultLevel           = 0.95
	DefaultTuningParameter = 5000
)

// GroupStats are one group's sufficient statistics over its units (usually
// visitors). Fields a metric kind does not use are ignored.
type GroupStats struct {
	// N is the number of units in the group.
	N int64 `json:"n"`
	// Sum is Σy: converted units for a proportion, the total for a mean, the
	// numerator total (ΣM) for a ratio.
	Sum float64 `json:"sum"`
	// SumSquares is Σy² (ΣM² for a ratio); unused for a proportion.
	SumSquares float64 `json:"sum_squares,omitempty"`
	// DenominatorSum, DenominatorSumSquares and CrossSum are ΣD, ΣD² and ΣMD
	// of a ratio metric.
	DenominatorSum        float64 `json:"denominator_sum,omitempty"`
	DenominatorSumSquares float64 `json:"denominator_sum_squares,omitempty"`
	CrossSum              float64 `json:"cross_sum,omitempty"`
	// Winsorized are the same sums over values capped at Options.Winsorization.Cap;
	// required exactly when that option is set.
	Winsorized *CappedSums `json:"winsorized,omitempty"`
	// Covariate are the sums of a pre-exposure covariate X per unit (the
	// same metric in the weeks before the test); required exactly when
	// Options.CUPED is set.
	Covariate *CovariateSums `json:"covariate,omitempty"`
}

// CovariateSums are ΣX, ΣX² and ΣX·Y over a group's units, X the unit's
// pre-exposure value (0 for units unseen before the test) and Y its metric
// value as analysed (capped when winsorized).
type CovariateSums struct {
	Sum        float64 `json:"sum"`
	SumSquares float64 `json:"sum_squares"`
	CrossSum   float64 `json:"cross_sum"`
	// A ratio metric M/D is adjusted with the same ratio before the test,
	// X/Xd (GrowthBook's regression-adjusted ratio): Sum, SumSquares and
	// CrossSum are then ΣX, ΣX² and ΣM·X, and these the denominator's:
	// ΣXd, ΣXd², ΣD·Xd, ΣX·Xd, ΣM·Xd and ΣD·X (M capped when winsorized).
	// Mean metrics leave them 0.
	DenominatorSum                  float64 `json:"denominator_sum,omitempty"`
	DenominatorSumSquares           float64 `json:"denominator_sum_squares,omitempty"`
	DenominatorCrossSum             float64 `json:"denominator_cross_sum,omitempty"`
	PreCrossSum                     float64 `json:"pre_cross_sum,omitempty"`
	NumeratorPreDenominatorCrossSum float64 `json:"numerator_pre_denominator_cross_sum,omitempty"`
	DenominatorPreNumeratorCrossSum float64 `json:"denominator_pre_numerator_cross_sum,omitempty"`
}

// CappedSums are sums over per-unit values replaced by min(y, cap). The
// warehouse computes them in the same query as the raw sums, so stats never
// needs per-unit rows. For a ratio only the numerator is capped.
type CappedSums struct {
	Sum        float64 `json:"sum"`
	SumSquares float64 `json:"sum_squares"`
	// CrossSum is Σ min(M, cap)·D, used by ratio metrics only.
	CrossSum float64 `json:"cross_sum,omitempty"`
}

// Options are the analysis choices beyond the defaults; each is off unless set.
type Options struct {
	// Sequential replaces the fixed-horizon t-test by an always-valid test.
	Sequential *Sequential `json:"sequential,omitempty"`
	// Winsorization caps per-unit values (money outliers) before comparing.
	Winsorization *Winsorization `json:"winsorization,omitempty"`
	// Prior makes the Bayesian posterior use a proper Gaussian prior on the
	// relative lift instead of the flat one.
	Prior *Prior `json:"prior,omitempty"`
	// Holm adds Holm-adjusted p-values across the variants; the same as
	// Correction "holm", kept for requests written before Correction existed.
	Holm bool `json:"holm,omitempty"`
	// Correction adjusts p-values across the variants: "holm" (family-wise
	// error rate) or "benjamini_hochberg" (false discovery rate).
	Correction Correction `json:"correction,omitempty"`
	// RelativeMethod chooses how the relative lift is tested; default
	// "fieller" (see RelativeFieller). "delta" is the GrowthBook method that
	// DESIGN §8's published reference values are defined by.
	RelativeMethod RelativeMethod `json:"relative_method,omitempty"`
	// CUPED reduces the variance of a mean or ratio metric with a
	// pre-exposure covariate; every group must then carry
	// GroupStats.Covariate.
	CUPED bool `json:"cuped,omitempty"`
}

// Correction names a multiple-comparison adjustment across the variants.
type Correction string

const (
	// CorrectionHolm is Holm's step-down adjustment: it controls the
	// family-wise error rate (any false winner) without assumptions.
	CorrectionHolm Correction = "holm"
	// CorrectionBenjaminiHochberg controls the false discovery rate (the
	// expected share of false winners among those declared), which is less
	// strict and so more powerful with many variants.
	CorrectionBenjaminiHochberg Correction = "benjamini_hochberg"
)

// RelativeMethod names how the relative lift's p-value and interval are
// computed.
type RelativeMethod string

const (
	// RelativeFieller (the default) tests the absolute difference with
	// Welch's t-test, so the relative and absolute p-values are one and the
	// same, symmetric under swapping the groups; the relative interval is
	// Fieller's for the ratio of the means, which excludes 0 exactly when
	// that test rejects. One group without spread is compared against the
	// other's variance; a proportion at 0 or 100 % gets the variance of
	// (x+1)/(n+2) (Agresti–Caffo) rather than a false zero. The Bayesian
	// chance and interval come from the posterior of the difference too.
	RelativeFieller RelativeMethod = "fieller"
	// RelativeDelta is the delta method on the ratio of the means (GrowthBook's
	// gbstats): a symmetric interval around the lift and a p-value of its own.
	// At A/B sample sizes with skewed data it is lopsided (more false
	// "losers" than "winners") and one outlier can make it certain, so it is
	// kept only to reproduce published reference values.
	RelativeDelta RelativeMethod = "delta"
)

// Sequential configures the mixture sequential probability ratio test.
type Sequential struct {
	// TuningParameter is the total sample size (control plus variant) at which
	// the confidence sequence is narrowest; default 5000. Set it near the
	// sample size you expect to reach: intervals are then only modestly wider
	// than fixed-horizon ones there.
	TuningParameter float64 `json:"tuning_parameter,omitempty"`
}

// Winsorization records the cap applied to per-unit values. Percentile is
// informative (which quantile of the pooled values the cap is); Cap is the
// value the warehouse used for GroupStats.Winsorized.
type Winsorization struct {
	Percentile float64 `json:"percentile"`
	Cap        float64 `json:"cap"`
}

// Prior is a Gaussian prior on the relative lift: N(Mean, StdDev²).
type Prior struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
}

// AnalysisRequest is one metric of one test: the groups' sufficient
// statistics and how to compare them. It is also the JSON that `lift stats`
// reads.
type AnalysisRequest struct {
	MetricKind MetricKind `json:"metric_kind"`
	// LowerIsBetter flips prob_beat_control and risk (bounce rate).
	LowerIsBetter bool `json:"lower_is_better,omitempty"`
	// NonNegative says the metric's values cannot fall below 0 (revenue,
	// an order value; not profit), so neither can its relative lift below
	// −100 %: its intervals are clamped there, as a proportion's are.
	NonNegative bool `json:"non_negative,omitempty"`
	// Groups are indexed by test group index; ControlIndex names the control.
	Groups       []GroupStats `json:"groups"`
	ControlIndex int          `json:"control_index,omitempty"`
	// Splits are the configured traffic weights of the groups (e.g. integer
	// percentages). When present, the analysis includes the SRM check on N.
	Splits []float64 `json:"splits,omitempty"`
	// ConfidenceLevel and CredibleIntervalLevel default to 0.95.
	ConfidenceLevel       float64 `json:"confidence_level,omitempty"`
	CredibleIntervalLevel float64 `json:"credible_interval_level,omitempty"`
	Options               Options `json:"options,omitzero"`
}

// ParseRequest decodes a JSON AnalysisRequest strictly: unknown fields and
// trailing data are errors, so a misspelt sum is not silently read as zero.
// It does not validate the values; Analyze does.
func ParseRequest(data []byte) (AnalysisRequest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req AnalysisRequest
	if err := dec.Decode(&req); err != nil {
		return AnalysisRequest{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	if dec.More() {
		return AnalysisRequest{}, fmt.Errorf("%w: trailing data after the request object", ErrInvalidRequest)
	}
	return req, nil
}

// withDefaults fills the zero fields that have a documented default.
func (r AnalysisRequest) withDefaults() AnalysisRequest {
	r.ConfidenceLevel = cmp.Or(r.ConfidenceLevel, DefaultLevel)
	r.CredibleIntervalLevel = cmp.Or(r.CredibleIntervalLevel, DefaultLevel)
	if r.Options.Holm && r.Options.Correction == "" {
		r.Options.Correction = CorrectionHolm
	}
	r.Options.RelativeMethod = cmp.Or(r.Options.RelativeMethod, RelativeFieller)
	if s := r.Options.Sequential; s != nil {
		r.Options.Sequential = &Sequential{TuningParameter: cmp.Or(s.TuningParameter, DefaultTuningParameter)}
	}
	return r
}

// Validate reports the first problem that makes the request unanswerable. It
// expects defaults to be filled already (Analyze does that).
func (r AnalysisRequest) Validate() error {
	if err := r.validateShape(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	for i, g := range r.Groups {
		if err := r.validateGroup(g); err != nil {
			return fmt.Errorf("%w: groups[%d]: %v", ErrInvalidRequest, i, err)
		}
	}
	return nil
}

func (r AnalysisRequest) validateShape() error {
	switch r.MetricKind {
	case KindProportion, KindMean, KindRatio:
	case "":
		return errors.New("metric_kind is required (proportion, mean or ratio)")
	default:
		return fmt.Errorf("metric_kind %q is not proportion, mean or ratio", r.MetricKind)
	}
	if len(r.Groups) < 2 {
		return fmt.Errorf("groups: need a control and at least one variant, got %d group(s)", len(r.Groups))
	}
	if r.ControlIndex < 0 || r.ControlIndex >= len(r.Groups) {
		return fmt.Errorf("control_index %d is not a group index (0..%d)", r.ControlIndex, len(r.Groups)-1)
	}
	if !isProbability(r.ConfidenceLevel) {
		return fmt.Errorf("confidence_level %v is not strictly between 0 and 1", r.ConfidenceLevel)
	}
	if !isProbability(r.CredibleIntervalLevel) {
		return fmt.Errorf("credible_interval_level %v is not strictly between 0 and 1", r.CredibleIntervalLevel)
	}
	if err := r.validateSplits(); err != nil {
		return err
	}
	return r.Options.validate(r.MetricKind)
}

func (r AnalysisRequest) validateSplits() error {
	if r.Splits == nil {
		return nil
	}
	if len(r.Splits) != len(r.Groups) {
		return fmt.Errorf("splits: %d weights for %d groups", len(r.Splits), len(r.Groups))
	}
	for i, w := range r.Splits {
		if !finite(w) || w <= 0 {
			return fmt.Errorf("splits[%d]: weight %v is not a positive number", i, w)
		}
	}
	return nil
}

func (o Options) validate(kind MetricKind) error {
	if s := o.Sequential; s != nil && (!finite(s.TuningParameter) || s.TuningParameter <= 0) {
		return fmt.Errorf("options.sequential.tuning_parameter %v is not a positive number", s.TuningParameter)
	}
	if p := o.Prior; p != nil {
		if !finite(p.Mean) {
			return fmt.Errorf("options.prior.mean %v is not a finite number", p.Mean)
		}
		if !finite(p.StdDev) || p.StdDev <= 0 {
			return fmt.Errorf("options.prior.stddev %v is not a positive number", p.StdDev)
		}
	}
	switch o.Correction {
	case "", CorrectionHolm, CorrectionBenjaminiHochberg:
	default:
		return fmt.Errorf("options.correction %q is not holm or benjamini_hochberg", o.Correction)
	}
	if o.Holm && o.Correction != CorrectionHolm {
		return fmt.Errorf("options.holm contradicts options.correction %q", o.Correction)
	}
	switch o.RelativeMethod {
	case RelativeFieller, RelativeDelta:
	default:
		return fmt.Errorf("options.relative_method %q is not fieller or delta", o.RelativeMethod)
	}
	if o.CUPED && kind == KindProportion {
		return errors.New("options.cuped applies to mean and ratio metrics; send a 0/1 metric as a mean (sum_squares = sum)")
	}
	if w := o.Winsorization; w != nil {
		if kind == KindProportion {
			return errors.New("options.winsorization: a proportion has no values to cap; use it with mean or ratio metrics")
		}
		if !isProbability(w.Percentile) {
			return fmt.Errorf("options.winsorization.percentile %v is not strictly between 0 and 1", w.Percentile)
		}
		if !finite(w.Cap) {
			return fmt.Errorf("options.winsorization.cap %v is not a finite number", w.Cap)
		}
	}
	return nil
}

// validateGroup rejects sums no data set can produce. Rounding in the
// warehouse can break the inequalities by a hair, hence the tolerance.
func (r AnalysisRequest) validateGroup(g GroupStats) error {
	if g.N < 0 {
		return fmt.Errorf("n %d is negative", g.N)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"sum", g.Sum}, {"sum_squares", g.SumSquares}, {"denominator_sum", g.DenominatorSum},
		{"denominator_sum_squares", g.DenominatorSumSquares}, {"cross_sum", g.CrossSum},
	} {
		if !finite(f.v) {
			return fmt.Errorf("%s %v is not a finite number", f.name, f.v)
		}
	}
	if err := r.validateCapped(g); err != nil {
		return err
	}
	if err := r.validateCovariate(g); err != nil {
		return err
	}
	n := float64(g.N)
	switch r.MetricKind {
	case KindProportion:
		if g.Sum < 0 || g.Sum > n {
			return fmt.Errorf("sum %v is not a count between 0 and n %d", g.Sum, g.N)
		}
	case KindMean:
		return checkMoments("sum", "sum_squares", n, g.Sum, g.SumSquares)
	case KindRatio:
		return checkRatio(n, g)
	}
	return nil
}

func (r AnalysisRequest) validateCapped(g GroupStats) error {
	w := r.Options.Winsorization
	c := g.Winsorized
	switch {
	case w == nil && c == nil:
		return nil
	case w == nil:
		return errors.New("winsorized sums given but options.winsorization is not set")
	case c == nil:
		return errors.New("options.winsorization is set but winsorized sums are missing")
	}
	for _, v := range []float64{c.Sum, c.SumSquares, c.CrossSum} {
		if !finite(v) {
			return fmt.Errorf("winsorized sums contain %v, not a finite number", v)
		}
	}
	n := float64(g.N)
	// min(y, cap) ≤ y and ≤ cap for every unit, so the capped sum can exceed
	// neither total.
	if exceeds(c.Sum, g.Sum) || exceeds(c.Sum, n*w.Cap) {
		return fmt.Errorf("winsorized.sum %v exceeds sum %v or n×cap %v", c.Sum, g.Sum, n*w.Cap)
	}
	if err := checkMoments("winsorized.sum", "winsorized.sum_squares", n, c.Sum, c.SumSquares); err != nil {
		return err
	}
	if r.MetricKind == KindRatio {
		return checkCovariance("winsorized.cross_sum", n, c.Sum, c.SumSquares, g.DenominatorSum, g.DenominatorSumSquares, c.CrossSum)
	}
	return nil
}

// checkMoments holds Σy² ≥ (Σy)²/n (Cauchy–Schwarz), and zero sums for n = 0.
func checkMoments(sumName, sqName string, n, sum, sq float64) error {
	if sq < 0 {
		return fmt.Errorf("%s %v is negative", sqName, sq)
	}
	if n == 0 {
		if sum != 0 || sq != 0 {
			return fmt.Errorf("n is 0 but %s or %s is not", sumName, sqName)
		}
		return nil
	}
	if exceeds(sum*(sum/n), sq) {
		return fmt.Errorf("%s %v is less than %s²/n: no set of values has these sums", sqName, sq, sumName)
	}
	return nil
}

func checkRatio(n float64, g GroupStats) error {
	if g.DenominatorSum < 0 {
		return fmt.Errorf("denominator_sum %v is negative", g.DenominatorSum)
	}
	if err := checkMoments("sum", "sum_squares", n, g.Sum, g.SumSquares); err != nil {
		return err
	}
	if err := checkMoments("denominator_sum", "denominator_sum_squares", n, g.DenominatorSum, g.DenominatorSumSquares); err != nil {
		return err
	}
	return checkCovariance("cross_sum", n, g.Sum, g.SumSquares, g.DenominatorSum, g.DenominatorSumSquares, g.CrossSum)
}

// checkCovariance holds cov(M,D)² ≤ var(M)·var(D), without which the delta
// method's variance could come out negative.
func checkCovariance(name string, n, sm, sqm, sd, sqd, cross float64) error {
	if n == 0 {
		if cross != 0 {
			return fmt.Errorf("n is 0 but %s is not", name)
		}
		return nil
	}
	cm := math.Max(0, centered(sqm, sm, n))
	cd := math.Max(0, centered(sqd, sd, n))
	cmd := cross - sm*(sd/n)
	if exceeds(math.Abs(cmd), math.Sqrt(cm)*math.Sqrt(cd)+tolerance*math.Abs(cross)) {
		return fmt.Errorf("%s %v implies a covariance larger than the variances allow", name, cross)
	}
	return nil
}

// tolerance is the relative slack for inequalities that rounding may break.
const tolerance = 1e-9

// exceeds reports a > b beyond rounding. Infinities (from sums that overflow
// when squared) compare as the numbers they stand for.
func exceeds(a, b float64) bool {
	if !(a > b) {
		return false
	}
	if math.IsInf(a, 1) || math.IsInf(b, -1) {
		return true
	}
	return a-b > tolerance*math.Max(math.Abs(a), math.Abs(b))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func isProbability(v float64) bool { return v > 0 && v < 1 }
