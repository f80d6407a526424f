package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// A required dependency down makes the node unready, an optional one only
// degraded; a check that hangs and ignores its deadline is reported
// unreachable when the budget ends instead of holding /readyz.
func TestReadyz(t *testing.T) {
	t.Parallel()
	ok := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("dial tcp 10.0.0.7:5432: connection refused") }
	hang := func(context.Context) error { select {} }
	for _, c := range []struct {
		name   string
		h      Health
		status int
		state  string
	}{
		{"AllUp", Health{Required: map[string]Check{"postgres": ok}, Optional: map[string]Check{"redis": ok}}, 200, "ready"},
		{"OptionalDown", Health{Required: map[string]Check{"postgres": ok}, Optional: map[string]Check{"redis": down}}, 200, "degraded"},
		{"RequiredDown", Health{Required: map[string]Check{"postgres": down}, Optional: map[string]Check{"redis": ok}}, 503, "unavailable"},
		{"RequiredHangs", Health{Required: map[string]Check{"wal": ok, "postgres": hang}}, 503, "unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := gin.New()
			MountHealth(r, c.h)
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
			var body map[string]any
			json.Unmarshal(w.Body.Bytes(), &body)
			if w.Code != c.status || body["status"] != c.state {
				t.Fatalf("readyz = %d %s, want %d %s", w.Code, w.Body, c.status, c.state)
			}
		})
	}
}
