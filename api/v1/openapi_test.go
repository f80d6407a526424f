package v1_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/store"
)

// TestOpenAPICoversTheMountedRoutes walks the real router: every mounted /v1
// route is in the document and every documented route is mounted.
func TestOpenAPICoversTheMountedRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Servers []struct{ URL string }                `json:"servers"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(v1.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || !strings.HasSuffix(doc.Servers[0].URL, "/v1") {
		t.Fatalf("openapi %q, server %v", doc.OpenAPI, doc.Servers)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" /v1"+path)
		}
	}
	param := regexp.MustCompile(`:([a-z_]+)`)
	var mounted []string
	for _, r := range e.routes {
		if strings.HasPrefix(r.Path, "/v1/") {
			mounted = append(mounted, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
		}
	}
	sort.Strings(documented)
	sort.Strings(mounted)
	if diff := cmp.Diff(documented, mounted); diff != "" {
		t.Fatalf("documented (-) and mounted (+) routes differ:\n%s", diff)
	}

	s := e.newShop(store.ShopUpdate{})
	r := s.do(t, "GET", "/v1/openapi.json", "")
	if r.Status != 200 || r.Body["openapi"] != "3.1.0" {
		t.Fatalf("GET /v1/openapi.json = %d", r.Status)
	}
}
