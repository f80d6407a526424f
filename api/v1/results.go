package v1

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/results"
)

// Results serves a test's results (contract §2.8, §2.9, §4.4): the latest
// snapshot, and custom result queries computed by the worker.
type Results struct {
	Service *results.Service
}

// Routes mounts the results endpoints on g (the /v1 group). POST spends the
// result-query budget (router.go policy) and needs only the read scope.
func (h *Results) Routes(g gin.IRouter) {
	read(g, "/experiments/:id/results", api.Query(), api.Handle(h.snapshot))
	g.POST("/experiments/:id/results", api.Query(), api.Handle(h.createQuery))
	read(g, "/experiments/:id/results/:query_id", api.Query(), api.Handle(h.query))
}

// snapshot answers the latest snapshot: 422 before the test ran, 202 with
// no body until one exists (also for an ended test that never had one), and
// otherwise the stored snapshot, unchanged until the next one (a paused test
// keeps the one it had), with isRefreshing and next_refresh_at as of now.
func (h *Results) snapshot(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	l, err := h.Service.LatestSnapshot(c.Request.Context(), api.Shop(c), id)
	if err != nil {
		return err
	}
	if l.Snapshot == nil {
		c.Status(http.StatusAccepted)
		c.Writer.WriteHeaderNow()
		return nil
	}
	body := withField(l.Snapshot.Body, "isRefreshing", l.IsRefreshing)
	writeRaw(c, http.StatusOK, withField(body, "next_refresh_at", l.NextRefreshAt))
	return nil
}

// withField adds one field to a stored JSON object. Snapshots are stored as
// computed; isRefreshing and next_refresh_at depend on when they are read.
func withField(obj json.RawMessage, name string, v any) []byte {
	obj = bytes.TrimSpace(obj)
	val, _ := json.Marshal(v)
	key, _ := json.Marshal(name)
	var b bytes.Buffer
	b.Write(obj[:len(obj)-1])
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		b.WriteByte(',')
	}
	b.Write(key)
	b.WriteByte(':')
	b.Write(val)
	b.WriteByte('}')
	return b.Bytes()
}

func (h *Results) createQuery(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	body, err := api.ReadBody(c)
	if err != nil {
		return err
	}
	var req results.QueryRequest
	if len(bytes.TrimSpace(body)) > 0 { // no body: the whole run, no breakdown
		if err := api.DecodeJSONBytes(body, &req); err != nil {
			return err
		}
	}
	q, err := h.Service.CreateQuery(c.Request.Context(), api.Shop(c), id, req)
	if err != nil {
		return err
	}
	return writeQuery(c, http.StatusAccepted, q)
}

// query reads a custom query as computed; it never recomputes.
func (h *Results) query(c *gin.Context) error {
	id, err := api.TestID(c, "id")
	if err != nil {
		return err
	}
	q, err := h.Service.FindQuery(c.Request.Context(), api.Shop(c), id, c.Param("query_id"))
	if err != nil {
		return err
	}
	return writeQuery(c, http.StatusOK, q)
}

// writeQuery renders a results_query (§2.9): result fields only when
// completed, failure_reason only when failed.
func writeQuery(c *gin.Context, status int, q *results.ResultQuery) error {
	out := map[string]any{}
	if q.Status == results.QueryCompleted && len(q.Body) > 0 {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(q.Body, &fields); err != nil {
			return err
		}
		for k, v := range fields {
			out[k] = v
		}
	}
	out["object"] = "results_query"
	out["id"] = q.ID
	out["experiment_id"] = strconv.FormatInt(q.TestID, 10)
	out["status"] = q.Status
	if q.Status == results.QueryFailed {
		out["failure_reason"] = q.FailureReason
	}
	api.WriteJSON(c, status, out)
	return nil
}

// Summary is the ResultsSummaryFunc of the tests resource: the summary of
// the latest snapshot, or nil before the first.
func (h *Results) Summary(ctx context.Context, shopID, testID int64) (json.RawMessage, error) {
	return h.Service.Summary(ctx, shopID, testID)
}
