package results_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
)

// TestSnapshotFindsPlantedWinner checks a snapshot's fields (§2.8) on data
// with a large planted effect in conversion.
func TestSnapshotFindsPlantedWinner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := dbBundle(t)
	b.clock.Set(start.Add(3 * time.Hour))
	tt := b.test(t, experiment.StatusActive)
	lifttest.PlantVisitors(t, b.wh, b.shop.ID, tt.ID, start, 2000, []float64{0.05, 0.12}, 40)
	snap, err := b.svc.ComputeSnapshot(ctx, b.shop, tt, b.clock.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Object       string         `json:"object"`
		ExperimentID string         `json:"experiment_id"`
		Outcome      string         `json:"outcome"`
		Winner       *int           `json:"winning_test_group_index"`
		SRM          string         `json:"srm_status"`
		Analysis     map[string]any `json:"analysis"`
		DateRange    map[string]any `json:"date_range"`
		TestGroups   []struct {
			Index     int                       `json:"test_group_index"`
			N         int64                     `json:"sample_size"`
			Revenue   map[string]string         `json:"revenue"`
			VsControl map[string]map[string]any `json:"vs_control"`
		} `json:"test_groups"`
		CustomEvents []map[string]any `json:"customEvents"`
		Breakdown    struct {
			Dimension string           `json:"dimension"`
			Rows      []map[string]any `json:"rows"`
		} `json:"breakdown"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(snap.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Object != "experiment_results" || doc.ExperimentID != fmt.Sprint(tt.ID) || doc.Outcome != "winner" ||
		doc.Winner == nil || *doc.Winner != 1 || doc.SRM != "ok" {
		t.Fatalf("snapshot headline = %s", snap.Body)
	}
	if doc.DateRange["gte"] != "2026-06-01" || doc.DateRange["lte"] != "2026-06-01" {
		t.Errorf("date_range = %v", doc.DateRange)
	}
	if doc.Analysis["confidence_level"] != 0.95 || doc.Analysis["credible_interval_level"] != 0.95 {
		t.Errorf("analysis = %v", doc.Analysis)
	}
	if len(doc.TestGroups) != 2 || doc.TestGroups[0].VsControl != nil || len(doc.TestGroups[1].VsControl) != 9 {
		t.Fatalf("test_groups = %+v", doc.TestGroups)
	}
	if doc.TestGroups[0].Revenue["currency"] != "EUR" {
		t.Errorf("revenue = %v", doc.TestGroups[0].Revenue)
	}
	rpv := doc.TestGroups[1].VsControl["revenue_per_visitor"]
	if d, ok := rpv["difference"].(map[string]any); !ok || d["currency"] != "EUR" {
		t.Errorf("revenue_per_visitor difference is not money: %v", rpv)
	}
	cr := doc.TestGroups[1].VsControl["conversion_rate"]
	if _, ok := cr["difference"].(float64); !ok || cr["bayesian"].(map[string]any)["prob_beat_control"].(float64) < 0.95 {
		t.Errorf("conversion_rate vs_control = %v", cr)
	}
	if doc.Breakdown.Dimension != "device" || len(doc.Breakdown.Rows) != 6 {
		t.Errorf("breakdown = %+v", doc.Breakdown)
	}
	if len(doc.CustomEvents) != 1 || doc.CustomEvents[0]["name"] != "newsletter" {
		t.Errorf("customEvents = %v", doc.CustomEvents)
	}
	var sum results.Summary
	if err := json.Unmarshal(snap.Summary, &sum); err != nil || sum.Outcome != "winner" || sum.PrimaryMetric != "conversion_rate" {
		t.Errorf("summary = %s", snap.Summary)
	}
}

// TestSnapshotWithNothingToCompare: three groups, no orders at all. Every
// group has its metrics, comparisons that mean nothing say why instead of
// showing numbers, and the outcome waits for data.
func TestSnapshotWithNothingToCompare(t *testing.T) {
	t.Parallel()
	b := dbBundle(t)
	b.clock.Set(start.Add(time.Hour))
	tt := b.test(t, experiment.StatusActive)
	tt.Groups = append(tt.Groups, experiment.Group{Index: 2, Name: "Third", Split: 0})
	tt.Groups[0].Split, tt.Groups[1].Split, tt.Groups[2].Split = 34, 33, 33
	lifttest.PlantVisitors(t, b.wh, b.shop.ID, tt.ID, start, 150, []float64{0, 0, 0}, 40)
	doc, body := b.snapshotDoc(t, tt)
	if doc.Outcome != "insufficient_data" || doc.WinningTestGroupIndex != nil || len(doc.TestGroups) != 3 {
		t.Fatalf("snapshot = %s", body)
	}
	for _, g := range doc.TestGroups[1:] {
		for _, m := range []string{"conversion_rate", "average_order_value"} {
			v := g.VsControl[m]
			if v == nil || v.Lift != nil || v.Bayesian != nil || v.Reason == "" || v.Message == "" {
				t.Errorf("group %d %s = %+v, want no numbers and a reason", g.TestGroupIndex, m, v)
			}
		}
		if g.AverageOrderValue.Amount != "0.00" || g.ConversionRate != 0 {
			t.Errorf("group %d = %+v", g.TestGroupIndex, g.GroupMetrics)
		}
	}
	if len(doc.Warnings) == 0 {
		t.Error("no warning says why the primary metric has no comparison")
	}
}
