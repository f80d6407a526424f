// Package mcpserver provides Lift's MCP tools: one tool per operation of the
// public v1 API, each a call to a running Lift's /v1 over HTTP with a bearer
// token. Being a client of v1, not of the services, every tool answers with
// v1's auth, scopes, rate limits, audit record and error envelopes; it needs
// neither the store nor the warehouse.
package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client calls one Lift's v1 API.
type Client struct {
	// BaseURL is the Lift server (https://lift.example.com); a trailing /v1
	// is allowed.
	BaseURL string
	// Token is the v1 bearer secret. Empty means "the caller's": the
	// Authorization header the MCP request came with (the /mcp endpoint).
	Token string
	// HTTP sends the requests; nil means a client that gives up after
	// DefaultTimeout. Redirects are never followed, whichever client: v1
	// answers a trailing slash with a 301 to another resource (the list
	// for get_test with an empty id), which must not come back as the
	// answer (MCP audit M2).
	HTTP *http.Client
}

// DefaultTimeout bounds one v1 call of the default client: a Lift that
// accepts and never answers would otherwise hold the tool call until the
// assistant cancels it. v1 answers within its own request timeout (30 s
// by default); results and exports are polled, never waited for.
const DefaultTimeout = 2 * time.Minute

// maxAnswer is the largest v1 answer passed on: a tool result is read by a
// model, and v1's largest (a results snapshot with breakdowns) is far
// below it.
const maxAnswer = 16 << 20

var defaultHTTP = &http.Client{Timeout: DefaultTimeout}

// call sends method path (relative to /v1) with an optional JSON body and
// header, and returns the response body on 2xx. Any other status becomes a
// tool error carrying v1's code and message.
func (c *Client) call(ctx context.Context, req *mcp.CallToolRequest, method, path string, query url.Values, body []byte, header http.Header) (*mcp.CallToolResult, error) {
	// A base given as …/v1 (the API's documented server URL) is the same server.
	u := strings.TrimSuffix(strings.TrimRight(c.BaseURL, "/"), "/v1") + "/v1" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		hr.Header[k] = vs
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if auth := c.authorization(req); auth != "" {
		hr.Header.Set("Authorization", auth)
	}
	hc := *cmp.Or(c.HTTP, defaultHTTP)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("lift v1 %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("lift v1 %s %s: %w", method, path, err)
	}
	if len(out) > maxAnswer {
		return refuse("api_error", "answer_too_large", "", fmt.Sprintf("v1 answered %s %s with more than %d MiB; narrow the request (fewer breakdown dimensions, a shorter date range).",
			method, path, maxAnswer>>20)), nil
	}
	if resp.StatusCode/100 != 2 {
		return toolError(resp.StatusCode, out), nil
	}
	if len(bytes.TrimSpace(out)) == 0 {
		// v1 answers results with 202 and no body until the first set is
		// computed; an empty text would read as an empty result, and
		// "retry later" would have an assistant poll an ended test for
		// ever (docs/results.md: it answers 202 every time).
		out = []byte(fmt.Sprintf(`{"status":%d,"message":"Accepted: nothing to show yet (v1 answered %d with no body). An active test gets its first results about 15 minutes after it started (the default): retry later. A paused, ended or archived test without results gets none until it runs again: ask for them with create_result_query."}`,
			resp.StatusCode, resp.StatusCode))
	}
	res := toolText(false, string(out))
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		res.Content = append(res.Content, &mcp.TextContent{Text: "Idempotent-Replayed: this idempotency key was used before; the answer is the first request's, nothing new was created."})
	}
	return res, nil
}

func toolText(isError bool, texts ...string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: isError}
	for _, t := range texts {
		res.Content = append(res.Content, &mcp.TextContent{Text: t})
	}
	return res
}

// authorization is the header to send: the configured token, else the one
// the MCP request carried over HTTP.
func (c *Client) authorization(req *mcp.CallToolRequest) string {
	if c.Token != "" {
		return "Bearer " + c.Token
	}
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		return req.Extra.Header.Get("Authorization")
	}
	return ""
}

// envelope is v1's error body.
type envelope struct {
	Error struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Param   string `json:"param"`
	} `json:"error"`
}

// argumentOf names the tool argument behind a v1 param where the two are
// spelled differently (a query key with brackets, a header), so an
// assistant knows which argument to fix.
var argumentOf = map[string]string{
	"created_at[gte]": "created_at_gte", "created_at[gt]": "created_at_gt",
	"created_at[lte]": "created_at_lte", "created_at[lt]": "created_at_lt",
	"include": "include_results_summary", "Idempotency-Key": "idempotency_key",
}

// toolError turns a non-2xx v1 answer into an IsError result: a first line
// "code: message" a model can act on, then the envelope as v1 sent it
// (findings, details and param included).
// refuse is an error the tool finds itself, before or after v1: the same
// line and envelope as one v1 answered, so an assistant reads one shape.
func refuse(typ, code, param, message string) *mcp.CallToolResult {
	var e envelope
	e.Error.Type, e.Error.Code, e.Error.Param, e.Error.Message = typ, code, param, message
	body, _ := json.Marshal(e) // four strings: cannot fail
	return toolError(0, body)
}

func toolError(status int, body []byte) *mcp.CallToolResult {
	var e envelope
	line := fmt.Sprintf("http_%d: %s", status, strings.TrimSpace(string(body)))
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
		line = e.Error.Code + ": " + e.Error.Message
		if arg, ok := argumentOf[e.Error.Param]; ok {
			line += " (tool argument " + arg + ")"
		}
	}
	return toolText(true, line, string(body))
}
