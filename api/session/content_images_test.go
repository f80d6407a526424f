package session_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestContentImages: a content test's groups may show other images of a
// product (an image test). The session surface takes numeric product ids
// and imageUrls, adds the products to the test's products, and reads them
// back; v1 reads the same test as visual_editor content with global ids;
// what the storefront cannot show is a 400 naming it, and nothing is made.
func TestContentImages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const path = "/api/content-experiments/create"
	body := func(products, images string) string {
		if products != "" {
			products = `"products":` + products + `,`
		}
		return `{"name":"Hero",` + products + `"testGroups":[{"name":"Control","weight":50},
			{"name":"Lifestyle","weight":50,"images":` + images + `}]}`
	}
	for _, tc := range []struct {
		name, products, images string
		// wantProducts is the session's products afterwards; wantMsg, when
		// set, part of the 400's message.
		wantProducts []string
		wantMsg      string
	}{
		{"added to the products", ``, `[{"productId":"8101","imageUrls":["/cdn/shop/files/tee-b.jpg","https://cdn.example.com/tee-c.jpg"]}]`,
			[]string{"8101"}, ""},
		{"after the listed ones", `[{"productId":"8107"}]`, `[{"productId":"gid://shopify/Product/8101","imageUrls":["/b.jpg"]}]`,
			[]string{"8107", "8101"}, ""},
		{"already listed", `[{"productId":"8101"}]`, `[{"productId":"8101","imageUrls":["/b.jpg"]}]`, []string{"8101"}, ""},
		{"not numeric", ``, `[{"productId":"tee","imageUrls":["/b.jpg"]}]`, nil, "testGroups[1].images[0].productId must be a numeric Product id"},
		{"unknown product", ``, `[{"productId":"999999","imageUrls":["/b.jpg"]}]`, nil, "no product 999999"},
		{"no images", ``, `[{"productId":"8101","imageUrls":[]}]`, nil, "1 to 20 URLs"},
		{"http", ``, `[{"productId":"8101","imageUrls":["http://cdn.example.com/b.jpg"]}]`, nil, "testGroups[1]: An image is an https URL or a path on the shop's site"},
		{"twice", ``, `[{"productId":"8101","imageUrls":["/b.jpg"]},{"productId":"8101","imageUrls":["/c.jpg"]}]`, nil, "images twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := e.newShop()
			if tc.wantMsg != "" {
				msg := wantError(t, s.do(t, "POST", path, body(tc.products, tc.images)), http.StatusBadRequest)
				if !strings.Contains(msg, tc.wantMsg) {
					t.Fatalf("message %q, want it to contain %q", msg, tc.wantMsg)
				}
				if l := s.list(t); len(l) != 0 {
					t.Fatalf("a refused create made %v", l)
				}
				return
			}
			id := s.created(t, path, body(tc.products, tc.images))
			d := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
			if diff := cmp.Diff(tc.wantProducts, productIDs(d)); diff != "" {
				t.Fatalf("products mismatch (-want +got):\n%s", diff)
			}
			groups := d["testGroups"].([]any)
			got := groups[1].(map[string]any)["images"].([]any)[0].(map[string]any)
			if got["productId"] != "8101" || len(got["imageUrls"].([]any)) == 0 || groups[0].(map[string]any)["images"] != nil {
				t.Fatalf("groups read back as %v", groups)
			}
			r := s.v1(t, "GET", "/v1/experiments/"+id, "")
			content := r.obj()["test_groups"].([]any)[1].(map[string]any)["content"].(map[string]any)
			im := content["images"].([]any)[0].(map[string]any)
			if r.obj()["type"] != "visual_editor" || im["product_id"] != "gid://shopify/Product/8101" {
				t.Fatalf("v1 reads group 1's content as %v", content)
			}
		})
	}
}

// TestContentDOMChanges: the admin panel authors the visual editor's DOM
// changes on content create and reads them back; v1 reads them, refuses
// to rewrite the group's content (409 editor_owned_content) and to create
// them; what the tracker cannot apply is a 400 naming it.
func TestContentDOMChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const path = "/api/content-experiments/create"
	body := func(changes string) string {
		return `{"name":"Copy","testGroups":[{"name":"Control","weight":50},{"name":"Bold","weight":50,"domChanges":` + changes + `}]}`
	}
	s := e.newShop()
	id := s.created(t, path, body(`[{"selector":"h1.title","action":"set","attribute":"html","value":"The softest tee"},
		{"selector":".reviews","action":"set","attribute":"position","parentSelector":"main","insertBeforeSelector":".description"}]`))
	d := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
	want := []any{
		map[string]any{"selector": "h1.title", "action": "set", "attribute": "html", "value": "The softest tee"},
		map[string]any{"selector": ".reviews", "action": "set", "attribute": "position", "parentSelector": "main", "insertBeforeSelector": ".description"},
	}
	if diff := cmp.Diff(want, d["testGroups"].([]any)[1].(map[string]any)["domChanges"]); diff != "" {
		t.Fatalf("domChanges read back (-want +got):\n%s", diff)
	}
	r := s.v1(t, "GET", "/v1/experiments/"+id, "")
	changes := r.obj()["test_groups"].([]any)[1].(map[string]any)["content"].(map[string]any)["dom_changes"].([]any)
	if len(changes) != 2 || changes[1].(map[string]any)["parent_selector"] != "main" {
		t.Fatalf("v1 reads dom_changes as %v", changes)
	}
	p := s.v1(t, "PATCH", "/v1/experiments/"+id, `{"test_groups":[{"index":1,"content":{"custom_css":"h1{}"}}]}`)
	v1e, _ := p.obj()["error"].(map[string]any)
	if code, param := v1Error(p); p.Status != http.StatusConflict || v1e["type"] != "conflict_error" ||
		code != "editor_owned_content" || param != "test_groups[1].content.custom_css" {
		t.Fatalf("v1 PATCH of the editor's group = %d %s, want 409 conflict_error editor_owned_content at test_groups[1].content.custom_css", p.Status, p.Raw)
	}
	// Nor can v1 create them.
	c := s.v1(t, "POST", "/v1/experiments", `{"type":"visual_editor","name":"v","test_groups":[{"index":0,"name":"A","split":50},
		{"index":1,"name":"B","split":50,"content":{"dom_changes":[{"selector":"h1","action":"set","attribute":"html","value":"x"}]}}]}`)
	if code, param := v1Error(c); c.Status != http.StatusUnprocessableEntity || code != "invalid_request" || param != "test_groups[1].content" {
		t.Fatalf("v1 create with DOM changes = %d %s, want 422 invalid_request at test_groups[1].content", c.Status, c.Raw)
	}
	for _, tc := range []struct{ name, changes, wantMsg string }{
		{"an unknown action", `[{"selector":"h1","action":"replace","attribute":"html","value":"x"}]`, "set, append or remove"},
		{"html removed", `[{"selector":"h1","action":"remove","attribute":"html"}]`, "set or appended"},
		{"a move without its parent", `[{"selector":"h1","action":"set","attribute":"position"}]`, "parentSelector"},
		{"an unknown field", `[{"selector":"h1","action":"set","attribute":"html","text":"x"}]`, "text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := e.newShop()
			msg := wantError(t, s.do(t, "POST", path, body(tc.changes)), http.StatusBadRequest)
			if !strings.Contains(msg, tc.wantMsg) {
				t.Fatalf("message %q, want it to contain %q", msg, tc.wantMsg)
			}
			if l := s.list(t); len(l) != 0 {
				t.Fatalf("a refused create made %v", l)
			}
		})
	}
}
