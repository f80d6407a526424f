package api

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"time"

	"github.com/gin-gonic/gin"
)

// Check reports whether one dependency answers.
type Check func(ctx context.Context) error

// Health is what /readyz checks. Required dependencies make the node
// unready when one does not answer (503); the load balancer should send it
// nothing. Optional ones only degrade what the node serves (200, status
// "degraded"): an API node without Redis still serves reads, one without
// ClickHouse every test's configuration, an ingest node without Postgres
// every shop it has seen. Each role lists only what it uses.
type Health struct {
	Required, Optional map[string]Check
}

// checkBudget is how long /readyz waits for its checks: a dependency that
// hangs past it is reported unreachable, not waited on.
const checkBudget = 2 * time.Second

// MountHealth serves GET /healthz (the process is up) and GET /readyz. The
// body names dependencies, never addresses or driver errors: readyz is
// reachable by anyone who reaches the port.
func MountHealth(r gin.IRouter, h Health) {
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), checkBudget)
		defer cancel()
		all := make(map[string]Check, len(h.Required)+len(h.Optional))
		for name, check := range h.Optional {
			all[name] = check
		}
		for name, check := range h.Required {
			all[name] = check
		}
		states := runChecks(ctx, all)
		var down, degraded []string
		for name, s := range states {
			switch _, required := h.Required[name]; {
			case s == "ok":
			case required:
				down = append(down, name)
			default:
				degraded = append(degraded, name)
			}
		}
		sort.Strings(down)
		sort.Strings(degraded)
		switch {
		case len(down) > 0:
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "unavailable": down, "checks": states})
		case len(degraded) > 0:
			c.JSON(http.StatusOK, gin.H{"status": "degraded", "degraded": degraded, "checks": states})
		default:
			c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": states})
		}
	})
}

// runChecks runs every check at once, so one slow dependency does not hide
// the others, and returns when ctx ends even if a check does not (a driver's
// ping may ignore the deadline): what has not answered by then is
// unreachable.
func runChecks(ctx context.Context, checks map[string]Check) map[string]string {
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(checks)) // buffered: a late check never blocks
	for name, check := range checks {
		go func() { results <- result{name, check(ctx)} }()
	}
	out := make(map[string]string, len(checks))
	for name := range checks {
		out[name] = "unreachable"
	}
	for range checks {
		select {
		case r := <-results:
			if r.err == nil {
				out[r.name] = "ok"
			} else {
				// The error names hosts and ports; the log is the place for it.
				slog.Warn("readyz: dependency unreachable", "dependency", r.name, "err", r.err)
			}
		case <-ctx.Done():
			return out
		}
	}
	return out
}
