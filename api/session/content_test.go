package session_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// contentBody is a content creation body with products (a JSON array, ""
// for none).
func contentBody(products string) string {
	if products != "" {
		products = `"products":` + products + `,`
	}
	return `{"name":"Content",` + products + withGroups(`,"customCss":".hero{display:none}"`) + `}`
}

// v1Error is a v1 error answer's code and param.
func v1Error(r resp) (code, param any) {
	e, _ := r.obj()["error"].(map[string]any)
	return e["code"], e["param"]
}

// TestContentProducts: a content test keeps the products it is created
// with, both surfaces show them (the session's products, v1's
// shared.visual_editor.product_ids), and an unknown one is refused.
func TestContentProducts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const path = "/api/content-experiments/create"
	for _, tc := range []struct {
		name, products string
		// want is the session's products; wantShared v1's shared.
		want       []any
		wantShared map[string]any
		// wantMsg, when set, is part of the 400's message; nothing is made.
		wantMsg string
	}{
		{"one", `[{"productId":"8107"}]`, []any{map[string]any{"productId": "8107"}},
			map[string]any{"visual_editor": map[string]any{"product_ids": []any{"gid://shopify/Product/8107"}}}, ""},
		{"two in order, one as a gid", `[{"productId":"8108"},{"productId":"gid://shopify/Product/8101"}]`,
			[]any{map[string]any{"productId": "8108"}, map[string]any{"productId": "8101"}},
			map[string]any{"visual_editor": map[string]any{"product_ids": []any{"gid://shopify/Product/8108", "gid://shopify/Product/8101"}}}, ""},
		{"none", ``, []any{}, map[string]any{}, ""},
		{"empty list", `[]`, []any{}, map[string]any{}, ""},
		{"unknown product", `[{"productId":"8107"},{"productId":"999999"}]`, nil, nil, "no product 999999"},
		{"listed twice", `[{"productId":"8107"},{"productId":"8107"}]`, nil, nil, "listed twice"},
		{"not numeric", `[{"productId":"tee"}]`, nil, nil, "products[0].productId must be a numeric Product id"},
		{"variants", `[{"productId":"8107","variants":[]}]`, nil, nil, "products[0].variants is taken by price v1 tests only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := e.newShop()
			if tc.wantMsg != "" {
				msg := wantError(t, s.do(t, "POST", path, contentBody(tc.products)), http.StatusBadRequest)
				if !strings.Contains(msg, tc.wantMsg) {
					t.Fatalf("message %q, want it to contain %q", msg, tc.wantMsg)
				}
				if l := s.list(t); len(l) != 0 {
					t.Fatalf("a refused create made %v", l)
				}
				return
			}
			id := s.created(t, path, contentBody(tc.products))
			d := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
			if diff := cmp.Diff(tc.want, d["products"]); diff != "" || d["experimentType"] != "CONTENT_TEST" {
				t.Fatalf("products mismatch (-want +got):\n%s\ntype %v", diff, d["experimentType"])
			}
			r := s.v1(t, "GET", "/v1/experiments/"+id, "")
			if diff := cmp.Diff(tc.wantShared, r.obj()["shared"]); diff != "" {
				t.Fatalf("v1 shared mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContentProductsV1: v1 writes shared.visual_editor.product_ids on
// create and PATCH under a price test's rules (product_not_found naming the
// entry), and the session surface reads them as products.
func TestContentProductsV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := func(shared string) string {
		return `{"type":"visual_editor","name":"Content",` + shared + `"test_groups":[{"index":0,"name":"Control","split":50},
			{"index":1,"name":"B","split":50,"content":{"custom_css":"h1{color:red}"}}]}`
	}
	products := func(ids ...string) string {
		return fmt.Sprintf(`"shared":{"visual_editor":{"product_ids":["%s"]}},`, strings.Join(ids, `","`))
	}
	gid := func(n string) string { return "gid://shopify/Product/" + n }
	for _, tc := range []struct {
		name string
		// create is the create body; patch, when set, a PATCH after it.
		create, patch string
		status        int
		code, param   string
		// want is the session's productIds afterwards.
		want []string
	}{
		{"create", body(products(gid("8107"))), "", http.StatusCreated, "", "", []string{"8107"}},
		{"create without products", body(""), "", http.StatusCreated, "", "", []string{}},
		{"create unknown product", body(products(gid("8107"), gid("999999"))), "", http.StatusUnprocessableEntity,
			"product_not_found", "shared.visual_editor.product_ids[1]", nil},
		{"create too many", body(products(strings.Split(strings.Repeat(gid("8107")+",", 101), ",")[:101]...)), "",
			http.StatusUnprocessableEntity, "product_limit_exceeded", "shared.visual_editor.product_ids", nil},
		{"patch", body(""), `{"shared":{"visual_editor":{"product_ids":["` + gid("8101") + `","` + gid("8108") + `"]}}}`,
			http.StatusOK, "", "", []string{"8101", "8108"}},
		{"patch clears", body(products(gid("8107"))), `{"shared":{"visual_editor":{"product_ids":[]}}}`,
			http.StatusOK, "", "", []string{}},
		{"patch unknown product", body(products(gid("8107"))), `{"shared":{"visual_editor":{"product_ids":["` + gid("999999") + `"]}}}`,
			http.StatusUnprocessableEntity, "product_not_found", "shared.visual_editor.product_ids[0]", []string{"8107"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := e.newShop()
			r := s.v1(t, "POST", "/v1/experiments", tc.create)
			if tc.patch == "" {
				if code, param := v1Error(r); r.Status != tc.status || tc.code != "" && (code != tc.code || param != tc.param) {
					t.Fatalf("create = %d %s, want %d %s at %s", r.Status, r.Raw, tc.status, tc.code, tc.param)
				}
			} else {
				if r.Status != http.StatusCreated {
					t.Fatalf("create = %d %s", r.Status, r.Raw)
				}
				p := s.v1(t, "PATCH", "/v1/experiments/"+r.obj()["id"].(string), tc.patch)
				if code, param := v1Error(p); p.Status != tc.status || tc.code != "" && (code != tc.code || param != tc.param) {
					t.Fatalf("patch = %d %s, want %d %s at %s", p.Status, p.Raw, tc.status, tc.code, tc.param)
				}
			}
			if tc.want == nil {
				return
			}
			d := s.do(t, "GET", "/api/experiments/"+r.obj()["id"].(string), "").data().(map[string]any)
			if diff := cmp.Diff(tc.want, productIDs(d)); diff != "" {
				t.Fatalf("session products mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContentAnalyticsProducts: the analytics productIds filter takes a
// content test's products and refuses others, as for a price test.
func TestContentAnalyticsProducts(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	id := s.created(t, "/api/content-experiments/create", contentBody(fmt.Sprintf(`[{"productId":%q}]`, tee)))
	plantAnalytics(t, s.wh, s.shop.ID, id)
	filter := func(p string) string { return `{` + window + `,"filterParams":{"productIds":["` + p + `"]}}` }
	d := s.analytics(t, "/api/analytics/"+id, filter(tee))
	if diff := cmp.Diff(map[string]any{"views": nums(1, 3)}, pick(d, "views")); diff != "" {
		t.Fatalf("product view on the content test's product mismatch (-want +got):\n%s", diff)
	}
	// Without a filter the product view scopes to the test's products, so
	// the sweater's viewer (not one of them) does not count.
	d = s.analytics(t, "/api/analytics/"+id, `{`+window+`}`)
	if diff := cmp.Diff(map[string]any{"views": nums(1, 3)}, pick(d, "views")); diff != "" {
		t.Fatalf("product view mismatch (-want +got):\n%s", diff)
	}
	s.analytics(t, "/api/analytics/v1/"+id, filter(tee))
	msg := wantError(t, s.do(t, "POST", "/api/analytics/v1/"+id, filter(sweater)), http.StatusBadRequest)
	if !strings.Contains(msg, "not in this test") {
		t.Fatalf("message %q, want the product refused as not in this test", msg)
	}
}
