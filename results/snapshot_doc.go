package results

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/stats"
)

// DateRange is an inclusive window of local dates.
type DateRange struct {
	GTE string `json:"gte"`
	LTE string `json:"lte"`
}

// GroupResult is a group of the snapshot: its metrics plus vs_control
// (null for the control).
type GroupResult struct {
	GroupMetrics
	VsControl map[string]*VsControl `json:"vs_control"`
}

// BreakdownRow is a row of a breakdown: a dimension value, a group's metrics
// in that cell, and (in a snapshot) vs_control within the cell.
type BreakdownRow struct {
	DimensionValue string `json:"dimension_value"`
	GroupMetrics
	VsControl map[string]*VsControl `json:"vs_control"` // null on the control's rows, as on its group
}

// SnapshotBreakdown is the snapshot's breakdown by one dimension.
type SnapshotBreakdown struct {
	Dimension string         `json:"dimension"`
	Rows      []BreakdownRow `json:"rows"`
}

// CustomEvent is one custom event name's counts per group.
type CustomEvent struct {
	MetricID string             `json:"metricId"`
	RuleID   string             `json:"ruleId"`
	Name     string             `json:"name"`
	Type     string             `json:"type"`
	Groups   []CustomEventGroup `json:"groups"`
}

// CustomEventGroup is a custom event in one group: units that fired it,
// distinct events, and the share of the group's units that fired it.
type CustomEventGroup struct {
	TestGroupIndex int     `json:"test_group_index"`
	SampleSize     int64   `json:"sample_size"`
	Units          int64   `json:"units"`
	Count          int64   `json:"count"`
	ConversionRate float64 `json:"conversion_rate"`
}

// SnapshotDoc is the stored snapshot (§2.8). isRefreshing is not stored:
// it depends on when the snapshot is read, so the API adds it.
type SnapshotDoc struct {
	Object                string        `json:"object"`
	ExperimentID          string        `json:"experiment_id"`
	ComputedAt            time.Time     `json:"computed_at"`
	TestGroups            []GroupResult `json:"test_groups"`
	Outcome               string        `json:"outcome"`
	WinningTestGroupIndex *int          `json:"winning_test_group_index"`
	SRMStatus             string        `json:"srm_status"`
	Analysis              Analysis      `json:"analysis"`
	// Guardrails are the test's guardrails as this snapshot found them;
	// PauseReason is set when one was breached and the test was paused
	// because of it.
	Guardrails   []GuardrailResult `json:"guardrails"`
	PauseReason  string            `json:"pause_reason,omitempty"`
	CustomEvents []CustomEvent     `json:"customEvents"`
	Warnings     []string          `json:"warnings"`
	FilterStale  bool              `json:"filterStale"`
	DateRange    DateRange         `json:"date_range"`
	Breakdown    SnapshotBreakdown `json:"breakdown"`
}

// Summary is a test's results_summary (`?include=results_summary`): the
// headline of its latest snapshot on the primary metric.
type Summary struct {
	ComputedAt            time.Time      `json:"computed_at"`
	Outcome               string         `json:"outcome"`
	WinningTestGroupIndex *int           `json:"winning_test_group_index"`
	SRMStatus             string         `json:"srm_status"`
	PrimaryMetric         string         `json:"primary_metric"`
	TestGroups            []SummaryGroup `json:"test_groups"`
}

// SummaryGroup is a group's line of the summary.
type SummaryGroup struct {
	TestGroupIndex  int      `json:"test_group_index"`
	SampleSize      int64    `json:"sample_size"`
	Lift            *float64 `json:"lift"`
	ProbBeatControl *float64 `json:"prob_beat_control"`
}

