package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// RequestObserver is told of every answered request; metrics.Metrics'
// ObserveRequest is one.
type RequestObserver func(route, method string, status int, took time.Duration)

// ObserveRequests reports every request to observe, by the route pattern gin
// matched (FullPath): the raw URL carries ids and would make a series per
// test. Requests no route matched share the route "unmatched".
func ObserveRequests(observe RequestObserver) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		observe(routeOf(c), c.Request.Method, c.Writer.Status(), time.Since(start))
	}
}

// MountMetrics serves the Prometheus scrape endpoint GET /metrics.
func MountMetrics(r gin.IRouter, h http.Handler) {
	r.GET("/metrics", gin.WrapH(h))
}

func routeOf(c *gin.Context) string {
	if p := c.FullPath(); p != "" {
		return p
	}
	return "unmatched"
}
