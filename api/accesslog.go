package api

import (
	"context"
	"log/slog"
	"sync/atomic"
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
//
// A probe's answer logs when it changes: a /readyz that starts failing logs
// once at warn, its recovery once at info, and the probes in between at
// debug. A load balancer probes every node every few seconds, and a warn
// line for each failing probe flooded the log through an outage (ops audit
// O2-11).
func AccessLog(log *slog.Logger, quietOK ...string) gin.HandlerFunc {
	quiet := map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}
	for _, r := range quietOK {
		quiet[r] = true
	}
	probes := map[string]*atomic.Int32{"/healthz": {}, "/readyz": {}}
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route, status := routeOf(c), c.Writer.Status()
		level := slog.LevelInfo
		switch {
		case status >= 500:
			level = slog.LevelWarn
		case status < 400 && quiet[route]:
			level = slog.LevelDebug
		}
		var previous int32
		if last, ok := probes[route]; ok {
			if previous = last.Swap(int32(status)); previous == int32(status) || previous == 0 && status < 400 {
				level = slog.LevelDebug
			} else if status < 400 {
				level = slog.LevelInfo // recovered
			}
		}
		if !log.Enabled(context.Background(), level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("request_id", RequestID(c)),
			slog.String("method", c.Request.Method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000),
			slog.Int("bytes", max(c.Writer.Size(), 0)),
		}
		if previous != 0 && previous != int32(status) {
			attrs = append(attrs, slog.Int("previous_status", int(previous)))
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
