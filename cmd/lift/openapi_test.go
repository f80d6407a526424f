package main

import (
	"encoding/json"
	"testing"
)

// TestPublicOpenAPI: the real router serves the v1 document at
// /openapi.json without a token, as valid JSON whose every operation has a
// unique operationId and a tag the document declares.
func TestPublicOpenAPI(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	r := s.do("GET", "/openapi.json", "", "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("GET /openapi.json = %d %s", r.status, r.header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string                                 `json:"openapi"`
		Tags    []struct{ Name, Description string }   `json:"tags"`
		Paths   map[string]map[string]*json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || len(doc.Paths) == 0 {
		t.Fatalf("openapi %q with %d paths", doc.OpenAPI, len(doc.Paths))
	}
	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		if tag.Description == "" {
			t.Errorf("tag %s has no description", tag.Name)
		}
		declared[tag.Name] = true
	}
	ids := map[string]string{}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				OperationID string   `json:"operationId"`
				Tags        []string `json:"tags"`
			}
			if err := json.Unmarshal(*raw, &op); err != nil {
				t.Fatal(err)
			}
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", where)
			} else if prev, dup := ids[op.OperationID]; dup {
				t.Errorf("operationId %s on both %s and %s", op.OperationID, prev, where)
			}
			ids[op.OperationID] = where
			if len(op.Tags) == 0 {
				t.Errorf("%s has no tag", where)
			}
			for _, tag := range op.Tags {
				if !declared[tag] {
					t.Errorf("%s: tag %s is not declared", where, tag)
				}
			}
		}
	}
	// The /v1 copy still wants a token, as before.
	wantError(t, s.do("GET", "/v1/openapi.json", "", ""), 401, "authentication_error", "missing_token", nil)
}
