package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/api/storefront"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/metrics"
	"github.com/liftab/lift/web/tracker"
)

// newLogger is the process's one logger: log/slog, JSON or text by
// log.format (empty: json; lift dev asks for text), at log.level.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level)) // config.Load validated it
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: durationText}
	if cfg.Log.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// durationText writes a duration as Go spells it ("1.6s", "5.17ms"): the
// JSON handler's integer nanoseconds carry no unit, and an operator read
// "retry_in":1600000000 as a count (ops audit O2-11).
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// metrics is the process's metrics; an App not made by openApp (tests,
// benches) gets its own on first use.
func (a *App) metrics() *metrics.Metrics {
	if a.Metrics == nil {
		a.Metrics = metrics.New()
	}
	return a.Metrics
}

// observe puts the request middleware on r, outermost first: the request
// id, then metrics and the access log (they see the final status, a
// recovered panic's 500 included), then recovery. gin's own logger is not
// used: the access log replaces it, in the process's log format.
func (a *App) observe(r *gin.Engine) {
	r.Use(api.RequestIDs(), api.ObserveRequests(a.metrics().ObserveRequest), api.AccessLog(a.Log, append([]string{tracker.Path}, storefront.PerPage...)...),
		// Exempt: the MCP stream lives as long as its session; the
		// install callback reads a large catalog through a platform bulk
		// operation, which takes minutes (installs run once per shop); and
		// tracking, the hot path, bounds its one Postgres read itself
		// (storefront's shop lookup), so it is spared a timer per event.
		api.Deadline(a.Config.HTTP.RequestTimeout, append([]string{"/mcp", "/api/auth"}, storefront.Tracking...)...),
		gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, err any) {
			a.Log.Error("panic serving a request", "request_id", api.RequestID(c), "route", c.FullPath(),
				"err", fmt.Sprint(err), "stack", string(debug.Stack()))
			c.AbortWithStatus(http.StatusInternalServerError)
		}))
	api.MountMetrics(r, a.metrics().Handler())
}

// watchQueues exports the job queues' depths (read at each scrape) once
// per process: `lift dev` runs the API and the worker on one registry.
func (a *App) watchQueues() {
	if a.inspector != nil {
		return
	}
	a.inspector = jobs.NewInspector(jobs.Redis{Addr: a.Config.Redis.Addr, DB: a.Config.Redis.DB})
	a.metrics().WatchQueues(a.inspector.Depths)
}

// serveWorkerMetrics serves /metrics of a worker process on addr until ctx
// ends; the worker has no other HTTP server to carry it. It returns the
// address it listens on.
func (a *App) serveWorkerMetrics(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("worker metrics: %w", err)
	}
	// The worker's probes too: ready while it can take jobs (Redis) and do
	// them (Postgres); without ClickHouse, snapshots and exports wait and
	// retry, webhooks and schedules go on.
	r := gin.New()
	r.GET("/metrics", gin.WrapH(a.metrics().Handler()))
	api.MountHealth(r, api.Health{
		Required: map[string]api.Check{"postgres": a.DB.Ping, "redis": func(ctx context.Context) error { return a.Redis.Ping(ctx).Err() }},
		Optional: map[string]api.Check{"clickhouse": a.Warehouse.Ping},
	})
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	a.Log.Info("serving worker metrics", "addr", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("worker metrics server stopped", "err", err)
		}
	}()
	return ln.Addr().String(), nil
}
