package v1

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// ResultsSummaryFunc returns a test's results summary for
// `?include=results_summary`, or nil when no snapshot exists yet. The results
// surface provides it; until then every summary is null.
type ResultsSummaryFunc func(ctx context.Context, shopID, testID int64) (json.RawMessage, error)

// Experiments serves the tests resource of the public API: each handler
// parses, calls one method of the tests' service and renders.
type Experiments struct {
	Service *experiment.Service
	Summary ResultsSummaryFunc
	// Warnings, when set, adds a test's standing webhook warnings
	// (THEMES_PUBLISH) to GET /v1/experiments/{id}.
	Warnings experiment.TestWarningReader
}

// Routes mounts the tests resource on g (the /v1 group, after the auth,
// rate-limit and scope middleware); idem guards the create with
// Idempotency-Key.
func (h *Experiments) Routes(g gin.IRouter, idem gin.HandlerFunc) {
	read(g, "/experiments", api.Query(listParams...), api.Handle(h.list))
	g.POST("/experiments", api.Query(), idem, api.Handle(h.create))
	read(g, "/experiments/:id", api.Query("include"), api.Handle(h.get))
	g.PATCH("/experiments/:id", api.Query(), api.Handle(h.update))
	for _, a := range []experiment.Action{experiment.ActionStart, experiment.ActionPause, experiment.ActionResume,
		experiment.ActionEnd, experiment.ActionArchive} {
		g.POST("/experiments/:id/"+string(a), api.Query(), api.NoBody, api.Handle(h.action(a)))
	}
	g.POST("/experiments/:id/test_groups/:index/preview", api.Query(), api.NoBody, api.Handle(h.preview))
	read(g, "/openapi.json", api.Query(), serveOpenAPI)
}

// testJSON is the wire form of a test (part 2.2).
type testJSON struct {
	Object string `json:"object"`
	*experiment.Test
	ResultsSummary json.RawMessage       `json:"results_summary,omitempty"`
	Warnings       *[]experiment.Finding `json:"warnings,omitempty"`
}

// testView renders t; summary non-nil adds results_summary (JSON null when
// there is none yet), warnings non-nil adds the warnings of a write.
func testView(t *experiment.Test, summary json.RawMessage, warnings []experiment.Finding) testJSON {
	v := testJSON{Object: "experiment", Test: t, ResultsSummary: summary}
	if t.Shared == nil {
		t.Shared = map[string]json.RawMessage{}
	}
	if t.Groups == nil {
		t.Groups = []experiment.Group{}
	}
	if warnings != nil {
		v.Warnings = &warnings
	}
	return v
}

func (h *Experiments) create(c *gin.Context) error {
	body, err := api.ReadBody(c)
	if err != nil {
		return err
	}
	out, err := h.Service.Create(c.Request.Context(), api.Shop(c), body, reply(http.StatusCreated))
	if err != nil {
		return err
	}
	writeRaw(c, out.Status, out.Body)
	return nil
}

// reply renders a write's outcome: a preview link, or the test with the
// warnings of a create or update. It runs inside the write, so a request
// under an Idempotency-Key replays exactly these bytes.
func reply(status int) experiment.Reply {
	return func(o *experiment.Outcome) (int, []byte, error) {
		var v any = testView(o.Test, nil, o.Warnings)
		if o.Preview != nil {
			v = o.Preview
		}
		b, err := json.Marshal(v)
		if err != nil {
			return 0, nil, fmt.Errorf("v1: encode response: %w", err)
		}
		return status, b, nil
	}
}

func (h *Experiments) get(c *gin.Context) error {
	shop := api.Shop(c)
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	include, err := parseInclude(c.Query("include"), c.Request.URL.Query().Has("include"))
	if err != nil {
		return err
	}
	t, err := h.Service.Get(c.Request.Context(), shop, id)
	if err != nil {
		return err
	}
	summary, err := h.summary(c.Request.Context(), shop.ID, t, include)
	if err != nil {
		return err
	}
	var warnings []experiment.Finding
	if h.Warnings != nil {
		if warnings, err = h.Warnings.FindTestWarnings(c.Request.Context(), shop.ID, t.ID); err != nil {
			return err
		}
	}
	if len(warnings) == 0 {
		warnings = nil // a test without warnings answers as before
	}
	api.WriteJSON(c, http.StatusOK, testView(t, summary, warnings))
	return nil
}

func (h *Experiments) summary(ctx context.Context, shopID int64, t *experiment.Test, include bool) (json.RawMessage, error) {
	if !include {
		return nil, nil
	}
	if h.Summary != nil {
		s, err := h.Summary(ctx, shopID, t.ID)
		if err != nil {
			return nil, err
		}
		if len(s) > 0 {
			return s, nil
		}
	}
	return json.RawMessage("null"), nil
}

func parseInclude(v string, present bool) (bool, error) {
	if !present {
		return false, nil
	}
	if v != "results_summary" {
		return false, api.Invalid("invalid_include", "include", "include takes results_summary; got %q.", v)
	}
	return true, nil
}

func (h *Experiments) update(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	body, err := api.ReadBody(c)
	if err != nil {
		return err
	}
	out, err := h.Service.Update(c.Request.Context(), api.Shop(c), id, body, reply(http.StatusOK))
	if err != nil {
		return err
	}
	writeRaw(c, out.Status, out.Body)
	return nil
}

