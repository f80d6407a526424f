package api

import (
	"context"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Deadline gives each request's context a deadline (http.request_timeout),
// so a dependency that hangs rather than refuses ends the request in a 503
// (WriteError) instead of holding it for as long as it hangs: the ops audit
// saw a v1 create wait 38 s on a stalled Postgres and then commit, long
// after its client had given up. A zero d sets none. Paths under the given prefixes keep no
// deadline (the MCP stream lives as long as its session).
func Deadline(d time.Duration, except ...string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if d <= 0 {
			c.Next()
			return
		}
		for _, p := range except {
			if strings.HasPrefix(c.Request.URL.Path, p) {
				c.Next()
				return
			}
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), d)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}
