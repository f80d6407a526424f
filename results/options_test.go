package results_test

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/stats"
)

// pauser records the pauses a snapshot asks for.
type pauser struct {
	mu      sync.Mutex
	reasons []string
}

func (p *pauser) PauseForGuardrail(_ context.Context, _, _ int64, reason string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reasons = append(p.reasons, reason)
	return true, nil
}

// converting are n visitors a group; group g converts (one order of 40)
// every every[g]-th visitor.
func converting(n int, every [2]int) []plantedUnit {
	var out []plantedUnit
	for g := 0; g < 2; g++ {
		for i := 0; i < n; i++ {
			u := plantedUnit{group: g, device: "desktop", at: start.Add(time.Duration(i) * time.Second)}
			if i%every[g] == 0 {
				u.orders, u.revenue = 1, 40
			}
			out = append(out, u)
		}
	}
	return out
}

func TestDefaultWinsorizeIsStats(t *testing.T) {
	if experiment.DefaultWinsorize != stats.DefaultWinsorPercentile {
		t.Fatalf("experiment.DefaultWinsorize %v, stats.DefaultWinsorPercentile %v", experiment.DefaultWinsorize, stats.DefaultWinsorPercentile)
	}
	for _, m := range experiment.GuardrailMetrics {
		// Every guardrail metric is one a snapshot compares.
		if !strings.Contains(strings.Join(comparedMetrics(t), ","), m) {
			t.Errorf("guardrail metric %s is not compared by a snapshot", m)
		}
	}
}

// comparedMetrics are the vs_control keys of a computed snapshot.
func comparedMetrics(t *testing.T) []string {
	b := fakeBundle(t)
	tt := b.test(t, experiment.StatusActive)
	b.plant(t, tt, visitors(10))
	b.clock.Set(start.Add(time.Hour))
	doc, _ := b.snapshotDoc(t, tt)
	var out []string
	for k := range doc.TestGroups[1].VsControl {
		out = append(out, k)
	}
	return out
}

// TestGuardrails: a sequential snapshot pauses a test whose variant harms a
// guardrail beyond its tolerance, and only then.
func TestGuardrails(t *testing.T) {
	t.Parallel()
	seq := experiment.AnalysisOptions{Sequential: true, Winsorize: 0.99, Correction: experiment.CorrectionNone}
	fixed := experiment.DefaultAnalysis()
	cases := []struct {
		name      string
		opts      experiment.AnalysisOptions
		n         int
		every     [2]int
		maxHarm   float64
		status    string
		wantPause bool
	}{
		{"Breached", seq, 600, [2]int{3, 10}, 0.02, results.GuardrailBreached, true},
		{"WithinTolerance", seq, 600, [2]int{3, 10}, 0.9, results.GuardrailOK, false},
		{"Improved", seq, 600, [2]int{10, 3}, 0, results.GuardrailOK, false},
		{"NotSequential", fixed, 600, [2]int{3, 10}, 0.02, results.GuardrailNotMonitored, false},
		{"TooFewVisitors", seq, 60, [2]int{3, 10}, 0.02, results.GuardrailInsufficientData, false},
		// No conversion in the control: no variant can be compared, so
		// nothing was checked (review-2 #1: it said ok).
		{"NothingComparable", seq, 600, [2]int{601, 10}, 0.02, results.GuardrailInsufficientData, false},
	}
	for _, be := range backends {
		for _, c := range cases {
			t.Run(be.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				b := be.setup(t)
				svc, p := b.withPauser()
				b.clock.Set(start.Add(3 * time.Hour))
				tt := b.test(t, experiment.StatusActive)
				tt.Analysis, tt.Guardrails = c.opts, []experiment.Guardrail{{Metric: "conversion_rate", MaxHarm: c.maxHarm}}
				b.save(t, tt)
				b.plant(t, tt, converting(c.n, c.every))
				doc := takeSnapshot(t, svc, b, tt)
				if len(doc.Guardrails) != 1 || doc.Guardrails[0].Status != c.status {
					t.Fatalf("guardrails %s, want status %s", mustJSON(doc.Guardrails), c.status)
				}
				if got := len(p.reasons) == 1; got != c.wantPause || (doc.PauseReason != "") != c.wantPause {
					t.Fatalf("pauses %q, snapshot pause_reason %q; want a pause: %v", p.reasons, doc.PauseReason, c.wantPause)
				}
				if c.wantPause && (p.reasons[0] != doc.PauseReason ||
					!strings.HasPrefix(doc.PauseReason, "Guardrail conversion_rate breached: test group 1 (Variant) changes it by -70.0%") ||
					// A resume alone would be paused again: the reason says how to run on.
					!strings.Contains(doc.PauseReason, "paused again at its next results update") ||
					!strings.Contains(doc.PauseReason, "raise the guardrail's max_harm or remove the guardrail")) {
					t.Fatalf("reason %q, snapshot %q", p.reasons[0], doc.PauseReason)
				}
			})
		}
	}
}

