package experiment

import (
	"strings"
	"testing"
	"time"
)

// visualBody is a content (visual_editor) test with shared as given ("" for
// none).
func visualBody(shared string) string {
	if shared != "" {
		shared = `"shared":` + shared + `,`
	}
	return `{"type":"visual_editor","name":"V",` + shared + `"test_groups":[{"index":0,"name":"A","split":50},
	{"index":1,"name":"B","split":50,"content":{"custom_css":"h1{color:red}"}}]}`
}

// combinedVisualBody bundles a redirect with a content edit whose shared part
// is visual.
func combinedVisualBody(visual string) string {
	return `{"type":"combined","name":"C","shared":{"url_redirect":{"source_path":"/"},"visual_editor":` + visual + `},
	"test_groups":[{"index":0,"name":"A","split":50},
	{"index":1,"name":"B","split":50,"content":{"url_redirect":{"destination":"/b"},"visual_editor":{"custom_css":"h1{}"}}}]}`
}

// TestValidateVisualEditorProducts: a content test's products are optional,
// but those it names follow a price test's rules, in a combined test too.
func TestValidateVisualEditorProducts(t *testing.T) {
	t.Parallel()
	many := make([]string, ProductLimit+1)
	for i := range many {
		many[i] = `"gid://shopify/Product/1"`
	}
	for _, tc := range []struct {
		name, body string
		// code and param name the first blocking finding; empty when valid.
		code, param string
	}{
		{"NoShared", visualBody(""), "", ""},
		{"EmptyShared", visualBody(`{"visual_editor":{}}`), "", ""},
		{"EmptyList", visualBody(`{"visual_editor":{"product_ids":[]}}`), "", ""},
		{"Products", visualBody(`{"visual_editor":{"product_ids":["gid://shopify/Product/1"]}}`), "", ""},
		{"ErrProductNotFound", visualBody(`{"visual_editor":{"product_ids":["gid://shopify/Product/1","gid://shopify/Product/8"]}}`),
			"product_not_found", "shared.visual_editor.product_ids[1]"},
		{"ErrNotAGlobalID", visualBody(`{"visual_editor":{"product_ids":["8101"]}}`), "invalid_request", "shared.visual_editor.product_ids[0]"},
		{"ErrTwice", visualBody(`{"visual_editor":{"product_ids":["gid://shopify/Product/1","gid://shopify/Product/1"]}}`),
			"duplicate_change", "shared.visual_editor.product_ids[1]"},
		{"ErrLimit", visualBody(`{"visual_editor":{"product_ids":[` + strings.Join(many, ",") + `]}}`),
			"product_limit_exceeded", "shared.visual_editor.product_ids"},
		{"ErrUnknownField", visualBody(`{"visual_editor":{"selector":"h1"}}`), "invalid_request", "shared.visual_editor.selector"},
		{"ErrWrongKind", visualBody(`{"visual_editor":{"product_ids":"gid://shopify/Product/1"}}`), "invalid_request", "shared.visual_editor.product_ids"},
		{"ErrOtherKey", visualBody(`{"price":{"product_ids":["gid://shopify/Product/1"]}}`), "invalid_request", "shared.price"},
		{"Combined", combinedVisualBody(`{"product_ids":["gid://shopify/Product/1"]}`), "", ""},
		{"CombinedEmpty", combinedVisualBody(`{}`), "", ""},
		{"ErrCombinedProductNotFound", combinedVisualBody(`{"product_ids":["gid://shopify/Product/8"]}`),
			"product_not_found", "shared.visual_editor.product_ids[0]"},
		{"ErrCombinedUnknownField", combinedVisualBody(`{"bogus":true}`), "invalid_request", "shared.visual_editor.bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := validate(t, tc.body)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refused a valid test: %v", err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != tc.code || e.Param != tc.param {
				t.Fatalf("got %v, want %s at %q", err, tc.code, tc.param)
			}
		})
	}
}

// TestValidateVisualEditorProductLimitRaised: the raised cap of a shop holds
// for a content test's products as for a price test's.
func TestValidateVisualEditorProductLimitRaised(t *testing.T) {
	t.Parallel()
	ids := make([]string, RaisedProductLimit+1)
	for i := range ids {
		ids[i] = `"gid://shopify/Product/1"`
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tt, err := ParseCreate([]byte(visualBody(`{"visual_editor":{"product_ids":[`+strings.Join(ids, ",")+`]}}`)), 1, now)
	if err != nil {
		t.Fatal(err)
	}
	raised := *testShop
	raised.RaisedProductLimit = true
	_, err = Validate(t.Context(), &raised, tt, testCatalog, ValidateFull, now)
	e, _ := AsError(err)
	if e == nil || e.Code != "product_limit_exceeded" || !strings.Contains(e.Message, "500") || !strings.Contains(e.Message, "501") {
		t.Fatalf("got %v, want product_limit_exceeded naming 500 and 501", err)
	}
}

// TestPatchVisualEditorProducts: a PATCH sets and clears a draft content
// test's products; an unknown one is refused when the result is validated.
func TestPatchVisualEditorProducts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cur, err := ParseCreate([]byte(visualBody("")), 1, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, patch, code, param string
	}{
		{"Set", `{"shared":{"visual_editor":{"product_ids":["gid://shopify/Product/1"]}}}`, "", ""},
		{"Clear", `{"shared":{"visual_editor":{"product_ids":[]}}}`, "", ""},
		{"ErrProductNotFound", `{"shared":{"visual_editor":{"product_ids":["gid://shopify/Product/8"]}}}`,
			"product_not_found", "shared.visual_editor.product_ids[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next, _, err := ApplyPatch(cur, []byte(tc.patch), now)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Validate(t.Context(), testShop, next, testCatalog, ValidateFull, now)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if e, ok := AsError(err); !ok || e.Code != tc.code || e.Param != tc.param {
				t.Fatalf("got %v, want %s at %q", err, tc.code, tc.param)
			}
		})
	}
}
