package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/metrics"
)

// BenchmarkMiddleware is each middleware the ingest role puts in front of
// the storefront routes, alone in front of a handler that answers 202, and
// all of them together: what each costs a tracking call, with allocs/op.
// go test -run x -bench Middleware -benchmem ./api/ (not part of make test).
func BenchmarkMiddleware(b *testing.B) {
	m := metrics.New()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	trust := func(r *gin.Engine) {
		if err := api.TrustProxies(r, []string{"10.0.0.0/8"}); err != nil {
			b.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		mount func(r *gin.Engine)
	}{
		{"None", func(*gin.Engine) {}},
		{"RequestIDs", func(r *gin.Engine) { r.Use(api.RequestIDs()) }},
		{"Metrics", func(r *gin.Engine) { r.Use(api.ObserveRequests(m.ObserveRequest)) }},
		{"AccessLog", func(r *gin.Engine) { r.Use(api.AccessLog(quiet, "/api/track/event")) }},
		{"Recovery", func(r *gin.Engine) { r.Use(gin.Recovery()) }},
		{"TrustProxies", trust},
		{"Surface", func(r *gin.Engine) { r.Use(api.UseSurface(api.SurfaceSession)) }},
		{"All", func(r *gin.Engine) {
			r.Use(api.RequestIDs(), api.ObserveRequests(m.ObserveRequest), api.AccessLog(quiet, "/api/track/event"), gin.Recovery())
			trust(r)
			r.Use(api.UseSurface(api.SurfaceSession))
		}},
	}
	gin.SetMode(gin.ReleaseMode)
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			r := gin.New()
			tc.mount(r)
			r.POST("/api/track/event", func(c *gin.Context) { c.Status(http.StatusAccepted) })
			req := httptest.NewRequest("POST", "/api/track/event?shop=x", nil)
			req.Header.Set("X-Forwarded-For", "1.2.3.4")
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				r.ServeHTTP(w, req)
			}
		})
	}
}