// TestOptionsApplied: the analysis object says which options shaped the
// figures, for a snapshot and for a custom query that overrides them.
func TestOptionsApplied(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			b := be.setup(t)
			b.clock.Set(start.Add(3 * time.Hour))
			tt := b.test(t, experiment.StatusActive)
			tt.Analysis = experiment.AnalysisOptions{Sequential: true, CUPED: true, Winsorize: 0.95,
				Correction: experiment.CorrectionBenjaminiHochberg, Prior: &experiment.Prior{Mean: 0, StdDev: 0.1}}
			b.save(t, tt)
			b.plant(t, tt, converting(300, [2]int{4, 5}))
			doc, _ := b.snapshotDoc(t, tt)
			a := doc.Analysis
			if diff := cmp.Diff([]string{"sequential", "winsorize", "correction", "prior"}, a.Applied); diff != "" {
				t.Errorf("applied mismatch (-want +got):\n%s", diff)
			}
			if len(a.NotApplied) != 1 || a.NotApplied[0].Option != "cuped" || a.CUPED {
				t.Errorf("not_applied %+v, cuped %v", a.NotApplied, a.CUPED)
			}
			if !a.Sequential || a.Correction != "benjamini_hochberg" || a.Winsorization == nil ||
				a.Winsorization.Percentile != 0.95 || a.Prior == nil || a.Prior.StdDev != 0.1 || cmp.Diff(tt.Analysis, a.Requested) != "" {
				t.Errorf("analysis %s", mustJSON(a))
			}
			if f := doc.TestGroups[1].VsControl["conversion_rate"].Frequentist; f == nil || f.AdjustedPValue == nil {
				t.Errorf("frequentist %+v: want the adjusted p-value", f)
			}

			// The query turns capping and sequential off and keeps the rest.
			qdoc := b.query(t, tt.ID, results.QueryRequest{Analysis: json.RawMessage(`{"sequential":false,"winsorize":0}`)})
			if diff := cmp.Diff([]string{"correction", "prior"}, qdoc.Analysis.Applied); diff != "" || qdoc.Analysis.Winsorization != nil {
				t.Errorf("query applied mismatch (-want +got):\n%s\n%s", diff, mustJSON(qdoc.Analysis))
			}
			vs, _ := qdoc.TestGroups[1]["vs_control"].(map[string]any)
			if _, ok := vs["conversion_rate"]; !ok || qdoc.TestGroups[0]["vs_control"] != nil {
				t.Errorf("query vs_control: %s", mustJSON(qdoc.TestGroups))
			}
			if _, ok := vs["bounce_rate"]; ok {
				t.Errorf("vs_control of the core set has an engagement metric: %s", mustJSON(vs))
			}

			// A breakdown compares nothing: sequential, correction and prior
			// shaped none of its figures, and say so (stats audit S7).
			bdoc := b.query(t, tt.ID, results.QueryRequest{Breakdown: []string{"device"}})
			var notApplied []string
			for _, n := range bdoc.Analysis.NotApplied {
				notApplied = append(notApplied, n.Option)
			}
			if diff := cmp.Diff([]string{"winsorize"}, bdoc.Analysis.Applied); diff != "" ||
				!slices.Contains(notApplied, "sequential") || !slices.Contains(notApplied, "correction") || !slices.Contains(notApplied, "prior") {
				t.Errorf("breakdown applied %v, not applied %v", bdoc.Analysis.Applied, notApplied)
			}
			if a := bdoc.Analysis; a.Sequential || a.Correction != "none" || a.Prior != nil || !a.Requested.Sequential {
				t.Errorf("breakdown flags %s: want off where nothing was shaped, requested as asked", mustJSON(a))
			}

			// Nor does a test without visitors.
			empty := b.test(t, experiment.StatusActive)
			empty.Analysis = tt.Analysis
			b.save(t, empty)
			edoc, _ := b.snapshotDoc(t, empty)
			if len(edoc.Analysis.Applied) != 0 {
				t.Errorf("a test without visitors lists %v as applied", edoc.Analysis.Applied)
			}
		})
	}
}

