package session_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

const groups = `"testGroups":[{"name":"Control","weight":50},{"name":"Variant","weight":50%s}]`

func withGroups(variant string) string { return fmt.Sprintf(groups, variant) }

// TestCreatePerType: every creation endpoint of 4.2 answers "success" and
// the test reads back with its type, groups and change.
func TestCreatePerType(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	cases := []struct {
		name, path, body, typ string
		check                 func(d map[string]any) bool
	}{
		{"price v1", "/api/price-experiments/v1/create", priceV1("Price v1"), "PRICE_TEST", func(d map[string]any) bool {
			return len(d["products"].([]any)) == 1
		}},
		{"price v2", "/api/price-experiments/v2/create", fmt.Sprintf(`{"name":"Price v2","products":[{"productId":%q}],
			"priceChangeType":"PERCENTAGE","priceChange":10,%s}`, tee, withGroups("")), "PRICE_CART_TRANSFORM_TEST",
			func(d map[string]any) bool {
				ps := d["products"].([]any)
				return len(ps) == 1 && ps[0].(map[string]any)["productId"] == tee
			}},
		{"price v2 fixed", "/api/price-experiments/v2/create", fmt.Sprintf(`{"name":"Price v2 fixed","products":[{"productId":%q},{"productId":%q}],
			"priceChangeType":"FIXED","priceChange":2.5,%s}`, tee, sweater, withGroups("")), "PRICE_CART_TRANSFORM_TEST",
			func(d map[string]any) bool { return len(d["products"].([]any)) == 2 }},
		{"content", "/api/content-experiments/create", fmt.Sprintf(`{"name":"Content","products":[{"productId":%q}],%s}`,
			tee, withGroups(`,"customCss":".hero{display:none}"`)), "CONTENT_TEST", func(d map[string]any) bool {
			return group1(d)["customCss"] == ".hero{display:none}"
		}},
		{"shipping", "/api/shipping-experiments/create", fmt.Sprintf(`{"name":"Shipping","zoneIds":[%q],%s}`, domestic,
			withGroups(fmt.Sprintf(`,"rates":[{"zoneId":%q,"rateId":%q,"name":"Standard","price":"3.00"}]`, domestic, standard))),
			"SHIPPING_TEST", func(d map[string]any) bool {
				r := group1(d)["rates"].([]any)[0].(map[string]any)
				return r["price"] == "3.00" && r["zoneId"] == domestic && r["rateId"] == standard
			}},
		{"redirect", "/api/redirect-experiments/create", `{"name":"Redirect","sourcePath":"/pages/sale",` +
			withGroups(`,"destination":"/pages/sale-b"`) + `}`, "URL_REDIRECT_TEST", func(d map[string]any) bool {
			return group1(d)["destination"] == "/pages/sale-b"
		}},
		{"template", "/api/template-experiments/create", fmt.Sprintf(`{"name":"Template","themeId":%q,%s}`, dawn,
			withGroups(`,"template":"product.alternate"`)), "TEMPLATE_TEST", func(d map[string]any) bool {
			return group1(d)["template"] == "product.alternate"
		}},
		{"theme", "/api/theme-experiments/create", `{"name":"Theme",` + withGroups(fmt.Sprintf(`,"themeId":%q`, holiday)) + `}`,
			"THEME_TEST", func(d map[string]any) bool { return group1(d)["themeId"] == holiday }},
		{"settings", "/api/price-experiments/v1/create", fmt.Sprintf(`{"name":"Scheduled","products":[{"productId":%q,"variants":[{"variantId":%q,"price":"19.00"}]}],%s,
			"settings":{"startDate":"2026-07-01T00:00:00Z","endDate":null,"targetingRules":{"devices":["mobile"]}}}`, tee, teeS, withGroups("")),
			"PRICE_TEST", func(d map[string]any) bool {
				set := d["settings"].(map[string]any)
				return set["startDate"] == "2026-07-01T00:00:00Z" && set["targetingRules"].(map[string]any)["devices"] != nil
			}},
	}
	for _, c := range cases {
		id := s.created(t, c.path, c.body)
		d := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
		if d["experimentType"] != c.typ || d["status"] != "DRAFT" || len(d["testGroups"].([]any)) != 2 || !c.check(d) {
			t.Errorf("%s reads back as %v", c.name, d)
		}
	}
	// Checkout tests need the checkout_blocks plan feature (created in
	// checkout_test.go once the plan has it).
	wantError(t, s.do(t, "POST", "/api/checkout-experiments/create", `{"name":"Checkout",`+withGroups("")+`}`), http.StatusBadRequest)
	if l := s.list(t); len(l) != len(cases) {
		t.Fatalf("listed %d tests, want %d", len(l), len(cases))
	}
}

