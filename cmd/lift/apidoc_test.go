package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/liftab/lift/api/apidoc"
	"github.com/liftab/lift/config"
)

var updateExamples = flag.Bool("update-examples", false, "rewrite api/apidoc/examples.json from the answers TestAPIDocumentMatchesAnswers records")

// apiDoc fetches GET /openapi.json from the real router, without a token.
func apiDoc(t *testing.T, s *server) (raw []byte, doc map[string]any) {
	t.Helper()
	r := s.do("GET", "/openapi.json", "", "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("GET /openapi.json = %d %s", r.status, r.header.Get("Content-Type"))
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return r.raw, doc
}

// TestAPIDocumentValid: the public document passes the OpenAPI 3.1 schema
// (libopenapi-validator), every operation has a unique operationId, a
// declared tag and a summary, every 4xx answer names its surface's error
// envelope, and every JSON body and 2xx JSON answer carries an example.
func TestAPIDocumentValid(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	raw, doc := apiDoc(t, s)
	d, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s (%s)", e.ValidationType, e.Message, e.Reason)
		}
	}
	declared := map[string]bool{}
	for _, tag := range doc["tags"].([]any) {
		m := tag.(map[string]any)
		if m["description"] == "" || m["description"] == nil {
			t.Errorf("tag %s has no description", m["name"])
		}
		declared[m["name"].(string)] = true
	}
	ids := map[string]string{}
	for _, o := range operations(doc) {
		where := o.method + " " + o.path
		id, _ := o.op["operationId"].(string)
		if prev, dup := ids[id]; id == "" || dup {
			t.Errorf("%s: operationId %q missing or also on %s", where, id, prev)
		}
		ids[id] = where
		if s, _ := o.op["summary"].(string); s == "" {
			t.Errorf("%s has no summary", where)
		}
		tags, _ := o.op["tags"].([]any)
		if len(tags) == 0 || !declared[fmt.Sprint(tags[0])] {
			t.Errorf("%s: tags %v not declared", where, tags)
		}
		if _, has := o.op["security"]; !has {
			t.Errorf("%s says nothing of its credential (security)", where)
		}
		if rb, ok := o.op["requestBody"].(map[string]any); ok && !hasExample(rb) {
			t.Errorf("%s: request body without an example", where)
		}
		for code, resp := range o.op["responses"].(map[string]any) {
			js := string(mustJSON(t, resp))
			switch {
			case code[0] == '4' && fmt.Sprint(tags) == "[apps]" && !strings.Contains(js, "text/plain"):
				// Pages and assets for browsers answer as a file server does.
				t.Errorf("%s %s: a page's 4xx is the file server's plain text", where, code)
			case code[0] == '4' && fmt.Sprint(tags) != "[apps]" && !strings.Contains(js, "#/components/schemas/ErrorEnvelope") && !strings.Contains(js, "#/components/schemas/SessionError"):
				t.Errorf("%s %s: a 4xx without the error envelope", where, code)
			case code[0] == '2' && strings.Contains(js, "application/json") && !hasExample(resp.(map[string]any)):
				t.Errorf("%s %s: JSON answer without an example", where, code)
			}
		}
	}
}

// TestAPIDocumentMatchesRouter: every route the router serves is in the
// document, and every documented operation is served. v1's HEAD routes
// are the one exception: v1's description says every GET answers HEAD.
func TestAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(c *config.Config) { c.Admin.APIKey = "admin" })
	_, doc := apiDoc(t, s)
	served := map[string]bool{}
	for _, r := range s.engine.Routes() {
		path := apidoc.PathOf(r.Path)
		if r.Method == "HEAD" && strings.HasPrefix(path, "/v1/") {
			continue
		}
		served[r.Method+" "+path] = true
	}
	documented := map[string]bool{}
	for _, o := range operations(doc) {
		documented[strings.ToUpper(o.method)+" "+o.path] = true
	}
	for _, k := range sortedKeys(served) {
		if !documented[k] {
			t.Errorf("served but not documented: %s", k)
		}
	}
	for _, k := range sortedKeys(documented) {
		if !served[k] {
			t.Errorf("documented but not served: %s", k)
		}
	}
}

// TestAPIDocs: /docs renders the document with the embedded Redoc, under a
// same-origin CSP, and its script is cached by ETag.
func TestAPIDocs(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	r := s.do("GET", "/docs", "", "")
	if r.status != 200 || !strings.Contains(string(r.raw), `spec-url="/openapi.json"`) || !strings.Contains(r.header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("GET /docs = %d %q %s", r.status, r.header.Get("Content-Security-Policy"), r.raw)
	}
	js := s.do("GET", "/docs/redoc.standalone.js", "", "")
	if js.status != 200 || len(js.raw) < 100_000 || js.header.Get("ETag") == "" || !strings.HasPrefix(js.header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("GET /docs/redoc.standalone.js = %d, %d bytes, ETag %q", js.status, len(js.raw), js.header.Get("ETag"))
	}
	if again := s.do("GET", "/docs/redoc.standalone.js", "", "", "If-None-Match", js.header.Get("ETag")); again.status != 304 || len(again.raw) != 0 {
		t.Fatalf("revalidation = %d with %d bytes", again.status, len(again.raw))
	}
	if miss := s.do("GET", "/docs/..%2fapidoc.go", "", ""); miss.status != 404 {
		t.Fatalf("an unknown asset = %d", miss.status)
	}
	// v1's own copy of its document still wants a token, as before.
	wantError(t, s.do("GET", "/v1/openapi.json", "", ""), 401, "authentication_error", "missing_token", nil)
}

type operation struct {
	method, path string
	op           map[string]any
}

func operations(doc map[string]any) []operation {
	var out []operation
	for p, item := range doc["paths"].(map[string]any) {
		for m, o := range item.(map[string]any) {
			if op, ok := o.(map[string]any); ok && m != "parameters" {
				out = append(out, operation{m, p, op})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	return out
}

func hasExample(x map[string]any) bool {
	c, _ := x["content"].(map[string]any)
	for _, media := range c {
		m, _ := media.(map[string]any)
		if m["example"] != nil || m["examples"] != nil {
			return true
		}
	}
	return false
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
