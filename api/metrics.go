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
		observe(routeOf(c), methodOf(c), c.Writer.Status(), time.Since(start))
	}
}

// methodOf is the request's method, or "other" for one HTTP does not define:
// a client must not mint a series per made-up method.
func methodOf(c *gin.Context) string {
	switch m := c.Request.Method; m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
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
