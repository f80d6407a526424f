package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Analysis options say how a test's results are read: they change no
// visitor's experience, only the statistics of its snapshots and custom
// queries (docs/results.md, "Analysis options"). The domain validates them;
// package results applies them through package stats.

// Correction names a multiple-comparison adjustment across the variants.
type Correction string

const (
	CorrectionNone              Correction = "none"
	CorrectionHolm              Correction = "holm"
	CorrectionBenjaminiHochberg Correction = "benjamini_hochberg"
)

// DefaultWinsorize is the percentile money metrics are capped at unless a
// test says otherwise: the 99th percentile of per-visitor revenue among
// converters. Among converters, because at a 3 % conversion rate the 99th
// percentile over all visitors is 0; at the 99th, because it leaves 99 of
// 100 orders as they are while one whale order can no longer decide a test
// (docs/results.md, "Winsorizing money"). It equals stats.DefaultWinsorPercentile.
const DefaultWinsorize = 0.99

// Prior is a Gaussian prior on the relative lift, N(mean, stddev²), for the
// Bayesian figures; nil is the flat prior.
type Prior struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
}

// AnalysisOptions are a test's analysis choices. The zero value is not the
// default: use DefaultAnalysis (winsorizing is on by default).
type AnalysisOptions struct {
	// Sequential makes p-values and intervals always-valid, so reading
	// results every 6 hours does not inflate false positives; guardrails act
	// only under it.
	Sequential bool `json:"sequential"`
	// CUPED reduces variance with each visitor's pre-exposure value of the
	// same metric (mean metrics).
	CUPED bool `json:"cuped"`
	// Winsorize is the percentile money metrics are capped at; 0 turns
	// capping off.
	Winsorize  float64    `json:"winsorize"`
	Correction Correction `json:"correction"`
	Prior      *Prior     `json:"prior"`
}

// DefaultAnalysis is what a test gets when it names no options.
func DefaultAnalysis() AnalysisOptions {
	return AnalysisOptions{Winsorize: DefaultWinsorize, Correction: CorrectionNone}
}

// Guardrail is a metric a test must not harm by more than MaxHarm: the
// relative change in the metric's bad direction (0.02 = 2 % worse than the
// control) that the merchant tolerates.
type Guardrail struct {
	Metric  string  `json:"metric"`
	MaxHarm float64 `json:"max_harm"`
}

// GuardrailMetrics are the metrics a guardrail may watch: every metric a
// snapshot compares with the control (bounce_rate is lower-is-better).
var GuardrailMetrics = []string{"conversion_rate", "revenue_per_visitor", "average_order_value",
	"profit_per_visitor", "add_to_cart_rate", "reached_checkout_rate", "click_through_rate",
	"bounce_rate", "avg_staying_time"}

// analysisInput is the wire form a client writes: every field optional.
type analysisInput struct {
	Sequential *bool           `json:"sequential"`
	CUPED      *bool           `json:"cuped"`
	Winsorize  *float64        `json:"winsorize"`
	Correction *Correction     `json:"correction"`
	Prior      json.RawMessage `json:"prior"`
}

// ParseAnalysis reads an `analysis` object onto base: fields left out keep
// base's value, `winsorize: null` is the default percentile and `prior:
// null` the flat prior. param prefixes the params of refusals, all 422
// invalid_request (the contract's code for a body the schema refuses).
func ParseAnalysis(raw json.RawMessage, base AnalysisOptions, param string) (AnalysisOptions, error) {
	if isNull(raw) {
		return base, nil
	}
	var in analysisInput
	if err := strictUnmarshal(raw, &in); err != nil {
		p, msg := jsonErrorParam(err)
		if p == "" {
			return base, Refuse("invalid_request", param,
				"%s is an object with sequential, cuped, winsorize, correction and prior.", param)
		}
		return base, Refuse("invalid_request", joinParam(param, p), "%s", strings.Replace(msg, p, joinParam(param, p), 1))
	}
	out := base
	if in.Sequential != nil {
		out.Sequential = *in.Sequential
	}
	if in.CUPED != nil {
		out.CUPED = *in.CUPED
	}
	if in.Winsorize != nil {
		out.Winsorize = *in.Winsorize
	} else if hasKey(raw, "winsorize") {
		out.Winsorize = DefaultWinsorize
	}
	if in.Correction != nil {
		out.Correction = *in.Correction
	}
	if hasKey(raw, "prior") {
		p, err := parsePrior(in.Prior, param+".prior")
		if err != nil {
			return base, err
		}
		out.Prior = p
	}
	return out, out.validate(param)
}

func (a AnalysisOptions) validate(param string) error {
	if w := a.Winsorize; w != 0 && !(w > 0.5 && w < 1) {
		return Refuse("invalid_request", param+".winsorize",
			"%s.winsorize is the percentile money is capped at, greater than 0.5 and less than 1 (default %v), or 0 to turn capping off; got %v.",
			param, DefaultWinsorize, w)
	}
	switch a.Correction {
	case CorrectionNone, CorrectionHolm, CorrectionBenjaminiHochberg:
	default:
		return Refuse("invalid_request", param+".correction",
			"%s.correction is one of holm, benjamini_hochberg, none; got %q.", param, a.Correction)
	}
	return nil
}

