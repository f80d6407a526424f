// Package apidoc serves the one public description of every HTTP surface
// Lift answers: GET /openapi.json (OpenAPI 3.1) and GET /docs (the same
// document rendered by an embedded, pinned Redoc).
//
// The v1 document stays owned by package v1 (it is also served, behind a
// token, at /v1/openapi.json); this package adds the surfaces v1 does not
// cover — the admin panel's session API, storefront tracking, webhooks,
// install and the operational endpoints — from one JSON fragment each, and
// prefixes v1's paths with /v1 so every path is absolute from the server.
package apidoc

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	v1 "github.com/liftab/lift/api/v1"
)

//go:embed session.json storefront.json webhooks.json install.json operations.json examples.json
var fragments embed.FS

// surfaces are the fragments in the order their tags are listed.
var surfaces = []string{"session", "storefront", "webhooks", "install", "operations"}

type fragment struct {
	Tags       []map[string]any          `json:"tags"`
	Paths      map[string]map[string]any `json:"paths"`
	Components map[string]map[string]any `json:"components"`
}

// Document is the combined document, built once. An error means two parts
// declare the same path, tag or component: a bug the tests catch.
var Document = sync.OnceValues(build)

func build() ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(v1.OpenAPI(), &doc); err != nil {
		return nil, fmt.Errorf("apidoc: v1 document: %w", err)
	}
	v1Security := doc["security"]
	delete(doc, "security") // per operation below: most surfaces are not bearer-token ones
	paths := map[string]any{}
	for p, ops := range doc["paths"].(map[string]any) {
		for method, o := range ops.(map[string]any) {
			if m, ok := o.(map[string]any); ok && method != "parameters" {
				if m["security"] == nil {
					m["security"] = v1Security
				}
				addRateLimitHeaders(m)
			}
		}
		paths["/v1"+p] = ops
	}
	doc["paths"] = paths
	doc["servers"] = []any{map[string]any{"url": "http://localhost:8080", "description": "lift dev; every path is absolute from the server"}}
	info := doc["info"].(map[string]any)
	info["title"] = "Lift API"
	info["description"] = intro + "\n\n## Public API v1\n\n" + info["description"].(string)
	tags, _ := doc["tags"].([]any)
	components := doc["components"].(map[string]any)
	for _, name := range surfaces {
		var f fragment
		raw, err := fragments.ReadFile(name + ".json")
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("apidoc: %s.json: %w", name, err)
		}
		for p, ops := range f.Paths {
			if _, dup := paths[p]; dup {
				return nil, fmt.Errorf("apidoc: %s.json: path %s is described twice", name, p)
			}
			paths[p] = ops
		}
		for _, t := range f.Tags {
			tags = append(tags, t)
		}
		if err := mergeComponents(components, f.Components, name); err != nil {
			return nil, err
		}
	}
	doc["tags"] = tags
	if err := addExamples(paths); err != nil {
		return nil, err
	}
	return json.MarshalIndent(doc, "", "  ")
}

// addExamples sets the example of v1's bodies and answers from
// examples.json: real answers of a real server, recorded by
// `go test ./cmd/lift -run TestAPIDocumentMatchesAnswers -update-examples`
// (package v1's document stays the schema; the examples live here so a
// schema change and a recorded answer never edit the same file).
func addExamples(paths map[string]any) error {
	raw, err := fragments.ReadFile("examples.json")
	if err != nil {
		return err
	}
	var byOp map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byOp); err != nil {
		return fmt.Errorf("apidoc: examples.json: %w", err)
	}
	for _, item := range paths {
		for _, o := range item.(map[string]any) {
			op, _ := o.(map[string]any)
			id, _ := op["operationId"].(string)
			for key, ex := range byOp[id] {
				target, _ := op["requestBody"].(map[string]any)
				if key != "request" {
					responses, _ := op["responses"].(map[string]any)
					target, _ = responses[key].(map[string]any)
				}
				setExample(target, ex)
			}
		}
	}
	return nil
}

func setExample(target map[string]any, ex json.RawMessage) {
	content, _ := target["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	if media != nil && media["example"] == nil && media["examples"] == nil {
		media["example"] = ex
	}
}

