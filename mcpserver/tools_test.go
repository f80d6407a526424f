package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sent is what a tool call put on the wire.
type sent struct {
	method, uri, body, auth, idemKey string
}

// session connects an in-memory client to New over a peer that records
// each request and answers status with body.
func session(t *testing.T, token string, status int, body string) (*mcp.ClientSession, *[]sent) {
	return sessionAt(t, "/", token, status, body)
}

// sessionAt is session with the peer's URL followed by suffix as BaseURL.
func sessionAt(t *testing.T, suffix, token string, status int, body string) (*mcp.ClientSession, *[]sent) {
	t.Helper()
	var got []sent
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, sent{r.Method, r.URL.RequestURI(), string(b), r.Header.Get("Authorization"), fmt.Sprintf("%q", r.Header["Idempotency-Key"])})
		if status == http.StatusOK && r.Header.Get("Idempotency-Key") == "replayed" {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(peer.Close)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mustNew(t, &Client{BaseURL: peer.URL + suffix, Token: token}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, &got
}

// TestToolRequests: each tool sends the v1 request its arguments name.
func TestToolRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool string
		args map[string]any
		want sent
	}{
		{"list_tests", map[string]any{}, sent{method: "GET", uri: "/v1/experiments"}},
		{"list_tests", map[string]any{"limit": 5, "status": "active,paused", "created_at_gte": "2026-01-01T00:00:00Z", "include_results_summary": true},
			sent{method: "GET", uri: "/v1/experiments?created_at%5Bgte%5D=2026-01-01T00%3A00%3A00Z&include=results_summary&limit=5&status=active%2Cpaused"}},
		// Sent values go to v1 as sent, for v1 to judge: limit 0 and an empty cursor are 400 there.
		{"list_tests", map[string]any{"limit": 0, "cursor": ""}, sent{method: "GET", uri: "/v1/experiments?cursor=&limit=0"}},
		{"get_test", map[string]any{"id": "42"}, sent{method: "GET", uri: "/v1/experiments/42"}},
		{"get_results", map[string]any{"id": "42"}, sent{method: "GET", uri: "/v1/experiments/42/results"}},
		{"create_result_query", map[string]any{"id": "42", "breakdown": []string{"device"}, "date_range": map[string]any{"gte": "2026-01-01"}},
			sent{method: "POST", uri: "/v1/experiments/42/results", body: `{"breakdown":["device"],"date_range":{"gte":"2026-01-01"}}`}},
		{"create_result_query", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/results", body: `{}`}},
		{"create_result_query", map[string]any{"id": "42", "analysis": map[string]any{"sequential": true, "winsorize": 0, "correction": "holm"}},
			sent{method: "POST", uri: "/v1/experiments/42/results", body: `{"analysis":{"correction":"holm","sequential":true,"winsorize":0}}`}},
		// Empty values and null go as sent: v1 refuses "" and resets on null (MCP audit M3, M4).
		{"create_result_query", map[string]any{"id": "42", "date_range": map[string]any{"gte": ""}, "product_id": ""},
			sent{method: "POST", uri: "/v1/experiments/42/results", body: `{"date_range":{"gte":""},"product_id":""}`}},
		// null for an argument not used: v1 reads it as not sent (review-3 R4).
		{"create_result_query", map[string]any{"id": "42", "sample_basis": nil, "breakdown": nil, "analysis": map[string]any{"correction": nil}},
			sent{method: "POST", uri: "/v1/experiments/42/results", body: `{"analysis":{"correction":null},"breakdown":null,"sample_basis":null}`}},
		{"list_tests", map[string]any{"scheduled": nil}, sent{method: "GET", uri: "/v1/experiments"}},
		{"create_result_query", map[string]any{"id": "42", "analysis": map[string]any{"winsorize": nil, "prior": map[string]any{"mean": 0, "stddev": 0.1}}},
			sent{method: "POST", uri: "/v1/experiments/42/results", body: `{"analysis":{"prior":{"mean":0,"stddev":0.1},"winsorize":null}}`}},
		{"get_result_query", map[string]any{"id": "42", "query_id": "rq_1"}, sent{method: "GET", uri: "/v1/experiments/42/results/rq_1"}},
		{"create_export", map[string]any{"id": "42", "idempotency_key": "k1"}, sent{method: "POST", uri: "/v1/experiments/42/exports", idemKey: `["k1"]`}},
		{"create_export", map[string]any{"id": "42", "idempotency_key": ""}, sent{method: "POST", uri: "/v1/experiments/42/exports", idemKey: `[""]`}},
		{"create_export", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/exports"}},
		// As HTTP reads a header: the same key as curl's (review-3 R9).
		{"create_export", map[string]any{"id": "42", "idempotency_key": " k1\t"}, sent{method: "POST", uri: "/v1/experiments/42/exports", idemKey: `["k1"]`}},
		{"get_export", map[string]any{"export_id": "exp_9"}, sent{method: "GET", uri: "/v1/exports/exp_9"}},
		{"start_test", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/start"}},
		{"pause_test", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/pause"}},
		{"resume_test", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/resume"}},
		{"end_test", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/end"}},
		{"archive_test", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/archive"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			res, got := callTool(t, 200, `{"ok":true}`, tt.tool, tt.args)
			if res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"ok":true}` {
				t.Errorf("result = %+v, want the v1 body", res)
			}
			tt.want.auth = "Bearer lift_secret"
			if tt.want.idemKey == "" {
				tt.want.idemKey = "[]"
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("sent %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRefusedArguments: what the input schema refuses never reaches v1:
// an id that would name another route (an empty get_test id was the test
// list, MCP audit M2) or a value outside v1's vocabulary.
func TestRefusedArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool string
		args map[string]any
		want string // in the schema error
	}{
		{"get_test", map[string]any{"id": ""}, "pattern"},
		{"get_test", map[string]any{"id": "1/results"}, "pattern"},
		{"get_test", map[string]any{"id": "01"}, "pattern"}, // v1's spelling only: "01" is not test 1
		{"get_result_query", map[string]any{"id": "1", "query_id": ""}, "pattern"},
		{"get_export", map[string]any{"export_id": "../experiments"}, "pattern"},
		{"create_result_query", map[string]any{"id": "1", "sample_basis": ""}, "enum"},
		{"create_result_query", map[string]any{"id": "1", "breakdown": []string{"device", "country", "date", "utm_source"}}, "maxItems"},
		{"create_result_query", map[string]any{"id": "1", "analysis": map[string]any{"correction": "bonferroni"}}, "enum"},
		{"list_tests", map[string]any{"scheduled": "yes"}, "enum"},
		{"create_export", map[string]any{"id": "1", "idempotency_key": "k\n2"}, "invalid_idempotency_key"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			res, got := callTool(t, 200, `{"ok":true}`, tt.tool, tt.args)
			if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, tt.want) {
				t.Errorf("result %q (error %v), want a schema error naming %s", text, res.IsError, tt.want)
			}
			if len(got) != 0 {
				t.Errorf("sent %+v, want nothing", got)
			}
		})
	}
}

// callTool calls tool with args over a session whose peer answers status
// with body, and returns the result and what reached the peer.
func callTool(t *testing.T, status int, body, tool string, args map[string]any) (*mcp.CallToolResult, []sent) {
	t.Helper()
	cs, got := session(t, "lift_secret", status, body)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res, *got
}

// TestAcceptedWithoutBody: v1's 202 with no body (results not computed
// yet) must not read as an empty result.
func TestAcceptedWithoutBody(t *testing.T) {
	t.Parallel()
	cs, _ := session(t, "lift_secret", 202, "")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_results", Arguments: map[string]any{"id": "42"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, `"status":202`) || !strings.Contains(text, "retry later") || !strings.Contains(text, "ended or archived") {
		t.Fatalf("result = %q, want it to say the results are not ready", text)
	}
}

// TestBaseURL: the server's root and its /v1 name the same API.
func TestBaseURL(t *testing.T) {
	t.Parallel()
	for _, suffix := range []string{"", "/", "/v1", "/v1/"} {
		cs, got := sessionAt(t, suffix, "s", 200, `{}`)
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_export", Arguments: map[string]any{"export_id": "e1"}}); err != nil {
			t.Fatal(err)
		}
		if len(*got) != 1 || (*got)[0].uri != "/v1/exports/e1" {
			t.Errorf("base %q: sent %+v, want /v1/exports/e1", suffix, *got)
		}
	}
}

// TestToolErrors: a non-2xx answer is a tool error led by v1's code.
func TestToolErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		first  string
	}{
		{"envelope", 409, `{"error":{"type":"conflict_error","code":"invalid_status_transition","message":"Cannot pause a draft.","param":null}}`,
			"invalid_status_transition: Cannot pause a draft."},
		{"not an envelope", 502, `bad gateway`, "http_502: bad gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs, _ := session(t, "lift_secret", tt.status, tt.body)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pause_test", Arguments: map[string]any{"id": "1"}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || len(res.Content) != 2 {
				t.Fatalf("result = %+v, want a tool error with two texts", res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != tt.first {
				t.Errorf("first line %q, want %q", got, tt.first)
			}
			if got := res.Content[1].(*mcp.TextContent).Text; !strings.Contains(got, tt.body) {
				t.Errorf("second text %q, want the body", got)
			}
		})
	}
}

// mustNew is New over v1's own document, as cmd/lift passes it.
func mustNew(t *testing.T, c *Client) *mcp.Server {
	t.Helper()
	doc, err := os.ReadFile("../api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(c, "test", doc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAnswers: what a v1 answer becomes besides its body.
func TestAnswers(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxAnswer+1)
	tests := []struct {
		name    string
		status  int
		body    string
		args    map[string]any
		isError bool
		texts   []string // each in the matching content, in order
	}{
		// A redirect is v1 saying "another resource": never followed.
		{"redirect", 301, `<a href="/v1/experiments">Moved</a>`, map[string]any{"id": "1"}, true, []string{"http_301", "Moved"}},
		{"too large", 200, big, map[string]any{"id": "1"}, true, []string{"answer_too_large: v1 answered POST", `"type":"api_error","code":"answer_too_large"`}},
		// Refused before v1 is called, in the shape v1's refusals take.
		{"control character in the key", 200, `{"ok":true}`, map[string]any{"id": "1", "idempotency_key": "k\n2"}, true,
			[]string{"invalid_idempotency_key: idempotency_key is sent as the Idempotency-Key header, which cannot hold a control character such as a newline. (tool argument idempotency_key)",
				`"code":"invalid_idempotency_key"`}},
		{"param named as the argument", 422, `{"error":{"type":"invalid_request_error","code":"invalid_request","message":"Bad time.","param":"Idempotency-Key"}}`,
			map[string]any{"id": "1"}, true, []string{"invalid_request: Bad time. (tool argument idempotency_key)", `"param":"Idempotency-Key"`}},
		{"replayed", 200, `{"id":"export_1"}`, map[string]any{"id": "1", "idempotency_key": "replayed"}, false, []string{`{"id":"export_1"}`, "Idempotent-Replayed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, _ := callTool(t, tt.status, tt.body, "create_export", tt.args)
			if res.IsError != tt.isError || len(res.Content) != len(tt.texts) {
				t.Fatalf("isError %v with %d texts, want %v with %d", res.IsError, len(res.Content), tt.isError, len(tt.texts))
			}
			for i, want := range tt.texts {
				if got := res.Content[i].(*mcp.TextContent).Text; !strings.Contains(got, want) {
					t.Errorf("text %d = %.200q, want it to hold %q", i, got, want)
				}
			}
		})
	}
}

// TestToolList: what a client learns before calling: no capability the
// stateless server cannot honour, truthful hints, and create_result_query's
// arguments as v1's document has them, without defaults the SDK would fill
// in over the test's own options.
func TestToolList(t *testing.T) {
	t.Parallel()
	cs, _ := session(t, "s", 200, `{}`)
	if caps, _ := json.Marshal(cs.InitializeResult().Capabilities); string(caps) != `{"tools":{}}` {
		t.Errorf("capabilities = %s, want tools without listChanged, no logging", caps)
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]string{}
	for _, tool := range list.Tools {
		a := tool.Annotations
		hints[tool.Name] = fmt.Sprintf("read=%v destructive=%v idempotent=%v", a.ReadOnlyHint, a.DestructiveHint != nil && *a.DestructiveHint, a.IdempotentHint)
		if a.Title == "" {
			t.Errorf("%s has no title", tool.Name)
		}
		if tool.Name == "create_result_query" {
			schema, _ := json.Marshal(tool.InputSchema)
			for _, want := range []string{`"enum":["visitors","sessions",null]`, `"maxItems":3`, `"benjamini_hochberg"`, `"prior"`, `"pattern":"^[1-9][0-9]{0,17}$"`} {
				if !strings.Contains(string(schema), want) {
					t.Errorf("create_result_query schema lacks %s", want)
				}
			}
			if strings.Contains(string(schema), `"default"`) {
				t.Errorf("create_result_query schema has a default: %s", schema)
			}
		}
	}
	want := map[string]string{
		"get_results":         "read=true destructive=false idempotent=false",
		"create_result_query": "read=false destructive=false idempotent=false",
		"create_export":       "read=false destructive=false idempotent=false",
		"pause_test":          "read=false destructive=false idempotent=true",
		"end_test":            "read=false destructive=true idempotent=true",
		"archive_test":        "read=false destructive=true idempotent=true",
	}
	for name, w := range want {
		if hints[name] != w {
			t.Errorf("%s: %s, want %s", name, hints[name], w)
		}
	}
}
