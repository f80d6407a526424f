package results

import "maps"

// CUPEDApplied is how CUPED shaped the figures: the lookback, how many
// units had pre-exposure activity, each adjusted metric's covariate and θ
// (stats' cuped_theta), the metrics left unadjusted and why, and for a
// breakdown (a query's, the snapshot's devices) the same per cell, each
// cell's θ fitted on its own units.
type CUPEDApplied struct {
	LookbackDays     int                    `json:"lookback_days"`
	UnitsWithHistory int64                  `json:"units_with_history"`
	Metrics          map[string]CUPEDMetric `json:"metrics"`
	NotAdjusted      map[string]string      `json:"not_adjusted,omitempty"`
	Cells            []CUPEDCell            `json:"cells,omitempty"`
}

// CUPEDMetric is one adjusted metric's covariate, the θ applied and, per
// variant, how much narrower the difference's confidence interval is than
// without CUPED on the same units.
type CUPEDMetric struct {
	Covariate          string         `json:"covariate"`
	Theta              float64        `json:"cuped_theta"`
	IntervalWidthRatio []VariantRatio `json:"interval_width_ratio"`
}

// VariantRatio is a variant's adjusted interval width over the unadjusted.
type VariantRatio struct {
	TestGroupIndex int     `json:"test_group_index"`
	Ratio          float64 `json:"ratio"`
}

// CUPEDCell is CUPED in one breakdown cell: its units with history and its
// adjusted metrics, or why none was.
type CUPEDCell struct {
	DimensionValue   string                 `json:"dimension_value"`
	UnitsWithHistory int64                  `json:"units_with_history"`
	Metrics          map[string]CUPEDMetric `json:"metrics"`
	Reason           string                 `json:"reason,omitempty"`
}

// cupedCells compares every cell of rows with its own covariates, for
// the CUPED report of a query with a breakdown (whose rows carry no
// comparison, contract §2.9).
func cupedCells(rows []GroupRow, groups int, set settings) []CUPEDCell {
	keys, cells := byKey(rows)
	out := []CUPEDCell{}
	for _, k := range keys {
		cs := set.forCell(k)
		out = append(out, cs.cupedCell(k, compare(sumsByGroup(cells[k], groups), cs)))
	}
	return out
}

// cupedCell is the CUPED report of cell key, whose comparison is c under
// s (the cell's settings).
func (s settings) cupedCell(key string, c comparison) CUPEDCell {
	cell := CUPEDCell{DimensionValue: key, Metrics: c.cuped}
	for _, r := range s.cuped.rows {
		cell.UnitsWithHistory += r.WithHistory
	}
	if len(cell.Metrics) == 0 {
		cell.Metrics = map[string]CUPEDMetric{}
		cell.Reason = cupedCellEmpty
	}
	return cell
}

// noteCUPED records in a whether CUPED shaped the comparisons of c (the
// whole test) or of cells (a breakdown's), with each adjusted metric's θ.
// notAdjusted is why each compared metric CUPED left alone was: the
// browsing metrics always, and a metric it could adjust whose covariate
// predicted nothing in these units (θ 0) or that the engine could not
// adjust (the warnings say why).
func notAdjusted(adjusted map[string]CUPEDMetric) map[string]string {
	out := maps.Clone(cupedNotAdjusted)
	for name, covariate := range cupedCovariates {
		if _, ok := adjusted[name]; !ok {
			out[name] = "Its covariate (" + covariate + ") predicted nothing in these units (θ 0: no visitor had it, or it did not vary), " +
				"or the comparison could not be computed; it is compared unadjusted."
		}
	}
	return out
}

func (a *Analysis) noteCUPED(set settings, c *comparison, cells []CUPEDCell) {
	if !set.opts.CUPED {
		return
	}
	reason := set.cuped.reason
	applied := &CUPEDApplied{LookbackDays: CUPEDLookbackDays, Metrics: map[string]CUPEDMetric{},
		NotAdjusted: cupedNotAdjusted, Cells: cells}
	if reason == "" {
		for _, r := range set.cuped.rows {
			applied.UnitsWithHistory += r.WithHistory
		}
		adjusted := 0
		if c != nil {
			applied.Metrics = c.cuped
			adjusted = len(c.cuped)
			applied.NotAdjusted = notAdjusted(c.cuped)
		}
		for _, cell := range cells {
			adjusted += len(cell.Metrics)
		}
		if adjusted == 0 {
			reason = cupedRefused
		}
	}
	if reason != "" {
		a.NotApplied = append(a.NotApplied, NotApplied{Option: "cuped", Reason: reason})
		return
	}
	a.CUPED, a.CUPEDAdjustment = true, applied
	// "cuped" follows "sequential" in the documented order of applied.
	at := 0
	if len(a.Applied) > 0 && a.Applied[0] == "sequential" {
		at = 1
	}
	a.Applied = append(a.Applied[:at], append([]string{"cuped"}, a.Applied[at:]...)...)
}
