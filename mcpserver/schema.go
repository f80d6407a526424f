package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// idSchema is T's inferred input schema with the path ids constrained, so
// a call that would name another route is refused before it is sent.
func idSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err)) // a programming error, caught by the tests
	}
	for name, p := range s.Properties {
		switch name {
		case "id":
			p.Pattern = testIDPattern
		case "query_id", "export_id":
			p.Pattern = wordPattern
		}
	}
	return s
}

// listTestsSchema is list_tests' inferred schema plus the one closed
// vocabulary among its filters. The comma-separated lists and limit stay
// open: v1 answers a wrong value with the param to fix.
func listTestsSchema() *jsonschema.Schema {
	s := idSchema[ListTestsInput]()
	s.Properties["scheduled"].Enum = []any{"true", "false", nil} // null: not sent, as the type allows
	return s
}

// resultQuerySchema is create_result_query's input: the test's id and the
// properties of v1's ResultsQueryInput, taken from the OpenAPI document
// with its references inlined. Defaults are dropped: the SDK fills them
// into the arguments, and an omitted analysis option must keep the test's
// rather than become its default.
func resultQuerySchema(doc []byte) (*jsonschema.Schema, error) {
	var d struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("the v1 document: %w", err)
	}
	var body any
	if err := json.Unmarshal(d.Components.Schemas["ResultsQueryInput"], &body); err != nil {
		return nil, fmt.Errorf("ResultsQueryInput: %w", err)
	}
	body, err := inline(body, d.Components.Schemas, 0)
	if err != nil {
		return nil, err
	}
	props, ok := body.(map[string]any)["properties"].(map[string]any)
	if !ok {
		return nil, errors.New("ResultsQueryInput has no properties")
	}
	// v1 reads null as "not sent" (or, for analysis options, "back to the
	// default"); models send null for arguments they do not use. The
	// schema lets null through for v1 to judge (review-3 R4).
	for _, p := range props {
		nullable(p, 1)
	}
	props["id"] = map[string]any{"type": "string", "pattern": testIDPattern, "description": "the test's id (digits)"}
	raw, err := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": []string{"id"}, "properties": props})
	if err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("ResultsQueryInput as JSON Schema: %w", err)
	}
	return s, nil
}

// nullable lets a property schema also be null, and the properties of an
// object property, depth levels down.
func nullable(v any, depth int) {
	p, ok := v.(map[string]any)
	if !ok {
		return
	}
	switch t := p["type"].(type) {
	case string:
		if t != "null" {
			p["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			p["type"] = append(t, "null")
		}
	}
	if e, ok := p["enum"].([]any); ok && !slices.Contains(e, nil) {
		p["enum"] = append(e, nil)
	}
	if children, ok := p["properties"].(map[string]any); ok && depth > 0 {
		for _, c := range children {
			nullable(c, depth-1)
		}
	}
}

// inline replaces each {"$ref": "#/components/schemas/X"} in v by X (the
// ref's sibling keys, a description, kept) and drops "default" keys.
func inline(v any, schemas map[string]json.RawMessage, depth int) (any, error) {
	if depth > 8 {
		return nil, errors.New("references nest too deep (a cycle?)")
	}
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		if ref, ok := v["$ref"].(string); ok {
			var target map[string]any
			if err := json.Unmarshal(schemas[strings.TrimPrefix(ref, "#/components/schemas/")], &target); err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
			resolved, err := inline(target, schemas, depth+1) // only a reference deepens: a cycle stops
			if err != nil {
				return nil, err
			}
			out = resolved.(map[string]any)
		}
		for k, e := range v {
			if k == "$ref" || k == "default" {
				continue
			}
			r, err := inline(e, schemas, depth)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			r, err := inline(e, schemas, depth)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}
