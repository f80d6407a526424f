package experimenttest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

// testAnalysis: analysis options and guardrails are created, read back,
// changed after launch (they change no visitor's experience), and refused
// with invalid_request naming the field.
func testAnalysis(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	t.Run("Defaults", func(t *testing.T) {
		x := b.Get(t, b.Create(t, PriceTest("Plain")).ID)
		if diff := cmp.Diff(experiment.DefaultAnalysis(), x.Analysis); diff != "" || len(x.Guardrails) != 0 {
			t.Fatalf("defaults mismatch (-want +got):\n%s\nguardrails %v", diff, x.Guardrails)
		}
	})
	t.Run("CreateAndPatchAfterLaunch", func(t *testing.T) {
		x := b.Create(t, withFields(PriceTest("Guarded"),
			`"analysis":{"sequential":true,"winsorize":0.95,"correction":"benjamini_hochberg","prior":{"mean":0.01,"stddev":0.2}},
			"guardrails":[{"metric":"bounce_rate","max_harm":0.05}]`))
		want := experiment.AnalysisOptions{Sequential: true, Winsorize: 0.95, Correction: experiment.CorrectionBenjaminiHochberg,
			Prior: &experiment.Prior{Mean: 0.01, StdDev: 0.2}}
		got := b.Get(t, x.ID)
		if diff := cmp.Diff(want, got.Analysis); diff != "" {
			t.Fatalf("analysis mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]experiment.Guardrail{{Metric: "bounce_rate", MaxHarm: 0.05}}, got.Guardrails); diff != "" {
			t.Fatalf("guardrails mismatch (-want +got):\n%s", diff)
		}
		b.Act(t, x.ID, experiment.ActionStart)
		_, err := b.Service.Update(b.Ctx(), b.Shop, x.ID, []byte(`{"analysis":{"cuped":true,"prior":null},
			"guardrails":[{"metric":"conversion_rate","max_harm":0}]}`), JSONReply(200))
		if err != nil {
			t.Fatal(err)
		}
		want.CUPED, want.Prior = true, nil
		got = b.Get(t, x.ID)
		if diff := cmp.Diff(want, got.Analysis); diff != "" {
			t.Fatalf("patched analysis mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]experiment.Guardrail{{Metric: "conversion_rate"}}, got.Guardrails); diff != "" {
			t.Fatalf("patched guardrails mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, c := range []struct{ name, fields, param string }{
			{"SequentialNotBool", `"analysis":{"sequential":"yes"}`, "analysis.sequential"},
			{"UnknownOption", `"analysis":{"bayes":true}`, "analysis.bayes"},
			{"AnalysisNotObject", `"analysis":[]`, "analysis"},
			{"WinsorizeTooLow", `"analysis":{"winsorize":0.4}`, "analysis.winsorize"},
			{"WinsorizeOne", `"analysis":{"winsorize":1}`, "analysis.winsorize"},
			{"Correction", `"analysis":{"correction":"bonferroni"}`, "analysis.correction"},
			{"PriorShape", `"analysis":{"prior":{"mean":0}}`, "analysis.prior"},
			{"PriorStdDev", `"analysis":{"prior":{"mean":0,"stddev":0}}`, "analysis.prior.stddev"},
			{"GuardrailsNotArray", `"guardrails":{"metric":"conversion_rate"}`, "guardrails"},
			{"GuardrailMetric", `"guardrails":[{"metric":"revenue","max_harm":0.1}]`, "guardrails[0].metric"},
			{"GuardrailTwice", `"guardrails":[{"metric":"conversion_rate"},{"metric":"conversion_rate"}]`, "guardrails[1].metric"},
			{"GuardrailHarm", `"guardrails":[{"metric":"conversion_rate","max_harm":1.5}]`, "guardrails[0].max_harm"},
			{"GuardrailNegative", `"guardrails":[{"metric":"conversion_rate","max_harm":-0.1}]`, "guardrails[0].max_harm"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := b.Service.Create(b.Ctx(), b.Shop, []byte(withFields(PriceTest(c.name), c.fields)), JSONReply(201))
				if e := WantCode(t, err, experiment.KindValidation, "invalid_request"); e.Param != c.param {
					t.Fatalf("param %q, want %q (%s)", e.Param, c.param, e.Message)
				}
			})
		}
	})
}

// testPauseForGuardrail: the automatic pause is the manual pause's
// transition, with its reason on the test and in the audit record; it does
// nothing to a test that is not running, and a resume clears the reason.
func testPauseForGuardrail(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	x := b.Create(t, PriceTest("Guarded"))
	const reason = "Guardrail conversion_rate breached."
	if paused, err := b.Service.PauseForGuardrail(b.Ctx(), b.Shop.ID, x.ID, reason); err != nil || paused {
		t.Fatalf("pause of a draft = %v, %v; want nothing done", paused, err)
	}
	b.Act(t, x.ID, experiment.ActionStart)
	before := len(b.Audit(t, b.Shop.ID))
	if paused, err := b.Service.PauseForGuardrail(b.Ctx(), b.Shop.ID, x.ID, reason); err != nil || !paused {
		t.Fatalf("pause = %v, %v", paused, err)
	}
	got := b.Get(t, x.ID)
	if got.Status != experiment.StatusPaused || got.PauseReason != reason {
		t.Fatalf("after the pause: %s %q", got.Status, got.PauseReason)
	}
	audit := b.Audit(t, b.Shop.ID)
	if len(audit) != before+1 || audit[0].Action != "experiment.pause" || audit[0].Reason != reason {
		t.Fatalf("audit %+v", audit)
	}
	if paused, err := b.Service.PauseForGuardrail(b.Ctx(), b.Shop.ID, x.ID, reason); err != nil || paused {
		t.Fatalf("second pause = %v, %v; want nothing done", paused, err)
	}
	if n := len(b.Audit(t, b.Shop.ID)); n != before+1 {
		t.Fatalf("a pause that did nothing was audited (%d records)", n)
	}
	b.Act(t, x.ID, experiment.ActionResume)
	if got := b.Get(t, x.ID); got.Status != experiment.StatusActive || got.PauseReason != "" {
		t.Fatalf("after resume: %s %q", got.Status, got.PauseReason)
	}
}
