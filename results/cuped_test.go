package results_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
)

// historyUnits are n visitors a group. Most bought in the week before the
// test, and what such a visitor spends in the test follows what it spent
// before (the variant's spend is lift higher), so pre-exposure revenue
// explains most of the in-test revenue's variance; a few new visitors buy
// too, and some returning ones do not, so neither metric is a copy of its
// covariate.
func historyUnits(n int, lift float64, history bool) []plantedUnit {
	var out []plantedUnit
	for g := 0; g < 2; g++ {
		for i := 0; i < n; i++ {
			u := plantedUnit{group: g, device: "desktop", at: start.Add(time.Duration(len(out)) * time.Second)}
			h := (i*37 + g*11) % 100
			switch {
			case h < 70:
				pre := float64(10 + 4*h)
				if history {
					u.preOrders, u.preRevenue = 1+h%2, pre
				}
				if i%5 != 0 {
					u.orders, u.revenue = 1, pre*(1+lift*float64(g))+float64((i*13)%11-5)
				}
			case h >= 90:
				u.orders, u.revenue = 1, 30
			}
			out = append(out, u)
		}
	}
	return out
}

// snapshotWith computes a snapshot of tt with opts and decodes it.
func snapshotWith(t *testing.T, b *bundle, tt *experiment.Test, opts experiment.AnalysisOptions) results.SnapshotDoc {
	t.Helper()
	c := *tt
	c.Analysis = opts
	doc, _ := b.snapshotDoc(t, &c)
	return doc
}

func width(i results.Interval) float64 { return i.Upper - i.Lower }

