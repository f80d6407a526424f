package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The input types below mirror the v1 operations' parameters and bodies
// (api/v1/openapi.json): same names, same vocabularies, so a tool call
// and the API request it becomes say the same thing. Each jsonschema tag is
// the field's description in the tool's input schema.

// ListTestsInput is GET /v1/experiments's query.
type ListTestsInput struct {
	Limit        *int    `json:"limit,omitempty" jsonschema:"page size, 1 to 100 (default 10)"`
	Cursor       *string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Status       *string `json:"status,omitempty" jsonschema:"one status or a comma-separated list of draft, preview, active, paused, ended, failed, archived"`
	Type         *string `json:"type,omitempty" jsonschema:"one type or a comma-separated list of price, shipping, theme, template, url_redirect, checkout, offer, visual_editor, combined"`
	Scheduled    *string `json:"scheduled,omitempty" jsonschema:"true or false: drafts and previews with a start_at"`
	CreatedGTE   *string `json:"created_at_gte,omitempty" jsonschema:"created at or after this RFC 3339 time"`
	CreatedGT    *string `json:"created_at_gt,omitempty" jsonschema:"created after this RFC 3339 time"`
	CreatedLTE   *string `json:"created_at_lte,omitempty" jsonschema:"created at or before this RFC 3339 time"`
	CreatedLT    *string `json:"created_at_lt,omitempty" jsonschema:"created before this RFC 3339 time"`
	IncludeStats bool    `json:"include_results_summary,omitempty" jsonschema:"add each test's results summary (include=results_summary)"`
}

// TestInput names one test.
type TestInput struct {
	ID string `json:"id" jsonschema:"the test's id (digits)"`
}

// GetTestInput is GET /v1/experiments/{id}.
type GetTestInput struct {
	ID           string `json:"id" jsonschema:"the test's id (digits)"`
	IncludeStats bool   `json:"include_results_summary,omitempty" jsonschema:"add the test's results summary (include=results_summary)"`
}

// GetResultQueryInput is GET /v1/experiments/{id}/results/{query_id}.
type GetResultQueryInput struct {
	ID      string `json:"id" jsonschema:"the test's id (digits)"`
	QueryID string `json:"query_id" jsonschema:"the id create_result_query returned (rq_…)"`
}

// CreateExportInput is POST /v1/experiments/{id}/exports. The key is a
// pointer so that one sent empty reaches v1 (400 invalid_idempotency_key)
// instead of quietly becoming no key, and a retry a duplicate export.
type CreateExportInput struct {
	ID             string  `json:"id" jsonschema:"the test's id (digits)"`
	IdempotencyKey *string `json:"idempotency_key,omitempty" jsonschema:"sent as the Idempotency-Key header: a retry with the same key returns the first export instead of a new one (1 to 255 characters)"`
}

// GetExportInput is GET /v1/exports/{id}.
type GetExportInput struct {
	ExportID string `json:"export_id" jsonschema:"the id create_export returned (export_…)"`
}

// The path ids' patterns: a test id is v1's (digits, no leading zero,
// within int64: api.TestID), a query or export id a word. An empty id or
// one with a slash would name another route of v1 (an empty get_test id was
// the test list: MCP audit M2), and "01" passed the schema only to be a
// 404 from v1.
const (
	testIDPattern = `^[1-9][0-9]{0,17}$`
	wordPattern   = `^[A-Za-z0-9_-]+$`
)

