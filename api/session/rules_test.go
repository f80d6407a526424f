package session_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// TestCreateRefusesFreeProductsAndUnchangedRates: the domain's rules that
// no price becomes zero (session audit 2, F6) and that a shipping group
// changes a rate (F7 re-check, S2-6) answer here as 400 in this surface's
// envelope, with the domain's message in this surface's words, and create
// nothing.
func TestCreateRefusesFreeProductsAndUnchangedRates(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	const v2 = "/api/price-experiments/v2/create"
	const ship = "/api/shipping-experiments/create"
	priceV2 := func(changeType, change string) string {
		return fmt.Sprintf(`{"name":"Cheaper","products":[{"productId":%q},{"productId":%q}],"priceChangeType":%q,"priceChange":%s,%s}`,
			sweater, tee, changeType, change, withGroups(""))
	}
	rate := func(rateID, name, price string) string {
		id := ""
		if rateID != "" {
			id = fmt.Sprintf(`"rateId":%q,`, rateID)
		}
		return fmt.Sprintf(`{"zoneId":%q,%s"name":%q,"price":%q}`, domestic, id, name, price)
	}
	shipping := func(control, variant string) string {
		return fmt.Sprintf(`{"name":"Shipping","zoneIds":[%q],"testGroups":[{"name":"Control","weight":50%s},{"name":"Variant","weight":50,"rates":[%s]}]}`,
			domestic, control, variant)
	}
	cases := []struct {
		name, path, body string
		want             []string
	}{
		// Each product is held to its own cheapest variant: 500 is over
		// both (the first named answers), 28 only over the tee.
		{"FIXED 500", v2, priceV2("FIXED", "500"), []string{`Test group "Variant" takes 500 off product Merino Crew Sweater (8102)`, "costs 98.00", "-402.00", "above zero"}},
		{"FIXED the price of one", v2, priceV2("FIXED", "28"), []string{"Organic Cotton Tee (8101)", "costs 28.00", "would cost 0.00"}},
		{"PERCENTAGE 100", v2, priceV2("PERCENTAGE", "100"), []string{`Test group "Variant" takes 100% off products Merino Crew Sweater (8102), Organic Cotton Tee (8101)`}},
		{"price v1 at 0", "/api/price-experiments/v1/create", fmt.Sprintf(`{"name":"Free","products":[{"productId":%q,"variants":[{"variantId":%q,"price":"0.00"}]}],%s}`,
			tee, teeS, withGroups("")), []string{`Test group "Variant" prices variant 44001 at 0.00`}},
		{"rate at its own name and price", ship, shipping("", rate(standard, "Standard", "6.95")),
			[]string{`Every rate of test group "Variant" is a rate its zone already has`}},
		{"copy of the zone's rates", ship, shipping("", rate("", "Standard", "6.95")+","+rate("", "Express", "14.95")),
			[]string{"what the control shows"}},
		// S2-6: the control's rates are judged, not dropped, and refused.
		{"control with the variant's rates", ship, shipping(`,"rates":[`+rate("", "x", "5.00")+`]`, rate("", "x", "5.00")),
			[]string{"The control group keeps the store's own shipping rates"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := wantError(t, s.do(t, "POST", c.path, c.body), http.StatusBadRequest)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "gid://") || strings.Contains(msg, "test_groups") {
				t.Errorf("message %q is in v1's words", msg)
			}
		})
	}
	if l := s.list(t); len(l) != 0 {
		t.Fatalf("refused creates made %d tests: %v", len(l), l)
	}
	// Just inside each rule is created.
	wantSuccess(t, s.do(t, "POST", v2, priceV2("FIXED", "27.99")))
	wantSuccess(t, s.do(t, "POST", v2, priceV2("PERCENTAGE", "99")))
	wantSuccess(t, s.do(t, "POST", ship, shipping("", rate(standard, "Standard", "5.95"))))
}

// TestNameCountsCharacters: a name of 200 × "é" (400 bytes) was refused
// for checkout and accepted for a content test (session audit 2, S2-11).
// Every type counts characters, up to 255, by the domain's one rule.
func TestNameCountsCharacters(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	withCheckoutPlan(t, s)
	bodies := map[string]string{
		"/api/checkout-experiments/create": `"testGroups":[{"name":"Control","weight":50},{"name":"Badges","weight":50,"checkout":{"blocks":[]}}]`,
		"/api/content-experiments/create":  withGroups(`,"customCss":"a{}"`),
		"/api/redirect-experiments/create": `"sourcePath":"/a",` + withGroups(`,"destination":"/b"`),
	}
	made := 0
	for path, rest := range bodies {
		for _, n := range []int{200, 255} {
			wantSuccess(t, s.do(t, "POST", path, fmt.Sprintf(`{"name":%q,%s}`, strings.Repeat("é", n), rest)))
			made++
		}
		msg := wantError(t, s.do(t, "POST", path, fmt.Sprintf(`{"name":%q,%s}`, strings.Repeat("é", 256), rest)), http.StatusBadRequest)
		if msg != "name is at most 255 characters." {
			t.Errorf("%s: 256 characters: %q", path, msg)
		}
	}
	if l := s.list(t); len(l) != made {
		t.Fatalf("listed %d tests, want %d", len(l), made)
	}
}

// TestStartRefusesAFreeCollectionItem: this surface creates no offer on a
// collection (price v2 names products), so what reaches it of the rule
// that a fixed amount off a collection stays below its cheapest item is a
// start, which re-runs the rules on today's catalog. A test stored before
// the rule, 25.00 off each item of Tops (28.00 at the least) and
// Accessories (socks at 22.00), is refused with 400 in this surface's
// envelope and words, and stays a draft.
func TestStartRefusesAFreeCollectionItem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop()
	tt := &experiment.Test{ShopID: s.shop.ID, Type: experiment.TypeOffer, Status: experiment.StatusDraft, Name: "Stored before the rule",
		TrafficAllocation: 100, AssignmentVersion: 1, Bucketing: experiment.CurrentBucketing, Shared: map[string]json.RawMessage{},
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50, Content: json.RawMessage(`{}`)},
			{Index: 1, Name: "Variant", Split: 50, Content: json.RawMessage(`{"offers":[{"key":"k","title":"Variant",` +
				`"discount":{"type":"fixed_amount","value":"25.00"},"conditions":{"collection_ids":["gid://shopify/Collection/301","gid://shopify/Collection/302"]}}]}`)}},
		CreatedAt: epoch, UpdatedAt: epoch}
	lifttest.PutTest(t, e.db, tt)
	path := fmt.Sprint("/api/experiments/", tt.ID)

	msg := wantError(t, s.do(t, "PUT", path, `{"status":"ACTIVE"}`), http.StatusBadRequest)
	for _, w := range []string{`Test group "Variant" takes 25.00 off collection Accessories (302)`,
		"cheapest variant (S/M) of product Recycled Running Sock (3-pack) (8107) costs 22.00", "would cost -3.00", "above zero"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not say %q", msg, w)
		}
	}
	if strings.Contains(msg, "gid://") || strings.Contains(msg, "test_groups") {
		t.Errorf("message %q is in v1's words", msg)
	}
	if got := s.do(t, "GET", path, "").obj(); got["status"] != "success" || got["data"].(map[string]any)["status"] != "DRAFT" {
		t.Fatalf("after the refused start: %v", got)
	}
}
