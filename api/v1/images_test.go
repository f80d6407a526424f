package v1_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/liftab/lift/store"
)

// TestImageTests: /v1 creates, reads and starts an image test (a
// visual_editor group's images), refuses what the storefront cannot show
// with the finding naming the field, and refuses a second live test of
// the same product's images at start.
func TestImageTests(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop(store.ShopUpdate{})
	body := func(name, images string) string {
		return fmt.Sprintf(`{"type":"visual_editor","name":%q,"shared":{"visual_editor":{"product_ids":["gid://shopify/Product/8101"]}},"test_groups":`+twoGroups+`}`,
			name, `{"images":`+images+`}`)
	}
	const tee = `[{"product_id":"gid://shopify/Product/8101","urls":["/demo/assets/tee-b.svg"]}]`
	first := s.create(t, body("Tee photo", tee))
	r := s.do(t, "GET", "/v1/experiments/"+id(first), "")
	content := r.Body["test_groups"].([]any)[1].(map[string]any)["content"].(map[string]any)
	if im := content["images"].([]any)[0].(map[string]any); im["product_id"] != "gid://shopify/Product/8101" || len(im["urls"].([]any)) != 1 {
		t.Fatalf("read back as %v", content)
	}
	wantStatus(t, s.act(t, id(first), "start"), "active")
	second := s.create(t, body("Tee photo 2", `[{"product_id":"gid://shopify/Product/8101","urls":["https://cdn.example.com/tee-c.jpg"]}]`))
	wantError(t, s.do(t, "POST", "/v1/experiments/"+id(second)+"/start", ""), http.StatusUnprocessableEntity,
		"validation_error", "launch_blocked", "")
	for _, tc := range []struct{ name, images, param string }{
		{"http", `[{"product_id":"gid://shopify/Product/8101","urls":["http://cdn.example.com/a.jpg"]}]`, "test_groups[1].content.images[0].urls[0]"},
		{"a product the test does not name", `[{"product_id":"gid://shopify/Product/8107","urls":["/a.jpg"]}]`, "test_groups[1].content.images[0].product_id"},
		{"no images", `[{"product_id":"gid://shopify/Product/8101","urls":[]}]`, "test_groups[1].content.images[0].urls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, s.do(t, "POST", "/v1/experiments", body("Bad", tc.images)), http.StatusUnprocessableEntity,
				"validation_error", "invalid_request", tc.param)
		})
	}
}
