package results

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/stats"
)

// TimeseriesReport is part 2.4's timeseries answer: for each local date of
// the window, the confidence (1 − p) that the first variant differs from
// the control on everything up to and including that date.
type TimeseriesReport struct {
	TimeSeriesData      []TimeseriesPoint `json:"timeSeriesData"`
	OverallSignificance float64           `json:"overallSignificance"`
}

// TimeseriesPoint is one date's cumulative significance (0 to 1; 0 when
// nothing can be compared yet).
type TimeseriesPoint struct {
	Date         string  `json:"date"`
	Significance float64 `json:"significance"`
}

// maxTimeseriesDays bounds the points of one answer (about three years).
const maxTimeseriesDays = 1100

// Timeseries answers the significance timeseries of a shop's test. type
// "sales" compares revenue per visitor, otherwise the conversion rate;
// totalViews must hold one non-negative count per group (the panel's
// cumulative visitors), but the comparison uses the warehouse's counts so
// it agrees with every other view. Errors as Report.
func (a *Analytics) Timeseries(ctx context.Context, shop *experiment.Shop, testID int64, req TimeseriesRequest) (json.RawMessage, error) {
	t, err := a.cfg.Tests.FindTestByID(ctx, shop.ID, testID)
	if err != nil {
		return nil, err
	}
	if err := checkTimeseries(t, req); err != nil {
		return nil, err
	}
	if err := plottable(shop, req); err != nil {
		return nil, err
	}
	s, err := scopeOf(shop, t, AnalyticsRequest{DateStart: req.DateStart, DateFinish: req.DateFinish})
	if err != nil {
		return nil, err
	}
	days, err := datesOf(s.q.From, s.q.To)
	if err != nil {
		return nil, err
	}
	// A day after the shop's today has nothing measured yet: a point for
	// it carried today's significance forward as if it had been (analytics
	// audit A9). The day the series ends is in the cache key, so a cached
	// answer does not outlive midnight.
	today := a.cfg.Now().In(shop.Location()).Format(time.DateOnly)
	days = slices.DeleteFunc(days, func(d string) bool { return d > today })
	key := struct {
		AnalyticsRequest
		Type, Through string
	}{AnalyticsRequest{DateStart: s.q.From, DateFinish: s.q.To}, req.Type, today}
	return a.cachedKey(ctx, shop, t, ViewTimeseries, false, key, func() (any, error) {
		return a.timeseries(ctx, t, s.q, days, req.Type == "sales")
	})
}

func checkTimeseries(t *experiment.Test, req TimeseriesRequest) error {
	if req.Type != "" && req.Type != "sales" {
		return invalid("type is \"sales\" or omitted (conversion rate); got %q.", req.Type)
	}
	if req.TotalViews == nil {
		return invalid("totalViews is required: an array of cumulative visitor counts, one per test group.")
	}
	if len(req.TotalViews) != len(t.Groups) {
		return invalid("totalViews must hold one count per test group (%d); got %d.", len(t.Groups), len(req.TotalViews))
	}
	for _, v := range req.TotalViews {
		if v < 0 {
			return invalid("totalViews holds visitor counts, which are not negative; got %d.", v)
		}
	}
	return nil
}

// plottable refuses a window with dates the warehouse cannot hold. Other
// views clamp such a window (it means "everything"), but a timeseries has a
// point per date, and a clamped window would plot dates nobody asked for.
func plottable(shop *experiment.Shop, req TimeseriesRequest) error {
	for _, f := range []struct{ name, v string }{{"dateStart", req.DateStart}, {"dateFinish", req.DateFinish}} {
		d, err := parseLocalDate(f.name, f.v, shop.Location())
		if err != nil {
			return err
		}
		if day := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC); day.Before(firstDate) || day.After(lastDate) {
			return invalid("A timeseries plots dates from %s to %s; %s is %s.",
				firstDate.Format(time.DateOnly), lastDate.Format(time.DateOnly), f.name, d.Format(time.DateOnly))
		}
	}
	return nil
}

// datesOf lists every date from from to to inclusive.
func datesOf(from, to string) ([]string, error) {
	f, err1 := time.Parse(time.DateOnly, from)
	l, err2 := time.Parse(time.DateOnly, to)
	if err1 != nil || err2 != nil {
		return nil, invalid("dateStart and dateFinish must be dates.")
	}
	if l.Sub(f) > maxTimeseriesDays*24*time.Hour {
		return nil, invalid("A timeseries spans at most %d days.", maxTimeseriesDays)
	}
	var out []string
	for d := f; !d.After(l); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out, nil
}

// timeseries reads the window's sums by assignment date in one query and
// compares their running totals day by day.
func (a *Analytics) timeseries(ctx context.Context, t *experiment.Test, q MetricsQuery, days []string, sales bool) (*TimeseriesReport, error) {
	q.Breakdown = []Dimension{"date"}
	rows, err := a.cfg.Warehouse.GroupMetrics(ctx, q)
	if err != nil {
		return nil, err
	}
	byDate := map[string][]Sums{}
	for _, r := range rows {
		if r.TestGroup < 0 || r.TestGroup >= len(t.Groups) {
			continue
		}
		if byDate[r.Key] == nil {
			byDate[r.Key] = make([]Sums, len(t.Groups))
		}
		byDate[r.Key][r.TestGroup].Add(r.Sums)
	}
	running := make([]Sums, len(t.Groups))
	out := &TimeseriesReport{TimeSeriesData: make([]TimeseriesPoint, 0, len(days))}
	for _, d := range days {
		for g, s := range byDate[d] {
			running[g].Add(s)
		}
		out.TimeSeriesData = append(out.TimeSeriesData, TimeseriesPoint{Date: d, Significance: confidence(running, sales, t.Analysis)})
	}
	out.OverallSignificance = confidence(running, sales, t.Analysis)
	return out, nil
}

// confidence is 1 − p of the first variant against the control, by stats:
// conversion rate, or revenue per visitor for sales; 0 when not computable.
// A sequential test's p is the always-valid one: a day-by-day series is
// exactly the peeking it guards against.
func confidence(sums []Sums, sales bool, opts experiment.AnalysisOptions) float64 {
	if len(sums) < 2 {
		return 0
	}
	m := comparedMetric("conversion_rate")
	if sales {
		m = comparedMetric("revenue_per_visitor")
	}
	req := stats.AnalysisRequest{MetricKind: m.kind, Options: statsOptions(opts)}
	for _, g := range sums {
		req.Groups = append(req.Groups, m.stats(g))
	}
	a, err := stats.Analyze(req)
	if err != nil {
		return 0
	}
	for _, c := range a.Comparisons {
		if c.TestGroupIndex == 1 && c.Computable && c.Frequentist != nil {
			if p := c.Frequentist.AdjustedDifferencePValue; p != nil {
				return 1 - *p // the same p as the panel's significance under a correction
			}
			return 1 - c.Frequentist.DifferencePValue
		}
	}
	return 0
}
