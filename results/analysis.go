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
	Correction string       `json:"correction"`
	Sequential bool         `json:"sequential"`
	CUPED      bool         `json:"cuped"`
	Prior      *stats.Prior `json:"prior"`
}

// WinsorizationApplied is the percentile the caps were taken at (among
// converters, pooled over the groups) and the cap of per-visitor values of
// each money metric, in the shop's currency.
type WinsorizationApplied struct {
	Percentile float64                     `json:"percentile"`
	Caps       map[string]experiment.Money `json:"caps"`
}

// settings are the analysis choices of one computation: the caps the
// warehouse returned (nil: no winsorizing).
type settings struct {
	caps *Caps
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
	req := stats.AnalysisRequest{MetricKind: m.kind, LowerIsBetter: m.lowerIsBetter}
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
	return req
}

// analysis is the wire form of the settings.
func (s settings) analysis(currency string) Analysis {
	a := Analysis{CredibleIntervalLevel: stats.DefaultLevel, ConfidenceLevel: stats.DefaultLevel,
		RelativeMethod: string(stats.RelativeFieller), Correction: "none"}
	caps := map[string]experiment.Money{}
	for _, m := range compared {
		if limit := s.capOf(m); limit > 0 {
			caps[m.name] = formatMoney(limit, currency)
		}
	}
	if len(caps) > 0 {
		a.Winsorization = &WinsorizationApplied{Percentile: s.caps.Percentile, Caps: caps}
	}
	return a
}
