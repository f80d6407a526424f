package session_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// productIDs are the productIds a full test lists.
func productIDs(d map[string]any) []string {
	out := []string{}
	for _, p := range d["products"].([]any) {
		out = append(out, p.(map[string]any)["productId"].(string))
	}
	return out
}

// TestRemoveProductsPerType: remove-products works on every type whose
// full test lists products, while it runs, and the rest keep running; a
// product the test does not have changes nothing; a content test may lose
// its last product; a type that lists none is 400 naming it as
// experimentType does.
func TestRemoveProductsPerType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	two := fmt.Sprintf(`[{"productId":%q},{"productId":%q}]`, tee, sweater)
	cases := []struct {
		name, path, body string
		remove           []string
		// want is the products listed afterwards; wantMsg, when set, the
		// 400's message, the test unchanged.
		want    []string
		wantMsg string
	}{
		{"price", "/api/price-experiments/v1/create", fmt.Sprintf(`{"name":"P","products":[{"productId":%q,"variants":[{"variantId":%q,"price":"19.00"}]},
			{"productId":%q,"variants":[{"variantId":%q,"price":"90.00"}]}],%s}`, tee, teeS, sweater, sweaterS, withGroups("")),
			[]string{sweater}, []string{tee}, ""},
		{"price v2", "/api/price-experiments/v2/create", fmt.Sprintf(`{"name":"P2","products":%s,"priceChangeType":"PERCENTAGE","priceChange":10,%s}`,
			two, withGroups("")), []string{sweater}, []string{tee}, ""},
		{"price v2 gid", "/api/price-experiments/v2/create", fmt.Sprintf(`{"name":"P2","products":%s,"priceChangeType":"FIXED","priceChange":2,%s}`,
			two, withGroups("")), []string{"gid://shopify/Product/" + tee}, []string{sweater}, ""},
		{"price v2 product it does not have", "/api/price-experiments/v2/create", fmt.Sprintf(`{"name":"P2","products":[{"productId":%q}],
			"priceChangeType":"PERCENTAGE","priceChange":10,%s}`, tee, withGroups("")), []string{sweater}, []string{tee}, ""},
		{"price v2 every product", "/api/price-experiments/v2/create", fmt.Sprintf(`{"name":"P2","products":[{"productId":%q}],
			"priceChangeType":"PERCENTAGE","priceChange":10,%s}`, tee, withGroups("")), []string{tee}, []string{tee}, "at least one product"},
		{"content", "/api/content-experiments/create", `{"name":"C","products":` + two + `,` + withGroups(`,"customCss":"a{}"`) + `}`,
			[]string{sweater}, []string{tee}, ""},
		{"content every product", "/api/content-experiments/create", `{"name":"C","products":` + two + `,` + withGroups(`,"customCss":"a{}"`) + `}`,
			[]string{tee, sweater}, []string{}, ""},
		{"content without products", "/api/content-experiments/create", `{"name":"C",` + withGroups(`,"customCss":"a{}"`) + `}`,
			[]string{tee}, []string{}, ""},
		{"redirect", "/api/redirect-experiments/create", `{"name":"R","sourcePath":"/a",` + withGroups(`,"destination":"/b"`) + `}`, []string{tee}, []string{},
			"A URL_REDIRECT_TEST lists no products, so it has none to remove; a PRICE_TEST, PRICE_CART_TRANSFORM_TEST or CONTENT_TEST has."},
		{"shipping", "/api/shipping-experiments/create", fmt.Sprintf(`{"name":"S","zoneIds":[%q],%s}`, domestic,
			withGroups(fmt.Sprintf(`,"rates":[{"zoneId":%q,"name":"Standard","price":"3.00"}]`, domestic))), []string{tee}, []string{},
			"A SHIPPING_TEST lists no products"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := e.newShop()
			id := s.created(t, c.path, c.body)
			get := func() map[string]any { return s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any) }
			if c.wantMsg == "" || strings.Contains(c.path, "price") {
				wantSuccess(t, s.do(t, "PUT", "/api/experiments/"+id, `{"status":"ACTIVE"}`))
			}
			before := get()
			ids, _ := json.Marshal(c.remove)
			r := s.do(t, "PUT", "/api/experiments/remove-products/"+id, fmt.Sprintf(`{"productIds":%s}`, ids))
			if c.wantMsg != "" {
				if msg := wantError(t, r, http.StatusBadRequest); !strings.Contains(msg, c.wantMsg) {
					t.Fatalf("message %q, want it to contain %q", msg, c.wantMsg)
				}
				if diff := cmp.Diff(before, get()); diff != "" {
					t.Fatalf("a refused removal changed the test (-before +after):\n%s", diff)
				}
				return
			}
			wantSuccess(t, r)
			after := get()
			if diff := cmp.Diff(c.want, productIDs(after)); diff != "" || after["status"] != "ACTIVE" {
				t.Fatalf("products mismatch (-want +got):\n%s\nstatus %v", diff, after["status"])
			}
		})
	}
}