// MinPriorStdDev is the surest prior the results apply on a relative
// lift: below it (a lift known to ±0.1 % before any data) the posterior is
// the prior alone and its arithmetic overflows, taking every comparison of
// the test with it, frequentist figures included (stats audit S8).
const MinPriorStdDev = 0.001

func parsePrior(raw json.RawMessage, param string) (*Prior, error) {
	if isNull(raw) {
		return nil, nil
	}
	var p struct {
		Mean   *float64 `json:"mean"`
		StdDev *float64 `json:"stddev"`
	}
	if err := strictUnmarshal(raw, &p); err != nil || p.Mean == nil || p.StdDev == nil {
		return nil, Refuse("invalid_request", param,
			"%s is null (flat prior) or an object {mean, stddev}: a Gaussian prior on the relative lift.", param)
	}
	if math.Abs(*p.Mean) > 10 {
		return nil, Refuse("invalid_request", param+".mean",
			"%s.mean is the expected relative lift, between -10 and 10; got %v.", param, *p.Mean)
	}
	// Not refused below MinPriorStdDev: tests saved with one would refuse
	// every later PATCH (the merged test is validated whole); the results
	// apply it as MinPriorStdDev instead.
	if !(*p.StdDev > 0 && *p.StdDev <= 10) {
		return nil, Refuse("invalid_request", param+".stddev",
			"%s.stddev is greater than 0 and at most 10; got %v.", param, *p.StdDev)
	}
	return &Prior{Mean: *p.Mean, StdDev: *p.StdDev}, nil
}

// parseGuardrails reads a `guardrails` array: null or [] is none.
func parseGuardrails(raw json.RawMessage) ([]Guardrail, error) {
	out := []Guardrail{}
	if isNull(raw) {
		return out, nil
	}
	var in []json.RawMessage
	if json.Unmarshal(raw, &in) != nil {
		return nil, Refuse("invalid_request", "guardrails", "guardrails is an array of {metric, max_harm}.")
	}
	if len(in) > len(GuardrailMetrics) {
		return nil, Refuse("invalid_request", "guardrails", "A test has at most %d guardrails, one per metric; got %d.",
			len(GuardrailMetrics), len(in))
	}
	seen := map[string]bool{}
	for i, e := range in {
		p := fmt.Sprintf("guardrails[%d]", i)
		var g struct {
			Metric  *string  `json:"metric"`
			MaxHarm *float64 `json:"max_harm"`
		}
		if err := strictUnmarshal(e, &g); err != nil {
			// Name the field at fault (guardrails[0].max_harm), as the
			// analysis object's errors do.
			if rel, msg := jsonErrorParam(err); rel != "" {
				return nil, Refuse("invalid_request", joinParam(p, rel), "%s", strings.Replace(msg, rel, joinParam(p, rel), 1))
			}
			return nil, Refuse("invalid_request", p, "%s is an object {metric, max_harm}.", p)
		}
		if g.Metric == nil {
			return nil, Refuse("invalid_request", p+".metric", "%s.metric is required: one of %s.", p, strings.Join(GuardrailMetrics, ", "))
		}
		if !knownGuardrail(*g.Metric) {
			return nil, Refuse("invalid_request", p+".metric", "%s.metric is one of %s; got %q.", p,
				strings.Join(GuardrailMetrics, ", "), *g.Metric)
		}
		if seen[*g.Metric] {
			return nil, Refuse("invalid_request", p+".metric", "The metric %q has a guardrail already.", *g.Metric)
		}
		seen[*g.Metric] = true
		harm := 0.0
		if g.MaxHarm != nil {
			harm = *g.MaxHarm
		}
		if !(harm >= 0 && harm < 1) {
			return nil, Refuse("invalid_request", p+".max_harm",
				"%s.max_harm is the tolerated relative harm, at least 0 and less than 1 (0.02 = 2 %% worse than the control); got %v.", p, harm)
		}
		out = append(out, Guardrail{Metric: *g.Metric, MaxHarm: harm})
	}
	return out, nil
}

func knownGuardrail(m string) bool {
	for _, k := range GuardrailMetrics {
		if k == m {
			return true
		}
	}
	return false
}

// hasKey reports whether the JSON object raw has the key k (even as null).
func hasKey(raw json.RawMessage, k string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(raw), &m) != nil {
		return false
	}
	_, ok := m[k]
	return ok
}

// Normalized is a with the defaults when a is the zero value, which no
// client can write (correction is always named): a test built in code
// without options reads as one created without them.
func (a AnalysisOptions) Normalized() AnalysisOptions {
	if a.Correction == "" {
		return DefaultAnalysis()
	}
	return a
}
