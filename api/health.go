package api

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Check reports whether one dependency answers.
type Check func(ctx context.Context) error

// MountHealth serves GET /healthz (the process is up) and GET /readyz (each
// dependency in checks answers; 503 naming those that do not). checks holds
// only what the process's role uses, so a node is not reported unready for a
// dependency it never calls. The body names dependencies, never addresses or
// driver errors: readyz is reachable by anyone who reaches the port.
func MountHealth(r gin.IRouter, checks map[string]Check) {
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		states := runChecks(ctx, checks)
		var down []string
		for name, s := range states {
			if s != "ok" {
				down = append(down, name)
			}
		}
		sort.Strings(down)
		if len(down) > 0 {
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "unavailable": down, "checks": states})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": states})
	})
}

// runChecks runs every check at once, so one slow dependency does not hide
// the others behind the timeout.
func runChecks(ctx context.Context, checks map[string]Check) map[string]string {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := make(map[string]string, len(checks))
	for name, check := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			state := "ok"
			if err := check(ctx); err != nil {
				state = "unreachable" // the error names hosts and ports; the log is the place for it
				slog.Warn("readyz: dependency unreachable", "dependency", name, "err", err)
			}
			mu.Lock()
			out[name] = state
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
