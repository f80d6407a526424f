package mcpserver

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

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

// DateRange bounds a custom result query by calendar day.
type DateRange struct {
	GTE string `json:"gte,omitempty" jsonschema:"first day, YYYY-MM-DD"`
	LTE string `json:"lte,omitempty" jsonschema:"last day, YYYY-MM-DD"`
}

// ResultQueryInput is POST /v1/experiments/{id}/results: the test's id and
// the ResultsQueryInput body, every field of which is optional.
type ResultQueryInput struct {
	ID             string     `json:"id" jsonschema:"the test's id (digits)"`
	DateRange      *DateRange `json:"date_range,omitempty" jsonschema:"days to count (default the whole run)"`
	Breakdown      []string   `json:"breakdown,omitempty" jsonschema:"up to 3 of device, country, visitor_type, utm_source, utm_medium, utm_campaign, traffic_source, landing_page, date"`
	SampleBasis    string     `json:"sample_basis,omitempty" jsonschema:"visitors (default) or sessions"`
	MetricSet      string     `json:"metric_set,omitempty" jsonschema:"core (default) or engagement"`
	ProductGroupID string     `json:"product_group_id,omitempty" jsonschema:"count only orders of this product group"`
	ProductID      string     `json:"product_id,omitempty" jsonschema:"count only orders of this product; requires product_group_id"`
	Analysis       *Analysis  `json:"analysis,omitempty" jsonschema:"override the test's analysis options for this query; omitted fields keep the test's"`
}

// Analysis is the query body's analysis override: pointers, so an omitted
// option keeps the test's instead of being sent as false or 0.
type Analysis struct {
	Sequential *bool    `json:"sequential,omitempty" jsonschema:"always-valid p-values and intervals, safe to read at any time"`
	CUPED      *bool    `json:"cuped,omitempty" jsonschema:"adjust mean metrics with each visitor's pre-exposure value"`
	Winsorize  *float64 `json:"winsorize,omitempty" jsonschema:"percentile money metrics are capped at, e.g. 0.99; 0 turns capping off"`
	Correction string   `json:"correction,omitempty" jsonschema:"across variants: holm, benjamini_hochberg or none"`
}

// GetResultQueryInput is GET /v1/experiments/{id}/results/{query_id}.
type GetResultQueryInput struct {
	ID      string `json:"id" jsonschema:"the test's id (digits)"`
	QueryID string `json:"query_id" jsonschema:"the id create_result_query returned"`
}

// CreateExportInput is POST /v1/experiments/{id}/exports.
type CreateExportInput struct {
	ID             string `json:"id" jsonschema:"the test's id (digits)"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"Idempotency-Key: a retry with the same key returns the first export (1 to 255 characters)"`
}

// GetExportInput is GET /v1/exports/{id}.
type GetExportInput struct {
	ExportID string `json:"export_id" jsonschema:"the export's id"`
}

// New returns an MCP server whose tools call c.
func New(c *Client, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "lift", Version: version}, nil)
	read := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "list_tests", Annotations: read,
		Description: "List the shop's A/B tests, newest first (GET /v1/experiments)."}, c.listTests)
	mcp.AddTool(s, &mcp.Tool{Name: "get_test", Annotations: read,
		Description: "Get one test with its groups and schedule (GET /v1/experiments/{id})."}, c.getTest)
	mcp.AddTool(s, &mcp.Tool{Name: "get_results", Annotations: read,
		Description: "The test's latest results snapshot per group (GET /v1/experiments/{id}/results)."}, c.getResults)
	mcp.AddTool(s, &mcp.Tool{Name: "create_result_query",
		Description: "Start a custom result query: a date range, breakdowns, sample basis, product filter or analysis options (POST /v1/experiments/{id}/results). Poll get_result_query with its id."}, c.createResultQuery)
	mcp.AddTool(s, &mcp.Tool{Name: "get_result_query", Annotations: read,
		Description: "A custom result query's status and, once done, its results (GET /v1/experiments/{id}/results/{query_id})."}, c.getResultQuery)
	mcp.AddTool(s, &mcp.Tool{Name: "create_export",
		Description: "Start a CSV export of the test's orders (POST /v1/experiments/{id}/exports). Poll get_export for the download URL."}, c.createExport)
	mcp.AddTool(s, &mcp.Tool{Name: "get_export", Annotations: read,
		Description: "An export's status and, once ready, its signed download URL (GET /v1/exports/{id})."}, c.getExport)
	for _, a := range lifecycle {
		mcp.AddTool(s, &mcp.Tool{Name: a.action + "_test", Description: a.doc}, c.action(a.action))
	}
	return s
}

// lifecycle are the test's status actions, POST /v1/experiments/{id}/{action}.
var lifecycle = []struct{ action, doc string }{
	{"start", "Start a draft, preview or failed test (POST /v1/experiments/{id}/start)."},
	{"pause", "Pause an active test (POST /v1/experiments/{id}/pause)."},
	{"resume", "Resume a paused test: it is active again (POST /v1/experiments/{id}/resume)."},
	{"end", "End an active or paused test for good; its results stay (POST /v1/experiments/{id}/end)."},
	{"archive", "Archive a draft, preview, ended or failed test (POST /v1/experiments/{id}/archive)."},
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

// queryBody is ResultQueryInput without the path's id: the v1 body refuses
// unknown fields.
type queryBody struct {
	DateRange      *DateRange `json:"date_range,omitempty"`
	Breakdown      []string   `json:"breakdown,omitempty"`
	SampleBasis    string     `json:"sample_basis,omitempty"`
	MetricSet      string     `json:"metric_set,omitempty"`
	ProductGroupID string     `json:"product_group_id,omitempty"`
	ProductID      string     `json:"product_id,omitempty"`
	Analysis       *Analysis  `json:"analysis,omitempty"`
}

func (c *Client) createResultQuery(ctx context.Context, req *mcp.CallToolRequest, in ResultQueryInput) (*mcp.CallToolResult, any, error) {
	body := queryBody{in.DateRange, in.Breakdown, in.SampleBasis, in.MetricSet, in.ProductGroupID, in.ProductID, in.Analysis}
	res, err := c.call(ctx, req, http.MethodPost, "/experiments/"+url.PathEscape(in.ID)+"/results", nil, body, nil)
	return res, nil, err
}

func (c *Client) getResultQuery(ctx context.Context, req *mcp.CallToolRequest, in GetResultQueryInput) (*mcp.CallToolResult, any, error) {
	path := "/experiments/" + url.PathEscape(in.ID) + "/results/" + url.PathEscape(in.QueryID)
	res, err := c.call(ctx, req, http.MethodGet, path, nil, nil, nil)
	return res, nil, err
}

func (c *Client) createExport(ctx context.Context, req *mcp.CallToolRequest, in CreateExportInput) (*mcp.CallToolResult, any, error) {
	h := http.Header{}
	if in.IdempotencyKey != "" {
		h.Set("Idempotency-Key", in.IdempotencyKey)
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
