package v1_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/store"
)

// withFields adds top-level fields to a JSON object body.
func withFields(body, fields string) string { return strings.Replace(body, "{", "{"+fields+",", 1) }

// refusal is the whole 422 envelope of a body the schema refuses: the
// top level repeats its one blocking finding.
func refusal(param, message string) map[string]any {
	return map[string]any{"error": map[string]any{"type": "validation_error", "code": "invalid_request",
		"message": message, "param": param, "findings": []any{map[string]any{"severity": "error",
			"code": "invalid_request", "message": message, "param": param}}}}
}

func wantBody(t *testing.T, r resp, status int, want map[string]any) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	if diff := cmp.Diff(want, r.Body); diff != "" {
		t.Fatalf("body mismatch (-want +got):\n%s", diff)
	}
}

func TestAnalysisOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})

	t.Run("CreateReadPatch", func(t *testing.T) {
		t.Parallel()
		plain := s.create(t, priceTest("Plain"))
		wantDefault := map[string]any{"sequential": false, "cuped": false, "winsorize": 0.99, "correction": "none", "prior": nil}
		if diff := cmp.Diff(wantDefault, plain["analysis"]); diff != "" || plain["guardrails"] == nil ||
			len(plain["guardrails"].([]any)) != 0 || plain["pause_reason"] != nil {
			t.Fatalf("defaults (-want +got):\n%s\n%s", diff, mustJSON(plain))
		}
		x := id(s.create(t, withFields(priceTest("Options"),
			`"analysis":{"sequential":true,"winsorize":0},"guardrails":[{"metric":"add_to_cart_rate","max_harm":0.05}]`)))
		got := s.do(t, "GET", "/v1/experiments/"+x, "")
		want := map[string]any{"sequential": true, "cuped": false, "winsorize": 0.0, "correction": "none", "prior": nil}
		if diff := cmp.Diff(want, got.Body["analysis"]); diff != "" {
			t.Fatalf("GET analysis (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{map[string]any{"metric": "add_to_cart_rate", "max_harm": 0.05}}, got.Body["guardrails"]); diff != "" {
			t.Fatalf("GET guardrails (-want +got):\n%s", diff)
		}
		// Sending back what GET read is accepted and changes nothing.
		back := s.patch(t, x, string(got.Raw))
		if back.Status != 200 || back.Body["updated_at"] != got.Body["updated_at"] {
			t.Fatalf("read-back patch = %d %s", back.Status, back.Raw)
		}
	})
	t.Run("OpenAfterLaunch", func(t *testing.T) {
		t.Parallel()
		x := e.started(t, s, "Running")
		r := s.patch(t, x, `{"analysis":{"correction":"holm","winsorize":null},"guardrails":[{"metric":"bounce_rate","max_harm":0.1}]}`)
		want := map[string]any{"sequential": false, "cuped": false, "winsorize": 0.99, "correction": "holm", "prior": nil}
		if r.Status != 200 || r.Body["status"] != "active" {
			t.Fatalf("patch = %d %s", r.Status, r.Raw)
		}
		if diff := cmp.Diff(want, r.Body["analysis"]); diff != "" {
			t.Fatalf("patched analysis (-want +got):\n%s", diff)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		draft := id(s.create(t, priceTest("Draft")))
		for _, c := range []struct {
			name, fields, param, message string
		}{
			{"SequentialNotBool", `"analysis":{"sequential":"yes"}`, "analysis.sequential",
				`analysis.sequential must be true or false, not a string "yes".`},
			{"UnknownOption", `"analysis":{"bayesian":true}`, "analysis.bayesian", `Unknown field "analysis.bayesian".`},
			{"WinsorizeOutOfRange", `"analysis":{"winsorize":1.5}`, "analysis.winsorize",
				"analysis.winsorize is the percentile money is capped at, greater than 0.5 and less than 1 (default 0.99), or 0 to turn capping off; got 1.5."},
			{"Correction", `"analysis":{"correction":"bonferroni"}`, "analysis.correction",
				`analysis.correction is one of holm, benjamini_hochberg, none; got "bonferroni".`},
			{"PriorStdDev", `"analysis":{"prior":{"mean":0,"stddev":-1}}`, "analysis.prior.stddev",
				"analysis.prior.stddev is greater than 0 and at most 10; got -1."},
			{"WinsorizeOverflow", `"analysis":{"winsorize":1e400}`, "analysis.winsorize",
				"analysis.winsorize must be a number a computer can hold; 1e400 is out of range."},
			{"GuardrailHarmType", `"guardrails":[{"metric":"conversion_rate","max_harm":"0.1"}]`, "guardrails[0].max_harm",
				`guardrails[0].max_harm must be a number, not a string "0.1".`},
			{"GuardrailUnknownField", `"guardrails":[{"metric":"conversion_rate","max_harm":0.1,"x":1}]`, "guardrails[0].x",
				`Unknown field "guardrails[0].x".`},
			{"GuardrailNoMetric", `"guardrails":[{"max_harm":0.1}]`, "guardrails[0].metric",
				"guardrails[0].metric is required: one of conversion_rate, revenue_per_visitor, average_order_value, profit_per_visitor, add_to_cart_rate, reached_checkout_rate, click_through_rate, bounce_rate, avg_staying_time."},
			{"GuardrailMetric", `"guardrails":[{"metric":"revenue","max_harm":0.1}]`, "guardrails[0].metric",
				`guardrails[0].metric is one of conversion_rate, revenue_per_visitor, average_order_value, profit_per_visitor, add_to_cart_rate, reached_checkout_rate, click_through_rate, bounce_rate, avg_staying_time; got "revenue".`},
			{"GuardrailHarm", `"guardrails":[{"metric":"conversion_rate","max_harm":1}]`, "guardrails[0].max_harm",
				"guardrails[0].max_harm is the tolerated relative harm, at least 0 and less than 1 (0.02 = 2 % worse than the control); got 1."},
		} {
			t.Run("Create/"+c.name, func(t *testing.T) {
				wantBody(t, s.do(t, "POST", "/v1/experiments", withFields(priceTest(c.name), c.fields)), 422, refusal(c.param, c.message))
			})
			t.Run("Patch/"+c.name, func(t *testing.T) {
				wantBody(t, s.patch(t, draft, "{"+c.fields+"}"), 422, refusal(c.param, c.message))
			})
		}
		// Unparsable JSON stays the 400 it always was.
		wantError(t, s.patch(t, draft, `{"analysis":{`), 400, "invalid_request_error", "malformed_json", "")
	})
	t.Run("CustomQuery", func(t *testing.T) {
		t.Parallel()
		x := e.started(t, s, "Queried")
		wantBody(t, s.do(t, "POST", "/v1/experiments/"+x+"/results", `{"analysis":{"correction":"sidak"}}`), 422,
			refusal("analysis.correction", `analysis.correction is one of holm, benjamini_hochberg, none; got "sidak".`))
		r := s.do(t, "POST", "/v1/experiments/"+x+"/results", `{"analysis":{"sequential":true,"winsorize":0.95}}`)
		if r.Status != 202 || r.Body["status"] != "pending" {
			t.Fatalf("query = %d %s", r.Status, r.Raw)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