func mergeComponents(into map[string]any, from map[string]map[string]any, surface string) error {
	kinds := make([]string, 0, len(from))
	for k := range from {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		dst, _ := into[kind].(map[string]any)
		if dst == nil {
			dst = map[string]any{}
			into[kind] = dst
		}
		for name, v := range from[kind] {
			if _, dup := dst[name]; dup {
				return fmt.Errorf("apidoc: %s.json: components.%s.%s is declared twice", surface, kind, name)
			}
			dst[name] = v
		}
	}
	return nil
}

// addRateLimitHeaders declares X-RateLimit-* on every answer of a v1
// operation that takes a token: the limiter runs before anything else can
// answer, so each of them carries the headers (v1's own document names them
// where their meaning differs, on 401 and 429). Retry-After goes on 429.
func addRateLimitHeaders(op map[string]any) {
	if sec, _ := op["security"].([]any); len(sec) == 0 {
		return // the signed download: no token, no budget
	}
	responses, _ := op["responses"].(map[string]any)
	for code, r := range responses {
		resp, _ := r.(map[string]any)
		headers, _ := resp["headers"].(map[string]any)
		if headers == nil {
			headers = map[string]any{}
			resp["headers"] = headers
		}
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if headers[h] == nil {
				headers[h] = map[string]any{"$ref": "#/components/headers/" + h}
			}
		}
		if code == "429" && headers["Retry-After"] == nil {
			headers["Retry-After"] = map[string]any{"description": "Seconds until the budget refills.", "schema": map[string]any{"type": "integer"}}
		}
	}
}

// PathOf turns a gin route pattern (/v1/experiments/:id) into the
// document's path template (/v1/experiments/{id}).
func PathOf(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

const intro = "Every HTTP surface of Lift in one document. Each surface keeps its own credential and its own error envelope:\n\n" +
	"| surface | paths | credential | errors |\n|---|---|---|---|\n" +
	"| Public API v1 | `/v1/…` | `Authorization: Bearer <API token>` with scopes | `{\"error\":{\"type\",\"code\",\"message\",…}}` (ErrorEnvelope) |\n" +
	"| Admin panel (session) | `/api/experiments…`, `/api/*-experiments/…`, `/api/analytics/{…}/{id}` | `Authorization: Bearer <platform session token>` | `{\"status\":\"error\",\"message\"}` (SessionError) |\n" +
	"| Storefront tracking | `/api/get-session`, `/api/public/get-country-code`, `/api/observe…`, `/api/track/…`, `/api/storefront/config`, `/api/ga4/metadata`, legacy `/api/analytics/{add-to-cart,checkout,order}` | none (`shop` routes only) | SessionError |\n" +
	"| Admin tools | `/api/get-order`, `/api/enable-script` | `x-api-key` | SessionError |\n" +
	"| Webhooks | `/api/webhooks` | HMAC-SHA256 signature header | SessionError |\n" +
	"| Install | `/api/auth`, `/api/auth/callback` | platform OAuth | SessionError |\n" +
	"| MCP | `/mcp` (POST; any other method 405) | `Authorization: Bearer <API token>`, as v1 | ErrorEnvelope for what the transport refuses; JSON-RPC errors after |\n" +
	"| Health, metrics, this document | `/healthz`, `/readyz`, `/metrics`, `/openapi.json`, `/docs` | none | `/readyz` answers 503 with its checks |\n" +
	"| Apps (pages for browsers) | `/lift.js`, `/demo/…` (built-in fake platform only), `/app/…` | none (`/app/` then calls `/v1` with a read token) | |\n\n" +
	"Methods: every GET route of /v1 also answers HEAD (the same status and headers, no body; see Public API v1 below). Outside /v1, HEAD is served on `/lift.js` and `/app/…` and refused on `/mcp` (405; 401 without a token), and every storefront tracking route answers OPTIONS, the CORS preflight (204; `Access-Control-Allow-Methods: GET, POST, OPTIONS`, `Max-Age` 86400); those appear below as operations of their own. " +
	"`/demo/{page}` and `/app/{file}` stand for nested paths (`/demo/products/8101`, `/app/vendor/uPlot.min.css`): their parameter holds the rest of the path, slashes included.\n\n" +
	"Rate limits: v1 answers carry X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (see below); the other surfaces have no explicit rate limit (contract part 8)."
