package storefront_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/api/storefront"
)

// The track-event route's cost per request, as lift bench ingest sees it
// but without the network: go test -run x -bench . -benchmem
// ./api/storefront/ (not part of make test). The WAL fsync is real, so the
// calls run from many goroutines, as the group commit expects.

// benchRoute is the surface behind the middleware the ingest role puts in
// front of it (cmd/lift observe and router), with a no-op metrics observer
// and an access log that writes nothing for accepted tracking calls.
func benchRoute(b *testing.B, withMiddleware bool) http.Handler {
	var shops storefront.ShopResolver
	bd := setup(b, func(c *storefront.Config) { shops = c.Shops })
	if !withMiddleware {
		return bd.srv
	}
	r := gin.New()
	r.Use(api.RequestIDs(), api.ObserveRequests(func(string, string, int, time.Duration) {}),
		api.AccessLog(slog.New(slog.NewTextHandler(io.Discard, nil)), storefront.Tracking...), gin.Recovery())
	if err := api.TrustProxies(r, nil); err != nil {
		b.Fatal(err)
	}
	h, err := storefront.New(storefront.Config{Ingester: bd.in, Shops: shops})
	if err != nil {
		b.Fatal(err)
	}
	h.Mount(r)
	return r
}

func benchTrackEvent(b *testing.B, withMiddleware bool) {
	srv := benchRoute(b, withMiddleware)
	body := strings.ReplaceAll(eventBody("", "product_viewed", "101"), "\n\t\t", "")
	target := storefront.PathTrackEvent + "?shop=" + shopDomain
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", target, strings.NewReader(body))
			req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
			req.Header.Set("User-Agent", browserAgent)
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if w.Code != http.StatusAccepted {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	})
}

func BenchmarkTrackEvent(b *testing.B)               { benchTrackEvent(b, false) }
func BenchmarkTrackEventWithMiddleware(b *testing.B) { benchTrackEvent(b, true) }
