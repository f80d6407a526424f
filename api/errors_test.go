package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

func init() { gin.SetMode(gin.TestMode) }

// answer runs err through WriteError on the given surface.
func answer(surface Surface, err error, header ...string) (int, map[string]any, http.Header) {
	r := gin.New()
	r.Use(RequestIDs(), UseSurface(surface))
	r.GET("/", Handle(func(*gin.Context) error { return err }))
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	r.ServeHTTP(w, req)
	var body map[string]any
	json.Unmarshal(w.Body.Bytes(), &body)
	return w.Code, body, w.Header()
}

func TestWriteErrorV1(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		err    error
		status int
		want   map[string]any
	}{
		{"Validation", &experiment.Error{Kind: experiment.KindValidation, Code: "split_sum_invalid", Message: "m", Param: "test_groups",
			Findings: []experiment.Finding{{Severity: "error", Code: "split_sum_invalid", Message: "m", Param: "test_groups"}}},
			422, map[string]any{"type": "validation_error", "code": "split_sum_invalid", "message": "m", "param": "test_groups",
				"findings": []any{map[string]any{"severity": "error", "code": "split_sum_invalid", "message": "m", "param": "test_groups"}}}},
		{"ConflictWithDetails", experiment.Errorf(experiment.KindConflict, "invalid_status_transition", "no").WithDetails(map[string]any{"current_status": "ended"}),
			409, map[string]any{"type": "conflict_error", "code": "invalid_status_transition", "message": "no", "param": nil,
				"details": map[string]any{"current_status": "ended"}}},
		{"NotImplemented", experiment.Errorf(experiment.KindNotImplemented, "not_implemented", "no"),
			501, map[string]any{"type": "api_error", "code": "not_implemented", "message": "no", "param": nil, "request_id": "corr-1"}},
		{"InternalHidesCause", errors.New("pq: password authentication failed"),
			500, map[string]any{"type": "api_error", "code": "internal_error", "param": nil, "request_id": "corr-1",
				"message": "An internal error occurred. Retry later; if it persists, contact support with the request id."}},
		{"ValidationWithoutFindings", experiment.Errorf(experiment.KindValidation, "results_not_available", "not yet").WithParam("id"),
			422, map[string]any{"type": "validation_error", "code": "results_not_available", "message": "not yet", "param": "id",
				"findings": []any{map[string]any{"severity": "error", "code": "results_not_available", "message": "not yet", "param": "id"}}}},
		{"DependencyRefused", fmt.Errorf("store.FindToken: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
			503, map[string]any{"type": "api_error", "code": "internal_error", "param": nil, "request_id": "corr-1",
				"message": "A service Lift depends on did not answer in time; nothing was changed. Retry in a few seconds."}},
		{"ConnectionReset", fmt.Errorf("warehouse.Query: %w", syscall.ECONNRESET),
			503, map[string]any{"type": "api_error", "code": "internal_error", "param": nil, "request_id": "corr-1",
				"message": "A service Lift depends on did not answer in time; nothing was changed. Retry in a few seconds."}},
		// An adapter's own timeout (a driver's read timeout) is a
		// dependency that did not answer too.
		{"TimeoutOfAnAdapter", fmt.Errorf("x: %w", context.DeadlineExceeded),
			503, map[string]any{"type": "api_error", "code": "internal_error", "param": nil, "request_id": "corr-1",
				"message": "A service Lift depends on did not answer in time; nothing was changed. Retry in a few seconds."}},
		{"TooLarge", experiment.Errorf(experiment.KindTooLarge, "request_too_large", "big"),
			413, map[string]any{"type": "invalid_request_error", "code": "request_too_large", "message": "big", "param": nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, _ := answer(SurfaceV1, c.err, "X-Correlation-Id", "corr-1")
			if status != c.status {
				t.Errorf("status = %d, want %d", status, c.status)
			}
			if diff := cmp.Diff(map[string]any{"error": c.want}, body); diff != "" {
				t.Errorf("envelope mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteErrorSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		kind   experiment.Kind
		status int
	}{
		{"Validation", experiment.KindValidation, 400},
		{"Invalid", experiment.KindInvalidRequest, 400},
		{"NotFound", experiment.KindNotFound, 404},
		{"Unavailable", experiment.KindUnavailable, 503},
		{"Conflict", experiment.KindConflict, 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, h := answer(SurfaceSession, experiment.Errorf(c.kind, "x", "msg"))
			if status != c.status || body["status"] != "error" || body["message"] != "msg" || len(body) != 2 {
				t.Errorf("got %d %v, want %d {status:error, message:msg}", status, body, c.status)
			}
			if (status == 503) != (h.Get("Retry-After") != "") {
				t.Errorf("Retry-After = %q on %d", h.Get("Retry-After"), status)
			}
			// The session envelope has no field for the id its 5xx
			// message asks the caller to quote: the header carries it.
			if (status >= 500) != strings.HasPrefix(h.Get("X-Request-Id"), "req_") {
				t.Errorf("X-Request-Id = %q on %d", h.Get("X-Request-Id"), status)
			}
		})
	}
}

// A dependency that hangs past http.request_timeout ends the request in the
// retryable 503 of each surface, not in a wait as long as the hang.
func TestDeadlineAnswers503(t *testing.T) {
	t.Parallel()
	for _, surface := range []Surface{SurfaceV1, SurfaceSession} {
		r := gin.New()
		r.Use(RequestIDs(), Deadline(50*time.Millisecond, "/mcp"), UseSurface(surface))
		hang := Handle(func(c *gin.Context) error {
			<-c.Request.Context().Done() // a stalled Postgres, as pgx sees it
			return fmt.Errorf("store.FindToken: %w", c.Request.Context().Err())
		})
		r.GET("/v1/experiments", hang)
		r.GET("/mcp", func(c *gin.Context) {
			if _, ok := c.Request.Context().Deadline(); ok {
				t.Errorf("/mcp got a deadline")
			}
		})
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", "/v1/experiments", nil))
		var body struct {
			Status string `json:"status"`
			Error  struct{ Type, Code string }
		}
		json.Unmarshal(w.Body.Bytes(), &body)
		// v1 part 7: 503 api_error internal_error, nothing attempted; the
		// session surface: 503 {status: error, message}, with Retry-After.
		v1 := body.Error.Type == "api_error" && body.Error.Code == "internal_error"
		session := body.Status == "error" && w.Header().Get("Retry-After") != ""
		if w.Code != 503 || (surface == SurfaceV1 && !v1) || (surface == SurfaceSession && !session) {
			t.Errorf("surface %v: a hung dependency answered %d %s", surface, w.Code, w.Body)
		}
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/mcp", nil))
	}
}

// The 5xx log line names the route pattern, as the access log does, never
// the URL: paths carry ids and export links. Not parallel: it swaps the
// default logger while the parallel tests wait.
func TestErrorLogNamesTheRoute(t *testing.T) {
	var buf strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(prev)
	r := gin.New()
	r.Use(RequestIDs(), UseSurface(SurfaceV1))
	r.GET("/v1/exports/:id/download", Handle(func(*gin.Context) error { return errors.New("disk gone") }))
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/v1/exports/export_0123abcd/download?sig=s3cr3t", nil))
	line := buf.String()
	if w.Code != 500 || !strings.Contains(line, `msg="request failed"`) || !strings.Contains(line, "route=/v1/exports/:id/download") ||
		strings.Contains(line, "export_0123abcd") || strings.Contains(line, "s3cr3t") {
		t.Fatalf("status %d, logged %s", w.Code, line)
	}
}