// TestCUPED: with pre-exposure history correlated with in-test revenue, a
// snapshot that asks for CUPED applies it, reports θ, and its intervals are
// narrower than without CUPED on the same data; without any history it
// says why it did not apply it.
func TestCUPED(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		winsorize float64
		history   bool
	}{
		{"Raw", 0, true},
		{"Winsorized", experiment.DefaultWinsorize, true},
		{"NoHistory", experiment.DefaultWinsorize, false},
	}
	for _, be := range backends {
		for _, c := range cases {
			t.Run(be.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				b := be.setup(t)
				b.clock.Set(start.Add(3 * time.Hour))
				tt := b.test(t, experiment.StatusActive)
				units := historyUnits(300, 0.05, c.history)
				b.plant(t, tt, units)
				plainOpts := experiment.AnalysisOptions{Winsorize: c.winsorize, Correction: experiment.CorrectionNone}
				cupedOpts := plainOpts
				cupedOpts.CUPED = true
				plain, adjusted := snapshotWith(t, b, tt, plainOpts), snapshotWith(t, b, tt, cupedOpts)
				a := adjusted.Analysis

				if !c.history {
					if a.CUPED || slices.Contains(a.Applied, "cuped") || len(a.NotApplied) != 1 ||
						a.NotApplied[0].Option != "cuped" || !strings.Contains(a.NotApplied[0].Reason, "no pre-exposure data") {
						t.Fatalf("analysis %s: want cuped not applied for lack of pre-exposure data", mustJSON(a))
					}
					return
				}
				if !a.CUPED || !slices.Contains(a.Applied, "cuped") || len(a.NotApplied) != 0 || a.CUPEDAdjustment == nil {
					t.Fatalf("analysis %s: want cuped applied", mustJSON(a))
				}
				var withHistory int64
				for _, u := range units {
					if u.preOrders > 0 {
						withHistory++
					}
				}
				if adj := a.CUPEDAdjustment; adj.UnitsWithHistory != withHistory || adj.LookbackDays != results.CUPEDLookbackDays {
					t.Errorf("cuped_adjustment %s: want %d units with history", mustJSON(adj), withHistory)
				}
				for _, m := range []struct {
					name     string
					minTheta float64
				}{
					// In-test spend ≈ pre-exposure spend: θ near 1.
					{"revenue_per_visitor", 0.5},
					{"profit_per_visitor", 0.5},
					{"conversion_rate", 0},
				} {
					got, ok := a.CUPEDAdjustment.Metrics[m.name]
					if !ok || got.Theta <= m.minTheta {
						t.Errorf("%s: cuped %+v (present %v), want θ above %v", m.name, got, ok, m.minTheta)
						continue
					}
					p, q := plain.TestGroups[1].VsControl[m.name], adjusted.TestGroups[1].VsControl[m.name]
					if p.Frequentist == nil || q.Frequentist == nil {
						t.Fatalf("%s: not compared: %+v / %+v", m.name, p, q)
					}
					wp, wq := width(p.Frequentist.ConfidenceInterval), width(q.Frequentist.ConfidenceInterval)
					if !(wq < wp) {
						t.Errorf("%s: CUPED interval %.4f wide, not narrower than %.4f", m.name, wq, wp)
					}
					t.Logf("%s: θ %.3f, interval %.4f → %.4f", m.name, got.Theta, wp, wq)
				}
				// Average order value is adjusted with the lookback's revenue
				// per order; browsing metrics are compared as before, and
				// the report says why.
				if got, ok := a.CUPEDAdjustment.Metrics["average_order_value"]; !ok || got.Theta == 0 {
					t.Errorf("average_order_value: cuped %+v (present %v), want a θ", got, ok)
				}
				for _, m := range []string{"click_through_rate", "bounce_rate", "avg_staying_time"} {
					if p, q := plain.TestGroups[1].VsControl[m], adjusted.TestGroups[1].VsControl[m]; mustJSON(p) != mustJSON(q) {
						t.Errorf("%s changed under CUPED: %s → %s", m, mustJSON(p), mustJSON(q))
					}
					if a.CUPEDAdjustment.NotAdjusted[m] == "" {
						t.Errorf("not_adjusted %v: no reason for %s", a.CUPEDAdjustment.NotAdjusted, m)
					}
				}
				// The device breakdown's cells are adjusted with their own
				// covariates: one device here, so its θ is the whole test's.
				if cells := a.CUPEDAdjustment.Cells; len(cells) != 1 || cells[0].DimensionValue != "desktop" ||
					cells[0].Metrics["revenue_per_visitor"].Theta != a.CUPEDAdjustment.Metrics["revenue_per_visitor"].Theta {
					t.Errorf("cells %s: want desktop with the whole test's θ", mustJSON(cells))
				}
				for _, row := range adjusted.Breakdown.Rows {
					if row.TestGroupIndex != 1 {
						continue
					}
					p := plain.TestGroups[1].VsControl["revenue_per_visitor"].Frequentist
					q := row.VsControl["revenue_per_visitor"].Frequentist
					if !(width(q.ConfidenceInterval) < width(p.ConfidenceInterval)) {
						t.Errorf("device %s: CUPED interval %v not narrower than the plain %v", row.DimensionValue, q.ConfidenceInterval, p.ConfidenceInterval)
					}
				}
			})
		}
	}
}

// TestCUPEDQuery: a custom query that asks for CUPED applies it over its
// units, on either basis; with a breakdown it applies it in every cell
// with the cell's own θ, and the cell's adjusted interval is narrower than
// the unadjusted one on the same units.
func TestCUPEDQuery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  results.QueryRequest
	}{
		{"Visitors", results.QueryRequest{Analysis: json.RawMessage(`{"cuped":true,"winsorize":0}`)}},
		{"Sessions", results.QueryRequest{SampleBasis: ptr("sessions"), Analysis: json.RawMessage(`{"cuped":true}`)}},
		{"Breakdown", results.QueryRequest{Breakdown: []string{"device"}, Analysis: json.RawMessage(`{"cuped":true}`)}},
	}
	for _, be := range backends {
		for _, c := range cases {
			t.Run(be.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				b := be.setup(t)
				b.clock.Set(start.Add(3 * time.Hour))
				tt := b.test(t, experiment.StatusActive)
				units := historyUnits(200, 0.05, true)
				// Every third visitor on mobile: two cells, each with history.
				for i := range units {
					if i%3 == 0 {
						units[i].device = "mobile"
					}
				}
				b.plant(t, tt, units)
				doc := b.query(t, tt.ID, c.req)
				a := doc.Analysis
				if !slices.Contains(a.Applied, "cuped") || !a.CUPED || len(a.NotApplied) != 0 {
					t.Fatalf("analysis %s: want cuped applied", mustJSON(a))
				}
				if c.req.Breakdown == nil {
					if a.CUPEDAdjustment.Metrics["revenue_per_visitor"].Theta <= 0.5 {
						t.Errorf("cuped_adjustment %s: want θ of revenue_per_visitor near 1", mustJSON(a.CUPEDAdjustment))
					}
					return
				}
				checkCUPEDCells(t, a.CUPEDAdjustment, units)
			})
		}
	}
}

