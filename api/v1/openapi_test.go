package v1_test

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/store"
)

// TestOpenAPIIsServed checks the document is OpenAPI 3.1 for the /v1 server
// and is served as is. That it covers exactly the mounted routes is checked
// on the real program's router (cmd/lift TestOpenAPICoversTheRealRouter),
// which mounts every resource.
func TestOpenAPIIsServed(t *testing.T) {
	t.Parallel()
	var doc struct {
		OpenAPI string                 `json:"openapi"`
		Servers []struct{ URL string } `json:"servers"`
	}
	if err := json.Unmarshal(v1.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || len(doc.Servers) == 0 || !strings.HasSuffix(doc.Servers[0].URL, "/v1") {
		t.Fatalf("openapi %q, servers %v", doc.OpenAPI, doc.Servers)
	}
	s := newEnv(t).newShop(store.ShopUpdate{})
	r := s.do(t, "GET", "/v1/openapi.json", "")
	if r.Status != 200 || r.Body["openapi"] != "3.1.0" {
		t.Fatalf("GET /v1/openapi.json = %d", r.Status)
	}
}
