package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
)

// guardedBody is a url_redirect test with sequential analysis and a
// guardrail on conversion rate.
const guardedBody = `{"type":"url_redirect","name":"guarded",
	"shared":{"url_redirect":{"source_path":"/collections/all","match_type":"prefix"}},
	"test_groups":[{"index":0,"name":"Control","split":50,"content":{}},
		{"index":1,"name":"Variant","split":50,"content":{"destination":"/collections/best-sellers"}}],
	"primary_metric":"revenue_per_visitor",
	"analysis":{"sequential":true,"correction":"holm","prior":{"mean":0,"stddev":0.3}},
	"guardrails":[{"metric":"conversion_rate","max_harm":0.02}]}`

// breachGuardrail makes test id (guardedBody) run for an hour, started
// then (a launch needs the platform; the lifecycle under test is the
// pause), with 1,500 visitors a group whose variant converts a third as
// often as the control: its next snapshot finds the guardrail breached.
func breachGuardrail(t *testing.T, s *server, shopID, id int64) time.Time {
	t.Helper()
	tt, err := s.app.DB.FindTestByID(context.Background(), shopID, id)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	tt.Status, tt.StartedAt = experiment.StatusActive, &started
	lifttest.PutTest(t, s.app.DB, tt)
	lifttest.PlantVisitors(t, s.app.Warehouse, shopID, id, started, 1500, []float64{0.30, 0.10}, 40)
	return started
}

// TestGuardrailBreachPausesTheTest is issue 15's must-show 3 on the real
// stores: a test made through /v1 with sequential analysis and a
// conversion-rate guardrail runs, its variant converts a third as often as
// the control, and the snapshot the worker takes pauses it through the
// lifecycle, with the reason on the test, in the audit log and in its
// results.
func TestGuardrailBreachPausesTheTest(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, read, write := s.shop(true)
	ctx := context.Background()

	r := s.do("POST", "/v1/experiments", write, guardedBody)
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	wantAnalysis := map[string]any{"sequential": true, "cuped": false, "winsorize": 0.99, "correction": "holm",
		"prior": map[string]any{"mean": 0.0, "stddev": 0.3}}
	if diff := cmp.Diff(wantAnalysis, r.body["analysis"]); diff != "" {
		t.Fatalf("created analysis mismatch (-want +got):\n%s", diff)
	}
	id, _ := strconv.ParseInt(r.body["id"].(string), 10, 64)

	breachGuardrail(t, s, shop.ID, id)

	svc := s.app.results()
	if err := svc.TakeSnapshot(ctx, shop.ID, id, false); err != nil {
		t.Fatal(err)
	}

	t.Run("TestIsPaused", func(t *testing.T) {
		r := s.do("GET", "/v1/experiments/"+strconv.FormatInt(id, 10), read, "")
		reason, _ := r.body["pause_reason"].(string)
		if r.status != 200 || r.body["status"] != "paused" || !strings.HasPrefix(reason, "Guardrail conversion_rate breached: test group 1 (Variant)") {
			t.Fatalf("GET = %d %s", r.status, r.raw)
		}
		if diff := cmp.Diff([]any{map[string]any{"metric": "conversion_rate", "max_harm": 0.02}}, r.body["guardrails"]); diff != "" {
			t.Errorf("guardrails mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("AuditHasTheReason", func(t *testing.T) {
		entries, err := s.app.DB.FindAuditEntries(ctx, shop.ID, 20)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Action == "experiment.pause" && e.ResourceID == strconv.FormatInt(id, 10) && e.Actor == "worker" &&
				strings.HasPrefix(e.Reason, "Guardrail conversion_rate breached") {
				return
			}
		}
		t.Fatalf("no audited pause with the reason among %+v", entries)
	})
	t.Run("ResultsShowIt", func(t *testing.T) {
		r := s.do("GET", "/v1/experiments/"+strconv.FormatInt(id, 10)+"/results", read, "")
		if r.status != 200 {
			t.Fatalf("results = %d %s", r.status, r.raw)
		}
		var doc results.SnapshotDoc
		if err := json.Unmarshal(r.raw, &doc); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(doc.PauseReason, "Guardrail conversion_rate breached") {
			t.Errorf("results pause_reason %q", doc.PauseReason)
		}
		if len(doc.Guardrails) != 1 || doc.Guardrails[0].Status != results.GuardrailBreached ||
			*doc.Guardrails[0].TestGroupIndex != 1 || doc.Guardrails[0].ConfidenceInterval.Upper >= -0.02 {
			t.Errorf("guardrails %+v", doc.Guardrails)
		}
		a := doc.Analysis
		if diff := cmp.Diff([]string{"sequential", "winsorize", "correction", "prior"}, a.Applied); diff != "" {
			t.Errorf("analysis.applied mismatch (-want +got):\n%s", diff)
		}
		if !a.Sequential || a.Correction != "holm" || a.Prior == nil || a.Winsorization == nil || a.Winsorization.Percentile != 0.99 {
			t.Errorf("analysis %+v", a)
		}
		f := doc.TestGroups[1].VsControl["conversion_rate"].Frequentist
		if f == nil || f.AdjustedPValue == nil {
			t.Errorf("conversion_rate frequentist %+v: want the holm-adjusted p-value", f)
		}
	})
	t.Run("NoSecondPause", func(t *testing.T) {
		// A paused test takes no snapshot, so nothing more is audited.
		before, _ := s.app.DB.FindAuditEntries(ctx, shop.ID, 50)
		if err := svc.TakeSnapshot(ctx, shop.ID, id, false); err != nil {
			t.Fatal(err)
		}
		after, _ := s.app.DB.FindAuditEntries(ctx, shop.ID, 50)
		if len(after) != len(before) {
			t.Errorf("audit grew from %d to %d entries on a paused test", len(before), len(after))
		}
	})
}
