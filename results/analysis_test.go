package results_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/stats"
)

// whaleUnits are 1000 visitors a group, every fourth buying for 30–70, and
// one more variant visitor with a single order of 1,000,000.
func whaleUnits() ([]plantedUnit, float64) {
	var out []plantedUnit
	var positive []float64
	for g := 0; g < 2; g++ {
		for i := 0; i < 1000; i++ {
			u := plantedUnit{group: g, device: "desktop", at: start.Add(time.Duration(i) * time.Second)}
			if i%4 == 0 {
				u.orders, u.revenue = 1, float64(30+(i*7+g)%41)
				positive = append(positive, u.revenue)
			}
			out = append(out, u)
		}
	}
	out = append(out, plantedUnit{group: 1, device: "desktop", orders: 1, revenue: 1e6, at: start.Add(time.Hour)})
	positive = append(positive, 1e6)
	// The cap ClickHouse's quantileExact picks: the order statistic at ⌊p·n⌋.
	sort.Float64s(positive)
	return out, positive[int(stats.DefaultWinsorPercentile*float64(len(positive)))]
}

// TestSnapshotWhaleOrderIsCapped: one $1,000,000 order in the variant no
// longer decides revenue per visitor. Without the cap the variant's mean is
// about 68 times the control's; capped at the 99th percentile of buyers'
// revenue the groups are alike, and the snapshot shows the cap it used.
func TestSnapshotWhaleOrderIsCapped(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			b := be.setup(t)
			b.clock.Set(start.Add(3 * time.Hour))
			tt := b.test(t, experiment.StatusActive)
			rpv := experiment.Metric("revenue_per_visitor")
			tt.PrimaryMetric = &rpv
			b.save(t, tt)
			units, wantCap := whaleUnits()
			b.plant(t, tt, units)
			doc, _ := b.snapshotDoc(t, tt)
			w := doc.Analysis.Winsorization
			if w == nil || w.Percentile != stats.DefaultWinsorPercentile || doc.Analysis.RelativeMethod != "fieller" ||
				doc.Analysis.Correction != "none" {
				t.Fatalf("analysis = %+v", doc.Analysis)
			}
			want := strconv.FormatFloat(wantCap, 'f', 2, 64)
			for _, m := range []string{"revenue_per_visitor", "average_order_value", "profit_per_visitor"} {
				if w.Caps[m].Amount != want || w.Caps[m].Currency != "EUR" {
					t.Errorf("cap of %s = %+v, want %s EUR", m, w.Caps[m], want)
				}
			}
			// The group's own figures stay as sold: the cap is for comparing.
			if r, _ := strconv.ParseFloat(doc.TestGroups[1].Revenue.Amount, 64); r < 1e6 {
				t.Errorf("variant revenue = %+v, want the whale counted", doc.TestGroups[1].Revenue)
			}
			v := doc.TestGroups[1].VsControl["revenue_per_visitor"]
			if v == nil || v.Lift == nil || v.Bayesian == nil || v.Frequentist == nil {
				t.Fatalf("revenue_per_visitor vs_control = %+v", v)
			}
			p, pv := v.Bayesian.ProbBeatControl, v.Frequentist.PValue
			if math.Abs(*v.Lift) > 0.2 || p < 0.05 || p > 0.95 || pv < 0.05 {
				t.Errorf("lift %v, prob_beat_control %v, p-value %v: the whale still decides", *v.Lift, p, pv)
			}
			if doc.Outcome == "winner" {
				t.Errorf("outcome = %s (winner %v), want no winner from one order", doc.Outcome, doc.WinningTestGroupIndex)
			}
			// A custom query over the same run shows the same caps.
			qdoc := b.query(t, tt.ID, results.QueryRequest{})
			if qw := qdoc.Analysis.Winsorization; qw == nil || qw.Caps["revenue_per_visitor"].Amount != want {
				t.Errorf("query analysis = %+v, want the revenue cap %s", qdoc.Analysis, want)
			}
		})
	}
}

// TestQueryBreakdownSRMPerSegment: each breakdown row carries its cell's
// own SRM status. Desktop is split evenly, mobile lost most of the variant
// (a broken redirect on phones), tablet has too few visitors to judge.
func TestQueryBreakdownSRMPerSegment(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start.Add(time.Hour), func(t *testing.T, b *bundle) {
		tt := b.test(t, experiment.StatusActive)
		var units []plantedUnit
		add := func(device string, group, n int) {
			for i := 0; i < n; i++ {
				units = append(units, plantedUnit{group: group, device: device, at: start.Add(time.Duration(len(units)) * time.Second)})
			}
		}
		add("desktop", 0, 100)
		add("desktop", 1, 100)
		add("mobile", 0, 100)
		add("mobile", 1, 20)
		add("tablet", 0, 5)
		add("tablet", 1, 5)
		b.plant(t, tt, units)
		doc := b.query(t, tt.ID, results.QueryRequest{Breakdown: []string{"device"}})
		want := map[string]string{"desktop": "ok", "mobile": "mismatch", "tablet": "insufficient_data"}
		if doc.Breakdown == nil || len(doc.Breakdown.Rows) != 6 {
			t.Fatalf("breakdown = %+v", doc.Breakdown)
		}
		for _, r := range doc.Breakdown.Rows {
			if d := r["dimension_value"].(string); r["srm_status"] != want[d] {
				t.Errorf("%s group %v: srm_status %v, want %s", d, r["test_group_index"], r["srm_status"], want[d])
			}
		}
		if doc.Analysis.RelativeMethod != "fieller" || doc.Analysis.Winsorization != nil {
			t.Errorf("analysis of a test without orders = %+v", doc.Analysis)
		}
	})
}

// TestQueryBreakdownRowPerGroup: every cell has a row for every group, a
// group without units there included, with zeros: a client indexing a
// cell's rows by group finds each (docs audit D16).
func TestQueryBreakdownRowPerGroup(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start.Add(time.Hour), func(t *testing.T, b *bundle) {
		tt := b.test(t, experiment.StatusActive)
		var units []plantedUnit
		for i, u := range []struct {
			device string
			group  int
		}{{"desktop", 0}, {"desktop", 1}, {"tablet", 1}} {
			units = append(units, plantedUnit{group: u.group, device: u.device, at: start.Add(time.Duration(i) * time.Second)})
		}
		b.plant(t, tt, units)
		doc := b.query(t, tt.ID, results.QueryRequest{Breakdown: []string{"device"}})
		var got []string
		for _, r := range doc.Breakdown.Rows {
			got = append(got, fmt.Sprintf("%v/%v/%v", r["dimension_value"], r["test_group_index"], r["sample_size"]))
		}
		if want := []string{"desktop/0/1", "desktop/1/1", "tablet/0/0", "tablet/1/1"}; !slices.Equal(got, want) {
			t.Errorf("rows (cell/group/units) = %v, want %v", got, want)
		}
	})
}
