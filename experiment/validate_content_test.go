package experiment

import (
	"context"
	"strings"
	"testing"
	"time"
)

// wantRefusal checks err is the refusal code at param, or none when code
// is empty.
func wantRefusal(t *testing.T, err error, code, param string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("refused a valid test: %v", err)
		}
		return
	}
	if e, ok := AsError(err); !ok || e.Code != code || e.Param != param {
		t.Fatalf("got %v, want %s at %q", err, code, param)
	}
}

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
			wantRefusal(t, err, tc.code, tc.param)
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

// imagesBody is an image test of product 1: group 1's content is images
// (a JSON array) and control's is control ("" for none).
func imagesBody(images, control string) string {
	c := ""
	if control != "" {
		c = `,"content":{"images":` + control + `}`
	}
	return `{"type":"visual_editor","name":"I","shared":{"visual_editor":{"product_ids":["gid://shopify/Product/1"]}},
	"test_groups":[{"index":0,"name":"A","split":50` + c + `},{"index":1,"name":"B","split":50,"content":{"images":` + images + `}}]}`
}

// TestValidateImages: an image test's images name a product the test
// lists, once a group, with 1 to MaxImageURLs images each an https URL or
// a path on the shop's site; the control shows the store's own.
func TestValidateImages(t *testing.T) {
	t.Parallel()
	one := func(urls string) string { return `[{"product_id":"gid://shopify/Product/1","urls":` + urls + `}]` }
	many := make([]string, MaxImageURLs+1)
	for i := range many {
		many[i] = `"/i.jpg"`
	}
	for _, tc := range []struct {
		name, body, code, param string
	}{
		{"PathAndHTTPS", imagesBody(one(`["/cdn/shop/files/tee-b.jpg","https://cdn.example.com/tee-b2.jpg?v=2"]`), ""), "", ""},
		{"AtTheLimit", imagesBody(one(`[`+strings.Join(many[1:], ",")+`]`), ""), "", ""},
		{"ErrNoImages", imagesBody(one(`[]`), ""), "invalid_request", "test_groups[1].content.images[0].urls"},
		{"ErrTooMany", imagesBody(one(`[`+strings.Join(many, ",")+`]`), ""), "invalid_request", "test_groups[1].content.images[0].urls"},
		{"ErrHTTP", imagesBody(one(`["http://cdn.example.com/a.jpg"]`), ""), "invalid_request", "test_groups[1].content.images[0].urls[0]"},
		{"ErrJavaScript", imagesBody(one(`["/a.jpg","javascript:alert(1)"]`), ""), "invalid_request", "test_groups[1].content.images[0].urls[1]"},
		{"ErrOtherHost", imagesBody(one(`["//evil.example/a.jpg"]`), ""), "invalid_request", "test_groups[1].content.images[0].urls[0]"},
		{"ErrNoHost", imagesBody(one(`["https:///a.jpg"]`), ""), "invalid_request", "test_groups[1].content.images[0].urls[0]"},
		{"ErrSpace", imagesBody(one(`["https://cdn.example.com/a b.jpg"]`), ""), "invalid_request", "test_groups[1].content.images[0].urls[0]"},
		{"ErrNotListed", imagesBody(`[{"product_id":"gid://shopify/Product/2","urls":["/a.jpg"]}]`, ""),
			"invalid_request", "test_groups[1].content.images[0].product_id"},
		{"ErrNotAProduct", imagesBody(`[{"product_id":"gid://shopify/Collection/1","urls":["/a.jpg"]}]`, ""),
			"invalid_request", "test_groups[1].content.images[0].product_id"},
		{"ErrTwice", imagesBody(`[{"product_id":"gid://shopify/Product/1","urls":["/a.jpg"]},{"product_id":"gid://shopify/Product/1","urls":["/b.jpg"]}]`, ""),
			"duplicate_change", "test_groups[1].content.images[1].product_id"},
		{"ErrControl", imagesBody(one(`["/a.jpg"]`), one(`["/b.jpg"]`)), "control_group_invalid", "test_groups[0].content"},
		{"ErrUnknownField", imagesBody(`[{"product_id":"gid://shopify/Product/1","urls":["/a.jpg"],"alt":"x"}]`, ""),
			"invalid_request", "test_groups[1].content.images[0].alt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := validate(t, tc.body)
			wantRefusal(t, err, tc.code, tc.param)
		})
	}
}

