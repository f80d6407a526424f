package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
		got = append(got, sent{r.Method, r.URL.RequestURI(), string(b), r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key")})
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(peer.Close)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(&Client{BaseURL: peer.URL + suffix, Token: token}, "test").Connect(ctx, st, nil)
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
			sent{method: "POST", uri: "/v1/experiments/42/results", body: `{"date_range":{"gte":"2026-01-01"},"breakdown":["device"]}`}},
		{"create_result_query", map[string]any{"id": "42"}, sent{method: "POST", uri: "/v1/experiments/42/results", body: `{}`}},
		{"create_result_query", map[string]any{"id": "42", "analysis": map[string]any{"sequential": true, "winsorize": 0, "correction": "holm"}},
			sent{method: "POST", uri: "/v1/experiments/42/results", body: `{"analysis":{"sequential":true,"winsorize":0,"correction":"holm"}}`}},
		{"get_result_query", map[string]any{"id": "42", "query_id": "rq_1"}, sent{method: "GET", uri: "/v1/experiments/42/results/rq_1"}},
		{"create_export", map[string]any{"id": "42", "idempotency_key": "k1"}, sent{method: "POST", uri: "/v1/experiments/42/exports", idemKey: "k1"}},
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
			cs, got := session(t, "lift_secret", 200, `{"ok":true}`)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"ok":true}` {
				t.Errorf("result = %+v, want the v1 body", res)
			}
			tt.want.auth = "Bearer lift_secret"
			if len(*got) != 1 || (*got)[0] != tt.want {
				t.Errorf("sent %+v, want %+v", *got, tt.want)
			}
		})
	}
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
	if res.IsError || !strings.Contains(text, `"status":202`) || !strings.Contains(text, "still being computed") {
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