// New returns an MCP server whose tools call c. v1Doc is the v1 API's
// OpenAPI document (api/v1/openapi.json): create_result_query's arguments
// are its ResultsQueryInput, vocabularies and limits included, so the tool
// accepts what the API accepts and the two cannot drift apart.
func New(c *Client, version string, v1Doc []byte) (*mcp.Server, error) {
	query, err := resultQuerySchema(v1Doc)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	// A stateless server's tool list never changes and it sends no log
	// messages, so it advertises neither (the SDK's default says both).
	s := mcp.NewServer(&mcp.Implementation{Name: "lift", Version: version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	closed := new(bool) // each tool reaches one Lift only
	read := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: closed}
	}
	// The two creates change nothing of the shop (read scope suffices):
	// not destructive, so a client need not ask as if they did.
	create := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, DestructiveHint: new(bool), OpenWorldHint: closed}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "list_tests", Annotations: read("List tests"), InputSchema: listTestsSchema(),
		Description: "List the shop's A/B tests, newest first (GET /v1/experiments)."}, c.listTests)
	mcp.AddTool(s, &mcp.Tool{Name: "get_test", Annotations: read("Get a test"), InputSchema: idSchema[GetTestInput](),
		Description: "Get one test with its groups and schedule (GET /v1/experiments/{id})."}, c.getTest)
	mcp.AddTool(s, &mcp.Tool{Name: "get_results", Annotations: read("Get a test's results"), InputSchema: idSchema[TestInput](),
		Description: "The test's latest results snapshot per group (GET /v1/experiments/{id}/results)."}, c.getResults)
	mcp.AddTool(s, &mcp.Tool{Name: "create_result_query", Annotations: create("Query a test's results"), InputSchema: query,
		Description: "Start a custom result query: a date range, breakdowns, sample basis, product filter or analysis options (POST /v1/experiments/{id}/results). Poll get_result_query with its id."}, c.createResultQuery)
	mcp.AddTool(s, &mcp.Tool{Name: "get_result_query", Annotations: read("Get a result query"), InputSchema: idSchema[GetResultQueryInput](),
		Description: "A custom result query's status and, once done, its results (GET /v1/experiments/{id}/results/{query_id})."}, c.getResultQuery)
	mcp.AddTool(s, &mcp.Tool{Name: "create_export", Annotations: create("Export a test's orders"), InputSchema: idSchema[CreateExportInput](),
		Description: "Start a CSV export of the test's orders (POST /v1/experiments/{id}/exports). Poll get_export for the download URL."}, c.createExport)
	mcp.AddTool(s, &mcp.Tool{Name: "get_export", Annotations: read("Get an export"), InputSchema: idSchema[GetExportInput](),
		Description: "An export's status and, once ready, its signed download URL (GET /v1/exports/{id})."}, c.getExport)
	for _, a := range lifecycle {
		// Repeating an action is a 200 that changes nothing (contract
		// part 3): idempotent. Ending and archiving cannot be undone.
		ann := &mcp.ToolAnnotations{Title: a.title, IdempotentHint: true, DestructiveHint: &a.final, OpenWorldHint: closed}
		mcp.AddTool(s, &mcp.Tool{Name: a.action + "_test", Description: a.doc, Annotations: ann, InputSchema: idSchema[TestInput]()}, c.action(a.action))
	}
	return s, nil
}

// lifecycle are the test's status actions, POST /v1/experiments/{id}/{action}.
var lifecycle = []struct {
	action, title, doc string
	final              bool
}{
	{"start", "Start a test", "Start a draft, preview or failed test (POST /v1/experiments/{id}/start). Refused with 422 launch_blocked, naming the test, while another active or paused test changes the same product price, shipping zone, theme, template or redirected page for visitors both can reach: end that one first.", false},
	{"pause", "Pause a test", "Pause an active test (POST /v1/experiments/{id}/pause).", false},
	{"resume", "Resume a test", "Resume a paused test: it is active again (POST /v1/experiments/{id}/resume). Refused with 422 launch_blocked as start is, while another live test changes the same part of the storefront.", false},
	{"end", "End a test", "End an active or paused test for good; its results stay (POST /v1/experiments/{id}/end).", true},
	{"archive", "Archive a test", "Archive a draft, preview, ended or failed test (POST /v1/experiments/{id}/archive).", true},
}