func group1(d map[string]any) map[string]any { return d["testGroups"].([]any)[1].(map[string]any) }

// TestCreateRefused: bad input answers 400 in the session envelope and
// creates nothing.
func TestCreateRefused(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	v1 := "/api/price-experiments/v1/create"
	price := func(product, variant, price, weights string) string {
		return fmt.Sprintf(`{"name":"Bad","products":[{"productId":%q,"variants":[{"variantId":%q,"price":%s}]}],"testGroups":%s}`,
			product, variant, price, weights)
	}
	even := `[{"name":"Control","weight":50},{"name":"Variant","weight":50}]`
	cases := []struct{ name, path, body string }{
		{"malformed json", v1, `{"name":"Bad",`},
		{"not an object", v1, `["name"]`},
		{"empty body", v1, ``},
		{"name not a string", v1, `{"name":5}`},
		{"weight not a number", v1, price(tee, teeS, `"19.00"`, `[{"name":"Control","weight":"50"},{"name":"Variant","weight":50}]`)},
		{"weights sum to 90", v1, price(tee, teeS, `"19.00"`, `[{"name":"Control","weight":40},{"name":"Variant","weight":50}]`)},
		{"no groups", v1, `{"name":"Bad","products":[{"productId":"8101","variants":[{"variantId":"44001","price":"19.00"}]}]}`},
		{"unknown product", v1, price("999999", teeS, `"19.00"`, even)},
		{"unknown variant", v1, price(tee, "999999", `"19.00"`, even)},
		{"variant of another product", v1, price(sweater, teeS, `"19.00"`, even)},
		{"non-decimal price", v1, price(tee, teeS, `"nineteen"`, even)},
		{"price as number", v1, price(tee, teeS, `19`, even)},
		{"non-numeric product id", v1, price("gid://other/8101", teeS, `"19.00"`, even)},
		{"unknown field", v1, `{"name":"Bad","colour":"red"}`},
		{"foreign field", v1, `{"name":"Bad","zoneIds":["501"],"testGroups":` + even + `}`},
		{"foreign group field", v1, `{"name":"Bad","testGroups":[{"name":"Control","weight":50},{"name":"V","weight":50,"destination":"/x"}]}`},
		{"bad start date", v1, price(tee, teeS, `"19.00"`, even[:len(even)-1]+`],"settings":{"startDate":"soon"}`)},
		{"v2 bad change type", "/api/price-experiments/v2/create", `{"name":"Bad","products":[{"productId":"8101"}],"priceChangeType":"HALF","priceChange":10,"testGroups":` + even + `}`},
		{"v2 missing change", "/api/price-experiments/v2/create", `{"name":"Bad","products":[{"productId":"8101"}],"testGroups":` + even + `}`},
		{"v2 change not a number", "/api/price-experiments/v2/create", `{"name":"Bad","products":[{"productId":"8101"}],"priceChangeType":"FIXED","priceChange":"10","testGroups":` + even + `}`},
		{"v2 unknown product", "/api/price-experiments/v2/create", `{"name":"Bad","products":[{"productId":"999999"}],"priceChangeType":"FIXED","priceChange":10,"testGroups":` + even + `}`},
		{"v2 no products", "/api/price-experiments/v2/create", `{"name":"Bad","products":[],"priceChangeType":"PERCENTAGE","priceChange":10,"testGroups":` + even + `}`},
		{"v2 product twice", "/api/price-experiments/v2/create", `{"name":"Bad","products":[{"productId":"8101"},{"productId":"8101"}],"priceChangeType":"PERCENTAGE","priceChange":10,"testGroups":` + even + `}`},
		{"v2 fraction of a cent", "/api/price-experiments/v2/create", `{"name":"Bad","products":[{"productId":"8101"}],"priceChangeType":"FIXED","priceChange":5.001,"testGroups":` + even + `}`},
		{"a group without weight", "/api/price-experiments/v2/create", `{"name":"Bad","products":[{"productId":"8101"}],"priceChangeType":"FIXED","priceChange":5,"testGroups":[{"name":"Control"},{"name":"V","weight":100}]}`},
		{"content unknown product", "/api/content-experiments/create", `{"name":"Bad","products":[{"productId":"999999"}],"testGroups":[{"name":"Control","weight":50},{"name":"V","weight":50,"customCss":"a{}"}]}`},
		{"shipping unknown zone", "/api/shipping-experiments/create", `{"name":"Bad","zoneIds":["999"],"testGroups":[{"name":"Control","weight":50},{"name":"V","weight":50,"rates":[{"zoneId":"999","name":"S","price":"1.00"}]}]}`},
		{"shipping bad price", "/api/shipping-experiments/create", `{"name":"Bad","zoneIds":["501"],"testGroups":[{"name":"Control","weight":50},{"name":"V","weight":50,"rates":[{"zoneId":"501","name":"S","price":"cheap"}]}]}`},
		{"redirect without destination", "/api/redirect-experiments/create", `{"name":"Bad","sourcePath":"/a","testGroups":` + even + `}`},
		{"template unknown theme", "/api/template-experiments/create", `{"name":"Bad","themeId":"9999","testGroups":[{"name":"Control","weight":50},{"name":"V","weight":50,"template":"product"}]}`},
		{"theme without theme", "/api/theme-experiments/create", `{"name":"Bad","testGroups":` + even + `}`},
		// The control shows the store as it is: a change on it is refused,
		// not dropped unseen (session audit 2, S2-6).
		{"theme on the control", "/api/theme-experiments/create", `{"name":"Bad","testGroups":[{"name":"Control","weight":50,"themeId":"` + holiday + `"},{"name":"V","weight":50,"themeId":"` + holiday + `"}]}`},
		{"bad theme on the control", "/api/theme-experiments/create", `{"name":"Bad","testGroups":[{"name":"Control","weight":50,"themeId":"garbage"},{"name":"V","weight":50,"themeId":"` + holiday + `"}]}`},
		{"rates on the control", "/api/shipping-experiments/create", `{"name":"Bad","zoneIds":["501"],"testGroups":[{"name":"Control","weight":50,"rates":[{"zoneId":"501","name":"S","price":"4.00"}]},{"name":"V","weight":50,"rates":[{"zoneId":"501","name":"S","price":"3.00"}]}]}`},
		{"css on the control", "/api/content-experiments/create", `{"name":"Bad","products":[{"productId":"8101"}],"testGroups":[{"name":"Control","weight":50,"customCss":"a{}"},{"name":"V","weight":50,"customCss":"a{}"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantError(t, s.do(t, "POST", c.path, c.body), http.StatusBadRequest) })
	}
	if l := s.list(t); len(l) != 0 {
		t.Fatalf("refused creates made %d tests: %v", len(l), l)
	}
}

// TestMessagesUseSessionNames: a refusal names the fields and ids the admin
// panel sent, not v1's paths and global ids (session audit 2, S2-10).
func TestMessagesUseSessionNames(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	even := `[{"name":"Control","weight":50},{"name":"V","weight":50}]`
	cases := []struct {
		name, path, body, want string
	}{
		{"no products", "/api/price-experiments/v1/create", `{"name":"x","products":[],"testGroups":` + even + `}`, "products"},
		{"template without theme", "/api/template-experiments/create",
			`{"name":"x","testGroups":[{"name":"Control","weight":50},{"name":"V","weight":50,"template":"product.alternate"}]}`, "themeId"},
		{"zone twice", "/api/shipping-experiments/create", `{"name":"x","zoneIds":["501","501"],"testGroups":` + even + `}`, "Zone 501"},
		{"unknown product", "/api/content-experiments/create",
			`{"name":"x","products":[{"productId":"999999"}],"testGroups":[{"name":"Control","weight":50},{"name":"V","weight":50,"customCss":"a{}"}]}`, "999999"},
	}
	for _, c := range cases {
		msg := wantError(t, s.do(t, "POST", c.path, c.body), http.StatusBadRequest)
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "gid://") || strings.Contains(msg, "shared.") || strings.Contains(msg, "test_groups") {
			t.Errorf("%s: message %q, want %q in the session's words", c.name, msg, c.want)
		}
	}
}
