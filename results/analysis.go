package results

import (
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/stats"
)

// Analysis is the `analysis` object of a snapshot and a custom query: the
// levels of the intervals and every option the comparisons applied, so a
// reader can tell a winsorized or corrected result from a plain one.
type Analysis struct {
	CredibleIntervalLevel float64 `json:"credible_interval_level"`
	ConfidenceLevel       float64 `json:"confidence_level"`
	// RelativeMethod is how the relative lift is tested (stats.RelativeMethod).
	RelativeMethod string `json:"relative_method"`
	// Winsorization is the cap of each money metric; null when nothing was
	// capped (no converter yet).
	Winsorization *WinsorizationApplied `json:"winsorization"`
	// Correction is the multiple-comparison adjustment across variants:
	// "none", "holm" or "benjamini_hochberg".
	Correction string `json:"correction"`
	Sequential bool   `json:"sequential"`
	CUPED      bool   `json:"cuped"`
	// CUPEDAdjustment is how CUPED shaped the figures (each adjusted
	// metric's covariate and θ); absent when it did not.
	CUPEDAdjustment *CUPEDApplied `json:"cuped_adjustment,omitempty"`
	Prior           *stats.Prior  `json:"prior"`
	// Requested are the options the test (or the custom query) asked for;
	// Applied names those that shaped these figures ("sequential",
	// "cuped", "winsorize", "correction", "prior"), and NotApplied says
	// why a requested one did not.
	Requested  experiment.AnalysisOptions `json:"requested"`
	Applied    []string                   `json:"applied"`
	NotApplied []NotApplied               `json:"not_applied"`
}

// NotApplied is a requested option that did not shape the figures, and why.
type NotApplied struct {
	Option string `json:"option"`
	Reason string `json:"reason"`
}

// WinsorizationApplied is the percentile the caps were taken at (among
// converters, pooled over the groups) and the cap of per-visitor values of
// each money metric, in the shop's currency.
type WinsorizationApplied struct {
	Percentile float64                     `json:"percentile"`
	Caps       map[string]experiment.Money `json:"caps"`
}

// settings are the analysis choices of one computation: the options asked
// for, the caps the warehouse returned (nil: no winsorizing) and CUPED's
// covariates.
type settings struct {
	opts  experiment.AnalysisOptions
	caps  *Caps
	cuped cupedState
}

// capOf is the cap of a compared metric, 0 when it is not capped: money
// metrics only, and only when some unit had a positive value.
func (s settings) capOf(m metric) float64 {
	if s.caps == nil || !m.money {
		return 0
	}
	if m.name == "profit_per_visitor" {
		return s.caps.Profit
	}
	return s.caps.Revenue
}

// request is the stats request of metric m over sums, with the options the
// settings apply to it.
func (s settings) request(m metric, sums []Sums) stats.AnalysisRequest {
	req := stats.AnalysisRequest{MetricKind: m.kind, LowerIsBetter: m.lowerIsBetter, NonNegative: m.nonNegative, Options: s.statsOptions()}
	limit := s.capOf(m)
	if limit > 0 {
		req.Options.Winsorization = &stats.Winsorization{Percentile: s.caps.Percentile, Cap: limit}
	}
	for _, g := range sums {
		gs := m.stats(g)
		if limit > 0 {
			gs.Winsorized = m.capped(g)
		}
		req.Groups = append(req.Groups, gs)
	}
	s.cupedRequest(&req, m, sums)
	return req
}

// statsOptions are the options of every metric's request; winsorizing is
// per metric (request).
func (s settings) statsOptions() stats.Options { return statsOptions(s.opts) }

// statsOptions are the engine's options for a test's analysis options, as
// every surface applies them (snapshot, query, the panel's analytics).
func statsOptions(opts experiment.AnalysisOptions) stats.Options {
	var o stats.Options
	if opts.Sequential {
		o.Sequential = &stats.Sequential{TuningParameter: stats.DefaultTuningParameter}
	}
	if p := opts.Prior; p != nil {
		o.Prior = &stats.Prior{Mean: p.Mean, StdDev: max(p.StdDev, experiment.MinPriorStdDev)}
	}
	if opts.Correction != experiment.CorrectionNone {
		o.Correction = stats.Correction(opts.Correction)
	}
	return o
}

// analysis is the wire form of the settings; c is the comparison of the
// whole test (nil when nothing was compared) and cells the CUPED report of
// a breakdown's cells, whose θs CUPED reports.
func (s settings) analysis(currency string, c *comparison, cells []CUPEDCell) Analysis {
	o := s.statsOptions()
	a := Analysis{CredibleIntervalLevel: stats.DefaultLevel, ConfidenceLevel: stats.DefaultLevel,
		RelativeMethod: string(stats.RelativeFieller), Correction: string(s.opts.Correction),
		Sequential: o.Sequential != nil, Prior: o.Prior, Requested: s.opts, Applied: []string{}, NotApplied: []NotApplied{}}
	// The options that shape comparisons shaped nothing where none was
	// made: a breakdown query reports values only, and a test without
	// data compares nothing yet. applied must not claim them then.
	comparing := ""
	switch {
	case c == nil:
		comparing = "A breakdown reports each cell's values without comparisons; the option shapes the comparisons of the whole test."
	case !c.anyComputable():
		comparing = "No comparison could be computed yet (each metric's vs_control says why)."
	}
	shapes := func(option string) {
		if comparing == "" {
			a.Applied = append(a.Applied, option)
			return
		}
		a.NotApplied = append(a.NotApplied, NotApplied{Option: option, Reason: comparing})
		// The flags say what shaped the figures (requested says what was
		// asked): an option that shaped nothing reads as off.
		switch option {
		case "sequential":
			a.Sequential = false
		case "correction":
			a.Correction = string(experiment.CorrectionNone)
		case "prior":
			a.Prior = nil
		}
	}
	if a.Sequential {
		shapes("sequential")
	}
	caps := map[string]experiment.Money{}
	for _, m := range compared {
		if limit := s.capOf(m); limit > 0 {
			caps[m.name] = formatMoney(limit, currency)
		}
	}
	switch {
	case len(caps) > 0:
		a.Winsorization = &WinsorizationApplied{Percentile: s.caps.Percentile, Caps: caps}
		a.Applied = append(a.Applied, "winsorize")
	case s.opts.Winsorize > 0:
		a.NotApplied = append(a.NotApplied, NotApplied{Option: "winsorize",
			Reason: "No visitor has revenue or profit yet, so there is nothing to cap."})
	}
	if o.Correction != "" {
		shapes("correction")
	}
	if o.Prior != nil {
		shapes("prior")
	}
	a.noteCUPED(s, c, cells)
	return a
}
