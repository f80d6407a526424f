package api_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/lifttest"
)

// TestAccessLogProbes: a probe logs when its answer changes, not at every
// probe: through an outage of five probes, one warn line when it starts
// failing and one info line when it recovers.
func TestAccessLogProbes(t *testing.T) {
	t.Parallel()
	logs := &lifttest.Logs{}
	r := gin.New()
	r.Use(api.AccessLog(slog.New(slog.NewJSONHandler(logs, nil))))
	status := http.StatusOK
	r.GET("/readyz", func(c *gin.Context) { c.Status(status) })
	probe := func(s int) {
		status = s
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		if w.Code != s {
			t.Fatalf("readyz = %d, want %d", w.Code, s)
		}
	}
	for _, s := range []int{200, 200, 503, 503, 503, 503, 503, 200, 200} {
		probe(s)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	want := [][]string{
		{`"level":"WARN"`, `"status":503`, `"previous_status":200`},
		{`"level":"INFO"`, `"status":200`, `"previous_status":503`},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d (the two changes):\n%s", len(lines), len(want), logs.String())
	}
	for i, parts := range want {
		for _, p := range parts {
			if !strings.Contains(lines[i], p) {
				t.Errorf("line %d = %s, want it to hold %s", i, lines[i], p)
			}
		}
	}
}