// ComputeSnapshot computes a test's snapshot at now without storing it:
// the whole run, visitors basis, every group with vs_control, custom
// events, and a breakdown by device.
func (s *Service) ComputeSnapshot(ctx context.Context, shop *experiment.Shop, t *experiment.Test, now time.Time, final bool) (*Snapshot, error) {
	window := Window(shop, t, now)
	// One query gives the device breakdown, and the totals are the sums of
	// its cells (sums over units add up).
	q := MetricsQuery{ShopID: shop.ID, ExperimentID: strconv.FormatInt(t.ID, 10), Timezone: shop.Location().String(),
		From: window.GTE, To: window.LTE, Basis: BasisVisitors, Breakdown: []Dimension{"device"}}
	deviceRows, custom, set, err := s.metricRows(ctx, q, t.Analysis.Normalized())
	if err != nil {
		return nil, err
	}
	doc := SnapshotDoc{Object: "experiment_results", ExperimentID: strconv.FormatInt(t.ID, 10), ComputedAt: now,
		DateRange: window, Warnings: []string{}}
	sums := make([]Sums, len(t.Groups))
	for _, r := range deviceRows {
		if r.TestGroup >= 0 && r.TestGroup < len(sums) {
			sums[r.TestGroup].Add(r.Sums)
		}
	}
	cmp := compare(sums, set)
	doc.Analysis = set.analysis(shop.Currency, &cmp, nil)
	doc.Warnings = append(doc.Warnings, cmp.warnings...)
	for i, g := range sums {
		doc.TestGroups = append(doc.TestGroups, GroupResult{GroupMetrics: groupMetrics(i, g, shop.Currency),
			VsControl: cmp.vsControl(i, shop.Currency)})
	}
	primary := primaryMetric(t)
	doc.Outcome, doc.WinningTestGroupIndex = outcome(cmp, sums, primary)
	doc.SRMStatus = srmStatus(t, sums)
	doc.Warnings = append(doc.Warnings, snapshotWarnings(t, sums, doc.SRMStatus, cmp, primary)...)
	var cells []CUPEDCell
	doc.Breakdown, cells = deviceBreakdown(deviceRows, len(t.Groups), shop.Currency, set)
	if adj := doc.Analysis.CUPEDAdjustment; adj != nil {
		adj.Cells = cells
	}
	doc.CustomEvents = customEvents(custom, sums)
	var reason string
	doc.Guardrails, reason = guardrails(t, sums, cmp, set.opts.Sequential)
	if t.Status == experiment.StatusActive && !final && s.cfg.Pauser != nil {
		doc.PauseReason = reason
	}

	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	summary, err := json.Marshal(summarize(doc, cmp, primary))
	if err != nil {
		return nil, err
	}
	return &Snapshot{ShopID: shop.ID, TestID: t.ID, ComputedAt: now, Final: final, Body: body, Summary: summary,
		PauseReason: doc.PauseReason}, nil
}

// metricRows reads the sums of q (a snapshot's or a custom query's), capped
// at the winsorizing caps of opts, and its custom events. The custom events run alongside
// the caps and sums; each query is mostly single-threaded work.
func (s *Service) metricRows(ctx context.Context, q MetricsQuery, opts experiment.AnalysisOptions) ([]GroupRow, []CustomEventRow, settings, error) {
	var custom []CustomEventRow
	var customErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		custom, customErr = s.cfg.Warehouse.CustomEvents(ctx, q)
	}()
	rows, set, err := s.cappedRows(ctx, q, opts)
	<-done
	if err != nil {
		return nil, nil, settings{}, err
	}
	if customErr != nil {
		return nil, nil, settings{}, customErr
	}
	return rows, custom, set, nil
}

// cappedRows computes the caps of money metrics (opts.Winsorize, by default
// stats.DefaultWinsorPercentile, among converters, pooled over the groups)
// and then the sums of q with capped values, so one whale order cannot
// decide a test. Winsorize 0 reads the raw sums only. When opts ask for
// CUPED it then reads the units' pre-exposure covariates (capped alike).
func (s *Service) cappedRows(ctx context.Context, q MetricsQuery, opts experiment.AnalysisOptions) ([]GroupRow, settings, error) {
	set := settings{opts: opts}
	if cw, ok := s.cfg.Warehouse.(CappedMetrics); ok && opts.Winsorize > 0 && !opts.CUPED {
		rows, caps, err := cw.GroupMetricsCapped(ctx, q, opts.Winsorize)
		if caps.Revenue > 0 || caps.Profit > 0 {
			set.caps = &caps
		}
		return rows, set, err
	}
	if opts.Winsorize > 0 {
		caps, err := s.cfg.Warehouse.WinsorCaps(ctx, q, opts.Winsorize)
		if err != nil {
			return nil, settings{}, err
		}
		if caps.Revenue > 0 || caps.Profit > 0 {
			set.caps, q.Caps = &caps, &caps
		}
	}
	rows, cuped, err := s.sumsAndCovariates(ctx, q, opts.CUPED)
	set.cuped = cuped
	return rows, set, err
}