// TestValidateDOMChanges: the visual editor's DOM changes are what the
// tracker applies (docs/dom-changes.md), and the control makes none.
func TestValidateDOMChanges(t *testing.T) {
	t.Parallel()
	body := func(changes, control string) string {
		c := ""
		if control != "" {
			c = `,"content":{"dom_changes":` + control + `}`
		}
		return `{"type":"visual_editor","name":"D","test_groups":[{"index":0,"name":"A","split":50` + c + `},
		{"index":1,"name":"B","split":50,"content":{"dom_changes":` + changes + `}}]}`
	}
	one := func(fields string) string { return `[{"selector":"h1.title",` + fields + `}]` }
	many := make([]string, MaxDOMChanges+1)
	for i := range many {
		many[i] = `{"selector":"h1","action":"set","attribute":"html","value":"x"}`
	}
	for _, tc := range []struct {
		name, body, code, param string
	}{
		{"EveryKind", body(`[{"selector":"h1","action":"set","attribute":"html","value":"New"},
			{"selector":".note","action":"append","attribute":"html","value":"<small>Free returns</small>"},
			{"selector":".badge","action":"append","attribute":"class","value":"sale new"},
			{"selector":"#promo","action":"remove","attribute":"class","value":"hidden"},
			{"selector":"a.cta","action":"set","attribute":"href","value":"/collections/sale"},
			{"selector":"a.cta","action":"remove","attribute":"data-x"},
			{"selector":"h1","action":"set","attribute":"html"},
			{"selector":".reviews","action":"set","attribute":"position","parent_selector":"main","insert_before_selector":".description"}]`, ""), "", ""},
		{"AtTheLimit", body(`[`+strings.Join(many[1:], ",")+`]`, ""), "", ""},
		{"ErrTooMany", body(`[`+strings.Join(many, ",")+`]`, ""), "invalid_request", "test_groups[1].content.dom_changes"},
		{"ErrNoSelector", body(`[{"selector":" ","action":"set","attribute":"html","value":"x"}]`, ""), "invalid_request", "test_groups[1].content.dom_changes[0].selector"},
		{"ErrAction", body(one(`"action":"replace","attribute":"html","value":"x"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].action"},
		{"ErrAttribute", body(one(`"action":"set","attribute":"on click","value":"x"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].attribute"},
		{"ErrRemoveHTML", body(one(`"action":"remove","attribute":"html"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].action"},
		{"ErrMoveWithoutParent", body(one(`"action":"set","attribute":"position"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].parent_selector"},
		{"ErrMoveAppended", body(one(`"action":"append","attribute":"position","parent_selector":"main"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].parent_selector"},
		{"ErrParentWithoutMove", body(one(`"action":"set","attribute":"html","value":"x","parent_selector":"main"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].parent_selector"},
		{"ErrEmptyClass", body(one(`"action":"append","attribute":"class"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].value"},
		{"ErrUnknownField", body(one(`"action":"set","attribute":"html","text":"x"`), ""), "invalid_request", "test_groups[1].content.dom_changes[0].text"},
		{"ErrControl", body(one(`"action":"set","attribute":"html","value":"x"`), one(`"action":"set","attribute":"html","value":"y"`)),
			"control_group_invalid", "test_groups[0].content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The admin panel's create: the API's refuses DOM changes before
			// they are validated.
			tt, err := parseCreate([]byte(tc.body), 1, time.Now(), true)
			if err == nil {
				_, err = Validate(context.Background(), testShop, tt, testCatalog, ValidateFull, time.Now())
			}
			wantRefusal(t, err, tc.code, tc.param)
		})
	}
	if _, err := ParseCreate([]byte(body(one(`"action":"set","attribute":"html","value":"x"`), "")), 1, time.Now()); err == nil {
		t.Fatal("the API's create took DOM changes")
	}
}
