// Package mcpserver provides Lift's MCP tools: one tool per operation of the
// public v1 API, each a call to a running Lift's /v1 over HTTP with a bearer
// token. Being a client of v1, not of the services, every tool answers with
// v1's auth, scopes, rate limits, audit record and error envelopes; it needs
// neither the store nor the warehouse.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

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
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
}

// call sends method path (relative to /v1) with an optional JSON body and
// header, and returns the response body on 2xx. Any other status becomes a
// tool error carrying v1's code and message.
func (c *Client) call(ctx context.Context, req *mcp.CallToolRequest, method, path string, query url.Values, body any, header http.Header) (*mcp.CallToolResult, error) {
	// A base given as …/v1 (the API's documented server URL) is the same server.
	u := strings.TrimSuffix(strings.TrimRight(c.BaseURL, "/"), "/v1") + "/v1" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
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
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("lift v1 %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("lift v1 %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return toolError(resp.StatusCode, out), nil
	}
	if len(bytes.TrimSpace(out)) == 0 {
		// v1 answers results with 202 and no body until the first set is
		// computed; an empty text would read as an empty result.
		out = []byte(fmt.Sprintf(`{"status":%d,"message":"Accepted: nothing to show yet (v1 answered %d with no body); for results, the first set is still being computed, so retry later."}`,
			resp.StatusCode, resp.StatusCode))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
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
	} `json:"error"`
}

// toolError turns a non-2xx v1 answer into an IsError result: a first line
// "code: message" a model can act on, then the envelope as v1 sent it
// (findings, details and param included).
func toolError(status int, body []byte) *mcp.CallToolResult {
	var e envelope
	line := fmt.Sprintf("http_%d: %s", status, strings.TrimSpace(string(body)))
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
		line = e.Error.Code + ": " + e.Error.Message
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
		&mcp.TextContent{Text: line}, &mcp.TextContent{Text: string(body)},
	}}
}