// snapshotDoc computes tt's snapshot now and reads it back.
func (b *bundle) snapshotDoc(t *testing.T, tt *experiment.Test) (results.SnapshotDoc, []byte) {
	t.Helper()
	snap, err := b.svc.ComputeSnapshot(context.Background(), b.shop, tt, b.clock.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	var doc results.SnapshotDoc
	if err := json.Unmarshal(snap.Body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, snap.Body
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// withPauser is b's service with a pauser that records the guardrail
// pauses it is asked for.
func (b *bundle) withPauser() (*results.Service, *pauser) {
	p := &pauser{}
	cfg := b.cfg
	cfg.Pauser = p
	return results.New(cfg), p
}

// takeSnapshot takes tt's snapshot with svc, as the worker does, and
// decodes the latest one stored.
func takeSnapshot(t *testing.T, svc *results.Service, b *bundle, tt *experiment.Test) results.SnapshotDoc {
	t.Helper()
	if err := svc.TakeSnapshot(context.Background(), b.shop.ID, tt.ID, false); err != nil {
		t.Fatal(err)
	}
	latest, err := svc.LatestSnapshot(context.Background(), b.shop, tt.ID)
	if err != nil || latest.Snapshot == nil {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	var doc results.SnapshotDoc
	if err := json.Unmarshal(latest.Snapshot.Body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestGuardrailWatchesEveryVariant: a variant that cannot be compared (its
// checkout broke: no orders, so no order value) does not hide another
// variant's harm: the cheap variant's order value, 80% below the control's,
// breaches the guardrail and pauses the test (stats audit S1).
func TestGuardrailWatchesEveryVariant(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start.Add(3*time.Hour), func(t *testing.T, b *bundle) {
		svc, p := b.withPauser()
		s := start
		tt := &experiment.Test{ShopID: b.shop.ID, Type: experiment.TypeURLRedirect, Status: experiment.StatusActive, Name: "t",
			TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
			Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 34}, {Index: 1, Name: "Broken", Split: 33},
				{Index: 2, Name: "Cheap", Split: 33}},
			CreatedAt: start.Add(-time.Hour), UpdatedAt: start, StartedAt: &s,
			Analysis:   experiment.AnalysisOptions{Sequential: true, Winsorize: 0.99, Correction: experiment.CorrectionNone},
			Guardrails: []experiment.Guardrail{{Metric: "average_order_value", MaxHarm: 0.05}}}
		b.create(t, tt)
		var units []plantedUnit
		for g, value := range []float64{50, 0, 10} {
			for i := 0; i < 150; i++ {
				u := plantedUnit{group: g, device: "desktop", at: start.Add(time.Duration(i) * time.Second)}
				if value > 0 && i%5 < 2 {
					u.orders, u.revenue = 1, value+float64(i%7)
				}
				units = append(units, u)
			}
		}
		b.plant(t, tt, units)
		doc := takeSnapshot(t, svc, b, tt)
		if len(doc.Guardrails) != 1 || doc.Guardrails[0].Status != results.GuardrailBreached ||
			doc.Guardrails[0].TestGroupIndex == nil || *doc.Guardrails[0].TestGroupIndex != 2 {
			t.Fatalf("guardrails %s, want group 2 breached", mustJSON(doc.Guardrails))
		}
		if len(p.reasons) != 1 || !strings.HasPrefix(p.reasons[0], "Guardrail average_order_value breached: test group 2 (Cheap)") {
			t.Fatalf("pauses %q, want one for group 2", p.reasons)
		}
	})
}

// TestRelativeRiskShown: a rate's comparison carries its relative risk
// (pB/pA, Katz interval), a money metric's does not (stats audit S5).
func TestRelativeRiskShown(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start.Add(3*time.Hour), func(t *testing.T, b *bundle) {
		tt := b.test(t, experiment.StatusActive)
		b.plant(t, tt, converting(600, [2]int{3, 10})) // 200 vs 60 of 600
		vs := takeSnapshot(t, b.svc, b, tt).TestGroups[1].VsControl
		rr := vs["conversion_rate"].RelativeRisk
		if rr == nil || math.Abs(rr.Ratio-0.3) > 1e-9 || !(rr.ConfidenceInterval.Lower < 0.3 && rr.ConfidenceInterval.Upper > 0.3) {
			t.Errorf("conversion_rate relative_risk = %+v, want ratio 60/200 = 0.3 inside its interval", rr)
		}
		if vs["revenue_per_visitor"].RelativeRisk != nil {
			t.Errorf("revenue_per_visitor carries a relative risk: %+v", vs["revenue_per_visitor"])
		}
	})
}

// TestTinyPriorIsApplied: a prior surer than ±0.1 % (stored before the
// floor existed, or sent as such) is applied as stddev 0.001: every
// comparison is still computed, and analysis.prior says which prior was
// applied (stats audit S8; review-2 #4: refusing it made such tests
// unpatchable).
func TestTinyPriorIsApplied(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start.Add(3*time.Hour), func(t *testing.T, b *bundle) {
		tt := b.test(t, experiment.StatusActive)
		tt.Analysis = experiment.AnalysisOptions{Winsorize: 0.99, Correction: experiment.CorrectionNone,
			Prior: &experiment.Prior{Mean: -10, StdDev: 1e-300}}
		b.save(t, tt)
		b.plant(t, tt, converting(600, [2]int{3, 10}))
		doc := takeSnapshot(t, b.svc, b, tt)
		if p := doc.Analysis.Prior; p == nil || p.StdDev != experiment.MinPriorStdDev {
			t.Errorf("analysis.prior = %+v, want the applied stddev %v", p, experiment.MinPriorStdDev)
		}
		if v := doc.TestGroups[1].VsControl["conversion_rate"]; v == nil || v.Frequentist == nil || v.Reason != "" {
			t.Errorf("conversion_rate vs_control = %+v: the prior took the comparison with it", v)
		}
	})
}
