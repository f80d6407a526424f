package session_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/store"
)

// checkoutBody is a checkout UI test with block settings on the variant.
const checkoutBody = `{"name":"Checkout trust badges","testGroups":[{"name":"Control","weight":50},
	{"name":"Badges","weight":50,"checkout":{"blocks":[{"type":"trust_badge","position":"payment"}]}}]}`

// withCheckoutPlan gives the shop the checkout_blocks plan feature a
// checkout test needs.
func withCheckoutPlan(t *testing.T, s *shopEnv) {
	t.Helper()
	features := []string{"price", "offer", "multi_market", "checkout_blocks"}
	if _, err := s.db.UpdateShop(context.Background(), s.shop.ID, store.ShopUpdate{Features: &features}); err != nil {
		t.Fatal(err)
	}
}

// TestCheckoutCreate: the session API creates a checkout UI test and shows
// it; /v1 still neither creates nor reads one (contract: 501).
func TestCheckoutCreate(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	withCheckoutPlan(t, s)
	id := s.created(t, "/api/checkout-experiments/create", checkoutBody)
	l := s.list(t)
	if len(l) != 1 || l[0]["_id"] != id || l[0]["experimentType"] != "CHECKOUT_UI_TEST" || l[0]["status"] != "DRAFT" {
		t.Fatalf("list: %v", l)
	}
	d := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
	gs, _ := d["testGroups"].([]any)
	if d["experimentType"] != "CHECKOUT_UI_TEST" || d["name"] != "Checkout trust badges" || len(gs) != 2 ||
		gs[1].(map[string]any)["name"] != "Badges" || gs[1].(map[string]any)["weight"] != 50.0 {
		t.Fatalf("get: %v", d)
	}
	blocks := map[string]any{"blocks": []any{map[string]any{"type": "trust_badge", "position": "payment"}}}
	if diff := cmp.Diff(blocks, gs[1].(map[string]any)["checkout"]); diff != "" || gs[0].(map[string]any)["checkout"] != nil {
		t.Fatalf("checkout blocks (-want +got):\n%s\ncontrol: %v", diff, gs[0])
	}

	r := s.v1(t, "GET", "/v1/experiments/"+id, "")
	if r.Status != http.StatusNotImplemented || v1Code(r) != "not_implemented" {
		t.Fatalf("v1 get of a checkout test = %d %s", r.Status, r.Raw)
	}
	r = s.v1(t, "POST", "/v1/experiments", `{"type":"checkout","name":"x","test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50}]}`)
	if r.Status != http.StatusNotImplemented || v1Code(r) != "not_implemented" {
		t.Fatalf("v1 create of a checkout test = %d %s", r.Status, r.Raw)
	}

	// Launching needs a platform step that does not exist: refused, still
	// a draft. Stopping a draft goes through the same state machine.
	msg := wantError(t, s.do(t, "PUT", "/api/experiments/"+id, `{"status":"ACTIVE"}`), http.StatusBadRequest)
	if !strings.Contains(msg, "cannot be launched") {
		t.Fatalf("start refusal: %q", msg)
	}
	wantError(t, s.do(t, "POST", "/api/experiments/"+id+"/resume", ""), http.StatusBadRequest)
	// Renaming and settings merge under v1's PATCH rules.
	wantSuccess(t, s.do(t, "PUT", "/api/experiments/"+id, `{"name":"Renamed","settings":{"targetingRules":{"devices":["mobile"]}}}`))
	wantError(t, s.do(t, "PUT", "/api/experiments/"+id, `{"name":""}`), http.StatusBadRequest)
	if l := s.list(t); l[0]["status"] != "DRAFT" || l[0]["name"] != "Renamed" {
		t.Fatalf("after refused start: %v", l[0])
	}
	d = s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
	if rules := d["settings"].(map[string]any)["targetingRules"].(map[string]any); rules["devices"] == nil {
		t.Fatalf("settings after PUT: %v", d["settings"])
	}
	if r := s.v1(t, "PATCH", "/v1/experiments/"+id, `{"name":"From v1"}`); r.Status != http.StatusNotImplemented || v1Code(r) != "not_implemented" {
		t.Fatalf("v1 patch of a checkout test = %d %s", r.Status, r.Raw)
	}
}

// TestCheckoutCreateRefused: a bad checkout body answers 400 in the
// session envelope and creates nothing.
func TestCheckoutCreateRefused(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	withCheckoutPlan(t, s)
	big := `{"blocks":[` + strings.Repeat(`{"type":"trust_badge_aaaaaaaa"},`, 600) + `{}]}`
	for name, body := range map[string]string{
		"no name":        `{"name":"","testGroups":[{"name":"A","weight":50},{"name":"B","weight":50}]}`,
		"one group":      `{"name":"x","testGroups":[{"name":"A","weight":100}]}`,
		"weights":        `{"name":"x","testGroups":[{"name":"A","weight":50},{"name":"B","weight":20}]}`,
		"blocks array":   `{"name":"x","testGroups":[{"name":"A","weight":50},{"name":"B","weight":50,"checkout":[1]}]}`,
		"blocks too big": `{"name":"x","testGroups":[{"name":"A","weight":50},{"name":"B","weight":50,"checkout":` + big + `}]}`,
		"foreign field":  `{"name":"x","zoneIds":["501"],"testGroups":[{"name":"A","weight":50},{"name":"B","weight":50}]}`,
		"group field":    `{"name":"x","testGroups":[{"name":"A","weight":50},{"name":"B","weight":50,"template":"product"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			msg := wantError(t, s.do(t, "POST", "/api/checkout-experiments/create", body), http.StatusBadRequest)
			if name == "blocks too big" && !strings.Contains(msg, "at most 16384 bytes") {
				t.Fatalf("size refusal: %q", msg)
			}
		})
	}
	if l := s.list(t); len(l) != 0 {
		t.Fatalf("refused bodies created %d tests", len(l))
	}
}

// v1Code is the code of /v1's error body, once the body is the contract's
// 5xx envelope (the only kind these checks expect): type api_error, a param
// (the field refused, or null) and a request_id.
func v1Code(r resp) any {
	e, _ := r.obj()["error"].(map[string]any)
	_, hasParam := e["param"]
	if e["type"] != "api_error" || !hasParam || e["request_id"] == nil {
		return fmt.Sprintf("not the 5xx envelope: %s", r.Raw)
	}
	return e["code"]
}
