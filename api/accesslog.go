package api

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// AccessLog writes one line per request: request id, method, route pattern,
// status, latency, response size and, once authentication found it, the
// shop's domain. It logs the route pattern, never the URL: query strings
// carry link signatures and storefront identifiers, and headers carry
// tokens, so neither is logged. Probes and scrapes (/healthz, /readyz,
// /metrics) log at debug level so they do not drown the rest, and so do
// accepted storefront tracking calls: an ingest node answers tens of
// thousands a second, and an unbuffered line each would cost more than the
// request (the ingest metrics count them instead); refused ones still log.
func AccessLog(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := routeOf(c)
		level := slog.LevelInfo
		switch {
		case route == "/healthz", route == "/readyz", route == "/metrics":
			level = slog.LevelDebug
		case c.Writer.Status() < 400 && isTracking(route):
			level = slog.LevelDebug
		}
		if c.Writer.Status() >= 500 {
			level = slog.LevelWarn
		}
		if !log.Enabled(context.Background(), level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("request_id", RequestID(c)),
			slog.String("method", c.Request.Method),
			slog.String("route", route),
			slog.Int("status", c.Writer.Status()),
			slog.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000),
			slog.Int("bytes", max(c.Writer.Size(), 0)),
		}
		if shop := Shop(c); shop != nil {
			attrs = append(attrs, slog.String("shop", shop.Domain))
		} else if domain := c.GetString(logShopKey); domain != "" {
			attrs = append(attrs, slog.String("shop", domain))
		}
		log.LogAttrs(context.Background(), level, "request", attrs...)
	}
}

const logShopKey = "lift.log_shop"

// NoteShop names the shop of a request that is not authenticated as one
// (storefront tracking names it by domain) for the access log.
func NoteShop(c *gin.Context, domain string) { c.Set(logShopKey, domain) }

// isTracking reports the storefront's high-volume tracking routes.
func isTracking(route string) bool {
	for _, p := range []string{"/api/track/", "/api/observe", "/api/analytics/", "/api/get-session"} {
		if strings.HasPrefix(route, p) {
			return true
		}
	}
	return false
}
