package api

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
)

// AccessLog writes one line per request: request id, method, route pattern,
// status, latency, response size and, once authentication found it, the
// shop's domain. It logs the route pattern, never the URL: query strings
// carry link signatures and storefront identifiers, and headers carry
// tokens, so neither is logged. Probes and scrapes (/healthz, /readyz,
// /metrics) log at debug level so they do not drown the rest.
func AccessLog(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := routeOf(c)
		level := slog.LevelInfo
		switch route {
		case "/healthz", "/readyz", "/metrics":
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
