package api

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

// AccessLog writes one line per request: request id, method, route pattern,
// status, latency, response size and, once authentication found it, the
// shop's domain. It logs the route pattern, never the URL: query strings
// carry link signatures and storefront identifiers, and headers carry
// tokens, so neither is logged. Probes and scrapes (/healthz, /readyz,
// /metrics) log at debug level so they do not drown the rest, and so do
// accepted calls of the routes in quietOK (storefront tracking: an ingest
// node answers tens of thousands a second, and an unbuffered line each would
// cost more than the request; the ingest metrics count them instead);
// refused ones still log.
func AccessLog(log *slog.Logger, quietOK ...string) gin.HandlerFunc {
	quiet := map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}
	for _, r := range quietOK {
		quiet[r] = true
	}
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := routeOf(c)
		level := slog.LevelInfo
		switch status := c.Writer.Status(); {
		case status >= 500:
			level = slog.LevelWarn
		case status < 400 && quiet[route]:
			level = slog.LevelDebug
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
		} else if s, ok := c.Get(logShopKey); ok {
			attrs = append(attrs, slog.String("shop", s.(*experiment.Shop).Domain))
		}
		log.LogAttrs(context.Background(), level, "request", attrs...)
	}
}

const logShopKey = "lift.log_shop"

// NoteShop names the shop of a request that is not authenticated as one
// (storefront tracking names it by domain) for the access log.
// It keeps the pointer: the domain is read only if a line is written.
func NoteShop(c *gin.Context, shop *experiment.Shop) { c.Set(logShopKey, shop) }