// deviceBreakdown is every device × group with its metrics and its
// vs_control against the control of the same device, and how CUPED shaped
// each device's comparisons (each with its own θ).
func deviceBreakdown(rows []GroupRow, groups int, currency string, set settings) (SnapshotBreakdown, []CUPEDCell) {
	out := SnapshotBreakdown{Dimension: "device", Rows: []BreakdownRow{}}
	var report []CUPEDCell
	keys, cells := byKey(rows)
	for _, k := range keys {
		cellSums := sumsByGroup(cells[k], groups)
		cellSet := set.forCell(k)
		cellCmp := compare(cellSums, cellSet)
		if set.opts.CUPED && set.cuped.reason == "" {
			report = append(report, cellSet.cupedCell(k, cellCmp))
		}
		for i, s := range cellSums {
			out.Rows = append(out.Rows, BreakdownRow{DimensionValue: k,
				GroupMetrics: groupMetrics(i, s, currency), VsControl: cellCmp.vsControl(i, currency)})
		}
	}
	return out, report
}

// srmStatus checks the groups' visitors against the configured splits.
func srmStatus(t *experiment.Test, sums []Sums) string {
	counts := make([]int64, len(sums))
	weights := make([]float64, len(sums))
	for i, s := range sums {
		counts[i] = s.N
		if g := t.Group(i); g != nil {
			weights[i] = float64(g.Split)
		}
	}
	srm, err := stats.CheckSRM(counts, weights)
	if err != nil {
		return string(stats.SRMInsufficientData)
	}
	return string(srm.Status)
}

func snapshotWarnings(t *experiment.Test, sums []Sums, srm string, cmp comparison, primary string) []string {
	var out []string
	if srm == string(stats.SRMMismatch) {
		out = append(out, "Sample ratio mismatch: the groups' visitor counts differ from the configured splits more than chance allows; check assignment and tracking before trusting these results.")
	}
	for i, s := range sums {
		if s.N < MinSampleSize {
			name := strconv.Itoa(i)
			if g := t.Group(i); g != nil {
				name = g.Name
			}
			out = append(out, fmt.Sprintf("Group %s has %d visitors; at least %d per group are needed before a winner is named.", name, s.N, MinSampleSize))
		}
	}
	if a := cmp.analyses[primary]; a != nil {
		for _, c := range a.Comparisons {
			if !c.Computable {
				out = append(out, fmt.Sprintf("%s, group %d: %s", primary, c.TestGroupIndex, c.Message))
			}
		}
	}
	return out
}

func customEvents(rows []CustomEventRow, sums []Sums) []CustomEvent {
	out := []CustomEvent{}
	index := map[string]int{}
	for _, r := range rows {
		i, ok := index[r.Name]
		if !ok {
			i = len(out)
			index[r.Name] = i
			ev := CustomEvent{MetricID: "custom_event:" + r.Name, RuleID: r.Name, Name: r.Name, Type: "custom_event"}
			for g, s := range sums {
				ev.Groups = append(ev.Groups, CustomEventGroup{TestGroupIndex: g, SampleSize: s.N})
			}
			out = append(out, ev)
		}
		if r.TestGroup >= 0 && r.TestGroup < len(out[i].Groups) {
			g := &out[i].Groups[r.TestGroup]
			g.Units, g.Count, g.ConversionRate = r.Units, r.Events, ratio(float64(r.Units), float64(g.SampleSize))
		}
	}
	return out
}

func summarize(doc SnapshotDoc, cmp comparison, primary string) Summary {
	s := Summary{ComputedAt: doc.ComputedAt, Outcome: doc.Outcome, WinningTestGroupIndex: doc.WinningTestGroupIndex,
		SRMStatus: doc.SRMStatus, PrimaryMetric: primary}
	for _, g := range doc.TestGroups {
		line := SummaryGroup{TestGroupIndex: g.TestGroupIndex, SampleSize: g.SampleSize}
		if v := g.VsControl[primary]; v != nil && v.Bayesian != nil {
			p := v.Bayesian.ProbBeatControl
			line.Lift, line.ProbBeatControl = v.Lift, &p
		}
		s.TestGroups = append(s.TestGroups, line)
	}
	return s
}
