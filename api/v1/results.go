package v1

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/store"
)

// Results serves a test's results (contract §2.8, §2.9, §4.4): the latest
// snapshot, and custom result queries computed by the worker.
type Results struct {
	DB      *store.DB
	Results *jobs.Results // validates, records and enqueues custom queries
	Now     func() time.Time
}

// Routes mounts the results endpoints on g (the /v1 group). POST spends the
// result-query budget (router.go policy) and needs only the read scope.
func (h *Results) Routes(g gin.IRouter) {
	g.GET("/experiments/:id/results", api.Query(), api.Handle(h.snapshot))
	g.POST("/experiments/:id/results", api.Query(), api.Handle(h.createQuery))
	g.GET("/experiments/:id/results/:query_id", api.Query(), api.Handle(h.query))
}

func (h *Results) now() time.Time {
	if h.Now == nil {
		return time.Now().UTC()
	}
	return h.Now().UTC()
}

// snapshot answers the latest snapshot: 422 before the test ran, 202 with
// no body until one exists (also for an ended test that never had one), and
// otherwise the stored snapshot, unchanged until the next one (a paused test
// keeps the one it had).
func (h *Results) snapshot(c *gin.Context) error {
	shop := api.Shop(c)
	id, err := testID(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	t, err := h.DB.FindTestByID(ctx, shop.ID, id)
	if err != nil {
		return err
	}
	if t.Status == experiment.StatusDraft || t.Status == experiment.StatusPreview {
		return jobs.ErrResultsNotAvailable(t)
	}
	s, err := h.DB.LatestSnapshot(ctx, shop.ID, id)
	if err != nil {
		return err
	}
	if s == nil {
		c.Status(http.StatusAccepted)
		c.Writer.WriteHeaderNow()
		return nil
	}
	refreshing := t.Status == experiment.StatusActive && h.now().Sub(s.ComputedAt) >= jobs.SnapshotEvery
	writeRaw(c, http.StatusOK, withField(s.Body, "isRefreshing", refreshing))
	return nil
}

// withField adds one field to a stored JSON object. Snapshots are stored as
// computed; isRefreshing depends on when they are read.
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
	shop := api.Shop(c)
	id, err := testID(c)
	if err != nil {
		return err
	}
	body, err := api.ReadBody(c)
	if err != nil {
		return err
	}
	var req jobs.QueryRequest
	if len(bytes.TrimSpace(body)) > 0 { // no body: the whole run, no breakdown
		if err := api.DecodeJSONBytes(body, &req); err != nil {
			return err
		}
	}
	q, err := h.Results.CreateQuery(c.Request.Context(), shop, id, req)
	if err != nil {
		return err
	}
	return writeQuery(c, http.StatusAccepted, q)
}

// query reads a custom query as computed; it never recomputes.
func (h *Results) query(c *gin.Context) error {
	shop := api.Shop(c)
	id, err := testID(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	if _, err := h.DB.FindTestByID(ctx, shop.ID, id); err != nil {
		return err
	}
	q, err := h.DB.FindResultQuery(ctx, shop.ID, id, c.Param("query_id"))
	if err != nil {
		return err
	}
	return writeQuery(c, http.StatusOK, q)
}

// writeQuery renders a results_query (§2.9): result fields only when
// completed, failure_reason only when failed.
func writeQuery(c *gin.Context, status int, q *store.ResultQuery) error {
	out := map[string]any{}
	if q.Status == store.QueryCompleted && len(q.Body) > 0 {
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
	if q.Status == store.QueryFailed {
		out["failure_reason"] = q.FailureReason
	}
	api.WriteJSON(c, status, out)
	return nil
}

// Summary is the ResultsSummaryFunc of the tests resource: the summary of
// the latest snapshot, or nil before the first.
func (h *Results) Summary(ctx context.Context, shopID, testID int64) (json.RawMessage, error) {
	s, err := h.DB.LatestSnapshot(ctx, shopID, testID)
	if err != nil || s == nil {
		return nil, err
	}
	return s.Summary, nil
}