// checkCUPEDCells holds that each device cell reports its own units with
// history, θ near 1 for revenue per visitor, and an adjusted interval
// narrower than the unadjusted one.
func checkCUPEDCells(t *testing.T, adj *results.CUPEDApplied, units []plantedUnit) {
	t.Helper()
	history := map[string]int64{}
	for _, u := range units {
		if u.preOrders > 0 {
			history[u.device]++
		}
	}
	if len(adj.Cells) != 2 {
		t.Fatalf("cuped_adjustment %s: want the cells desktop and mobile", mustJSON(adj))
	}
	thetas := map[string]float64{}
	for _, cell := range adj.Cells {
		m, ok := cell.Metrics["revenue_per_visitor"]
		if !ok || m.Theta <= 0.5 || cell.UnitsWithHistory != history[cell.DimensionValue] || len(m.IntervalWidthRatio) != 1 {
			t.Errorf("cell %s: want θ near 1, %d units with history and one variant's ratio", mustJSON(cell), history[cell.DimensionValue])
			continue
		}
		if r := m.IntervalWidthRatio[0]; r.TestGroupIndex != 1 || !(r.Ratio < 1) {
			t.Errorf("cell %s: adjusted interval not narrower than the unadjusted (%+v)", cell.DimensionValue, r)
		}
		thetas[cell.DimensionValue] = m.Theta
		t.Logf("%s: θ %.3f, interval width ratio %.3f", cell.DimensionValue, m.Theta, m.IntervalWidthRatio[0].Ratio)
	}
	if thetas["desktop"] == thetas["mobile"] {
		t.Errorf("θ %v: the cells share one θ, want each its own", thetas)
	}
}

func ptr(s string) *string { return &s }

// TestCUPEDThetaZeroIsNotAdjusted: visitors with pre-exposure orders of no
// revenue give conversion a covariate but revenue none (identically 0):
// revenue is then not reported as adjusted with θ 0, but under
// not_adjusted with the reason (stats audit S10).
func TestCUPEDThetaZeroIsNotAdjusted(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start.Add(3*time.Hour), func(t *testing.T, b *bundle) {
		tt := b.test(t, experiment.StatusActive)
		units := historyUnits(300, 0, true)
		for i := range units {
			units[i].preRevenue = 0
		}
		b.plant(t, tt, units)
		doc := snapshotWith(t, b, tt, experiment.AnalysisOptions{CUPED: true, Winsorize: 0, Correction: experiment.CorrectionNone})
		adj := doc.Analysis.CUPEDAdjustment
		if adj == nil {
			t.Fatalf("CUPED not applied at all: %s", mustJSON(doc.Analysis))
		}
		if _, ok := adj.Metrics["conversion_rate"]; !ok {
			t.Errorf("conversion_rate, whose covariate varies, is not adjusted: %s", mustJSON(adj))
		}
		for _, m := range []string{"revenue_per_visitor", "profit_per_visitor"} {
			if got, ok := adj.Metrics[m]; ok {
				t.Errorf("%s reported adjusted (θ %v) with a covariate of 0 for everyone", m, got.Theta)
			}
			if adj.NotAdjusted[m] == "" {
				t.Errorf("%s has no not_adjusted reason: %s", m, mustJSON(adj.NotAdjusted))
			}
		}
	})
}
