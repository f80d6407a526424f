// Package v1 is the public API at /v1 (the contract in
// seeds/000_bef6b670f846737c.txt): bearer tokens, one error envelope, rate
// limits, idempotent creates and an audit record of every write.
package v1

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// API holds what the v1 handlers need. Fields are added as resources are.
type API struct {
	Tokens       api.TokenFinder      // bearer tokens (the store)
	Keys         api.IdempotencyStore // Idempotency-Key claims (the store)
	Limiter      *api.RateLimiter
	Idempotency  api.IdempotencyConfig
	MaxBodyBytes int64
	Now          func() time.Time
	Experiments  *Experiments // the tests resource (experiments.go)
	Exports      *Exports     // CSV exports of a test's orders (exports.go)
	Results      *Results     // snapshots and custom result queries (results.go)
}

// Mount adds the /v1 routes to r. Every route passes, in order: the client
// address's budget for refused authentications (headers on 401; a failure
// once it is spent is 429; a valid token is never held by it), bearer auth
// (401, 403 api_access_disabled), rate limit (429, 503; headers on every
// response from here on), body limit (413: after the rate limit, so it
// carries the headers too, and an unauthenticated giant body is a 401; no
// check before it reads the body), scope (403 insufficient_scope), then per
// route its query-parameter allowlist (400) and, on creates, Idempotency-Key.
func (a *API) Mount(r gin.IRouter) {
	g := r.Group("/v1", api.UseSurface(api.SurfaceV1), api.LimitUnauthenticated(a.Limiter), api.Authenticate(a.Tokens),
		api.RateLimit(a.Limiter, policy), api.LimitBody(a.MaxBodyBytes), api.RequireScope(policy))
	idem := api.Idempotent(a.Keys, a.Idempotency)

	// Routes. Each resource's handlers live in their own file.
	a.Experiments.Routes(g, idem)
	a.Exports.Routes(g, idem)
	if a.Results != nil {
		a.Results.Routes(g)
	}
}

// read mounts a GET route and its HEAD twin (part 5: "GET and HEAD need
// read"): a HEAD passes the same auth, limits and handler and answers GET's
// status and headers; net/http drops the body.
func read(g gin.IRoutes, path string, h ...gin.HandlerFunc) {
	g.GET(path, h...)
	g.HEAD(path, h...)
}

// policy holds the contract's exceptions to "GET reads, the rest writes"
// (parts 5 and 8): a custom result query is a read that spends the
// result-query budget; an export is a read that spends the write budget.
var policy = api.Policy{Reads: map[string]api.Class{
	"/v1/experiments/:id/results": api.ClassQuery,
	"/v1/experiments/:id/exports": api.ClassWrite,
}}

// NotFound answers an unknown /v1 path in the contract's envelope.
func NotFound(c *gin.Context) {
	api.WriteError(c, experiment.Errorf(experiment.KindNotFound, "not_found", "No such endpoint: %s %s.", c.Request.Method, c.Request.URL.Path))
}

// listParams are the query parameters of GET /v1/experiments.
var listParams = []string{"limit", "cursor", "status", "type", "scheduled", "include",
	"created_at[gte]", "created_at[gt]", "created_at[lte]", "created_at[lt]"}