func (c *Client) listTests(ctx context.Context, req *mcp.CallToolRequest, in ListTestsInput) (*mcp.CallToolResult, any, error) {
	// What the caller sent goes to v1 as sent, 0 and "" included, so v1
	// answers it (limit 0 and an empty cursor are 400 there); only what
	// the caller left out stays out.
	q := url.Values{}
	if in.Limit != nil {
		q.Set("limit", strconv.Itoa(*in.Limit))
	}
	for k, v := range map[string]*string{"cursor": in.Cursor, "status": in.Status, "type": in.Type, "scheduled": in.Scheduled,
		"created_at[gte]": in.CreatedGTE, "created_at[gt]": in.CreatedGT, "created_at[lte]": in.CreatedLTE, "created_at[lt]": in.CreatedLT} {
		if v != nil {
			q.Set(k, *v)
		}
	}
	if in.IncludeStats {
		q.Set("include", "results_summary")
	}
	res, err := c.call(ctx, req, http.MethodGet, "/experiments", q, nil, nil)
	return res, nil, err
}

func (c *Client) getTest(ctx context.Context, req *mcp.CallToolRequest, in GetTestInput) (*mcp.CallToolResult, any, error) {
	q := url.Values{}
	if in.IncludeStats {
		q.Set("include", "results_summary")
	}
	res, err := c.call(ctx, req, http.MethodGet, "/experiments/"+url.PathEscape(in.ID), q, nil, nil)
	return res, nil, err
}

func (c *Client) getResults(ctx context.Context, req *mcp.CallToolRequest, in TestInput) (*mcp.CallToolResult, any, error) {
	res, err := c.call(ctx, req, http.MethodGet, "/experiments/"+url.PathEscape(in.ID)+"/results", nil, nil, nil)
	return res, nil, err
}

// createResultQuery sends the arguments but id to v1 as the body, exactly
// as given: null, "" and 0 mean to v1 what they mean in a direct call (a
// typed copy dropped "" and null: MCP audit M3, M4).
func (c *Client) createResultQuery(ctx context.Context, req *mcp.CallToolRequest, in map[string]json.RawMessage) (*mcp.CallToolResult, any, error) {
	var id string
	if err := json.Unmarshal(in["id"], &id); err != nil {
		return nil, nil, fmt.Errorf("id: %w", err)
	}
	delete(in, "id")
	body, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	res, err := c.call(ctx, req, http.MethodPost, "/experiments/"+url.PathEscape(id)+"/results", nil, body, nil)
	return res, nil, err
}

func (c *Client) getResultQuery(ctx context.Context, req *mcp.CallToolRequest, in GetResultQueryInput) (*mcp.CallToolResult, any, error) {
	path := "/experiments/" + url.PathEscape(in.ID) + "/results/" + url.PathEscape(in.QueryID)
	res, err := c.call(ctx, req, http.MethodGet, path, nil, nil, nil)
	return res, nil, err
}

func (c *Client) createExport(ctx context.Context, req *mcp.CallToolRequest, in CreateExportInput) (*mcp.CallToolResult, any, error) {
	h := http.Header{}
	if in.IdempotencyKey != nil {
		// The key travels as a header: read as HTTP reads one (spaces and
		// tabs around it are not part of it), so the same key sent with
		// curl is the same key (review-3 R9); a control character cannot
		// travel at all.
		key := strings.Trim(*in.IdempotencyKey, " \t")
		if strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return refuse("invalid_request_error", "invalid_idempotency_key", "Idempotency-Key",
				"idempotency_key is sent as the Idempotency-Key header, which cannot hold a control character such as a newline."), nil, nil
		}
		h["Idempotency-Key"] = []string{key}
	}
	res, err := c.call(ctx, req, http.MethodPost, "/experiments/"+url.PathEscape(in.ID)+"/exports", nil, nil, h)
	return res, nil, err
}

func (c *Client) getExport(ctx context.Context, req *mcp.CallToolRequest, in GetExportInput) (*mcp.CallToolResult, any, error) {
	res, err := c.call(ctx, req, http.MethodGet, "/exports/"+url.PathEscape(in.ExportID), nil, nil, nil)
	return res, nil, err
}

// action is the handler of one lifecycle tool.
func (c *Client) action(name string) mcp.ToolHandlerFor[TestInput, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in TestInput) (*mcp.CallToolResult, any, error) {
		res, err := c.call(ctx, req, http.MethodPost, "/experiments/"+url.PathEscape(in.ID)+"/"+name, nil, nil, nil)
		return res, nil, err
	}
}