func (h *Experiments) action(a experiment.Action) api.HandlerFunc {
	return func(c *gin.Context) error {
		id, err := api.TestID(c, "id")
		if err != nil {
			return err
		}
		out, err := h.Service.Apply(c.Request.Context(), api.Shop(c), id, a, reply(http.StatusOK))
		if err != nil {
			return err
		}
		writeRaw(c, out.Status, out.Body)
		return nil
	}
}

func (h *Experiments) preview(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	index, err := api.GroupIndex(c, "index")
	if err != nil {
		return err
	}
	out, err := h.Service.Preview(c.Request.Context(), api.Shop(c), id, index, reply(http.StatusOK))
	if err != nil {
		return err
	}
	writeRaw(c, out.Status, out.Body)
	return nil
}

type listJSON struct {
	Object     string     `json:"object"`
	Data       []testJSON `json:"data"`
	HasMore    bool       `json:"has_more"`
	NextCursor *string    `json:"next_cursor"`
}

func (h *Experiments) list(c *gin.Context) error {
	shop := api.Shop(c)
	q := c.Request.URL.Query()
	f, err := parseFilter(q.Get, q.Has)
	if err != nil {
		return err
	}
	include, err := parseInclude(q.Get("include"), q.Has("include"))
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	tests, more, err := h.Service.List(ctx, shop, f)
	if err != nil {
		return err
	}
	out := listJSON{Object: "list", Data: make([]testJSON, 0, len(tests)), HasMore: more}
	for _, t := range tests {
		summary, err := h.summary(ctx, shop.ID, t, include)
		if err != nil {
			return err
		}
		out.Data = append(out.Data, testView(t, summary, nil))
	}
	if more {
		last := tests[len(tests)-1]
		cur := encodeCursor(experiment.Cursor{CreatedAt: last.CreatedAt, ID: last.ID})
		out.NextCursor = &cur
	}
	api.WriteJSON(c, http.StatusOK, out)
	return nil
}

// parseFilter reads the list's query parameters. A bad limit is 400
// invalid_request, a bad cursor 400 invalid_cursor, a value outside a
// vocabulary 422 invalid_request naming the parameter.
func parseFilter(get func(string) string, has func(string) bool) (experiment.Filter, error) {
	f := experiment.Filter{Limit: 10}
	if has("limit") {
		n, err := strconv.Atoi(get("limit"))
		if err != nil || n < 1 || n > 100 {
			return f, api.Invalid("invalid_request", "limit", "limit is a whole number from 1 to 100; got %q.", get("limit"))
		}
		f.Limit = n
	}
	if has("cursor") {
		cur, ok := decodeCursor(get("cursor"))
		if !ok {
			return f, api.Invalid("invalid_cursor", "cursor", "cursor is not one this API gave out; send next_cursor back unchanged.")
		}
		f.After = &cur
	}
	vocab := func(name string) *experiment.Error {
		return experiment.Refuse("invalid_request", name, "%s %q is not a known value.", name, get(name))
	}
	if has("status") {
		for _, s := range strings.Split(get("status"), ",") {
			if !experiment.Status(s).Known() {
				return f, vocab("status")
			}
			f.Statuses = append(f.Statuses, experiment.Status(s))
		}
	}
	if has("type") {
		for _, s := range strings.Split(get("type"), ",") {
			if !experiment.Type(s).Known() {
				return f, vocab("type")
			}
			f.Types = append(f.Types, experiment.Type(s))
		}
	}
	if has("scheduled") {
		b, err := strconv.ParseBool(get("scheduled"))
		if err != nil || (get("scheduled") != "true" && get("scheduled") != "false") {
			return f, vocab("scheduled")
		}
		f.Scheduled = &b
	}
	for name, dst := range map[string]**time.Time{"created_at[gt]": &f.CreatedGT, "created_at[gte]": &f.CreatedGE,
		"created_at[lt]": &f.CreatedLT, "created_at[lte]": &f.CreatedLE} {
		if !has(name) {
			continue
		}
		t, err := time.Parse(time.RFC3339, get(name))
		if err != nil {
			return f, experiment.Refuse("invalid_request", name,
				"%s is an ISO 8601 date-time such as 2026-01-31T00:00:00Z; got %q.", name, get(name))
		}
		*dst = &t
	}
	return f, nil
}

// Cursors are opaque to clients: "c1.<unix micros>.<id>", base64url-encoded.
func encodeCursor(c experiment.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("c1.%d.%d", c.CreatedAt.UnixMicro(), c.ID)))
}

func decodeCursor(s string) (experiment.Cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return experiment.Cursor{}, false
	}
	var micros, id int64
	if n, err := fmt.Sscanf(string(raw), "c1.%d.%d", &micros, &id); err != nil || n != 2 || id <= 0 ||
		string(raw) != fmt.Sprintf("c1.%d.%d", micros, id) {
		return experiment.Cursor{}, false
	}
	return experiment.Cursor{CreatedAt: time.UnixMicro(micros).UTC(), ID: id}, true
}

func writeRaw(c *gin.Context, status int, body []byte) {
	c.Data(status, "application/json; charset=utf-8", body)
}
