// Package api holds what every HTTP surface of Lift shares: the one writer of
// error envelopes, request ids, body limits, JSON decoding, health checks, and
// the public API's middleware (auth, scopes, rate limits, idempotency). The
// surfaces themselves live in subpackages (api/v1, api/storefront, …).
package api

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"syscall"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

// Surface selects the error envelope a route group answers with.
type Surface int

const (
	// SurfaceV1 is the public API: {"error": {type, code, message, param, …}}.
	SurfaceV1 Surface = iota
	// SurfaceSession is the admin panel, storefront and webhook surface:
	// {"status": "error", "message": …}.
	SurfaceSession
)

const surfaceKey = "lift.surface"

// UseSurface marks the routes after it as answering errors in surface s.
func UseSurface(s Surface) gin.HandlerFunc {
	return func(c *gin.Context) { c.Set(surfaceKey, s); c.Next() }
}

// HandlerFunc is a gin handler that returns its error instead of writing it.
type HandlerFunc func(c *gin.Context) error

// Handle adapts a HandlerFunc: a returned error is answered by WriteError.
func Handle(fn HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := fn(c); err != nil {
			WriteError(c, err)
		}
	}
}

// status and type of each kind, as the contract and DESIGN §9 fix them.
var kinds = map[experiment.Kind]struct {
	status int
	typ    string
}{
	experiment.KindInvalidRequest:   {http.StatusBadRequest, "invalid_request_error"},
	experiment.KindTooLarge:         {http.StatusRequestEntityTooLarge, "invalid_request_error"},
	experiment.KindUnauthenticated:  {http.StatusUnauthorized, "authentication_error"},
	experiment.KindForbidden:        {http.StatusForbidden, "permission_error"},
	experiment.KindNotFound:         {http.StatusNotFound, "not_found_error"},
	experiment.KindConflict:         {http.StatusConflict, "conflict_error"},
	experiment.KindValidation:       {http.StatusUnprocessableEntity, "validation_error"},
	experiment.KindRateLimited:      {http.StatusTooManyRequests, "rate_limit_error"},
	experiment.KindNotImplemented:   {http.StatusNotImplemented, "api_error"},
	experiment.KindUnavailable:      {http.StatusServiceUnavailable, "api_error"},
	experiment.KindTimeout:          {http.StatusGatewayTimeout, "api_error"},
	experiment.KindInternal:         {http.StatusInternalServerError, "api_error"},
	experiment.KindMethodNotAllowed: {http.StatusMethodNotAllowed, "invalid_request_error"},
}

// StatusOf is the HTTP status an error is answered with.
func StatusOf(err error) int {
	if e, ok := experiment.AsError(err); ok {
		return kinds[e.Kind].status
	}
	return http.StatusInternalServerError
}

// quiet are 5xx answers that are not faults to log line by line: 501 is a
// documented answer, a full ingest backlog refuses every request until it
// drains (the flusher logs why it cannot drain, once per retry), a client
// that went away reads nothing, and a tracking shop lookup that timed out
// repeats for every event while Postgres is away (readyz and the rejected
// counter say so).
var quiet = map[string]bool{"not_implemented": true, "ingest_backlog_full": true, "client_closed_request": true, "shop_lookup_unavailable": true}

// sessionStatus maps a kind to the older session surface's statuses (its
// part 7 knows 400, 401, 404 and 500), plus 503 when ingest cannot take
// more, so a storefront client may retry.
func sessionStatus(k experiment.Kind) int {
	switch k {
	case experiment.KindInvalidRequest, experiment.KindValidation, experiment.KindTooLarge, experiment.KindMethodNotAllowed:
		return http.StatusBadRequest
	case experiment.KindUnauthenticated:
		return http.StatusUnauthorized
	case experiment.KindNotFound:
		return http.StatusNotFound
	case experiment.KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// envelope is the public API's error body (contract part 7).
type envelope struct {
	Error envelopeError `json:"error"`
}

type envelopeError struct {
	Type      string                `json:"type"`
	Code      string                `json:"code"`
	Message   string                `json:"message"`
	Param     *string               `json:"param"`
	RequestID string                `json:"request_id,omitempty"`
	Details   map[string]any        `json:"details,omitempty"`
	Findings  *[]experiment.Finding `json:"findings,omitempty"`
}

// WriteError is the one place an error becomes a response. Errors that are
// not *experiment.Error are ours: the client sees a fixed message and the
// request id, the log gets the cause. Only 5xx carry a request id and only
// 5xx are logged.
func WriteError(c *gin.Context, err error) {
	e, ok := experiment.AsError(err)
	if !ok {
		e = unreachable(c, err)
	}
	k, known := kinds[e.Kind]
	if !known {
		k = kinds[experiment.KindInternal]
	}
	reqID := ""
	if k.status >= 500 {
		reqID = RequestID(c)
	}
	if k.status >= 500 && !quiet[e.Code] {
		slog.ErrorContext(c.Request.Context(), "request failed", "request_id", reqID, "method", c.Request.Method,
			"route", routeOf(c), "status", k.status, "code", e.Code, "err", err)
	}
	if surface, _ := c.Get(surfaceKey); surface == SurfaceSession {
		status := sessionStatus(e.Kind)
		if status >= 500 {
			RequestID(c) // its X-Request-Id header: the message asks for it
		}
		if status == http.StatusServiceUnavailable {
			c.Header("Retry-After", "5")
		}
		c.AbortWithStatusJSON(status, gin.H{"status": "error", "message": e.Message})
		return
	}
	body := envelopeError{Type: k.typ, Code: e.Code, Message: e.Message, RequestID: reqID, Details: e.Details}
	if e.Param != "" {
		body.Param = &e.Param
	}
	if e.Kind == experiment.KindValidation {
		// The top-level code repeats the first blocking finding, so a 422
		// refused outside the validator carries itself as that finding.
		f := e.Findings
		if len(f) == 0 {
			f = []experiment.Finding{{Severity: experiment.SeverityError, Code: e.Code, Message: e.Message, Param: e.Param}}
		}
		body.Findings = &f
	}
	c.AbortWithStatusJSON(k.status, envelope{Error: body})
}

// unreachable is the answer to an error that is not ours to explain: a
// 503 (nothing attempted, retry: contract part 7) when a dependency could
// not be reached or did not answer before the request's deadline, the
// generic 500 otherwise. Adapters wrap driver errors, and network failures
// surface as net.Error or a refused connection (experiment.Unreachable)
// whatever the driver, so the api package needs none of them. A client that went away is answered the 503
// too, unlogged: nobody reads it.
func unreachable(c *gin.Context, err error) *experiment.Error {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil:
		return experiment.Errorf(experiment.KindUnavailable, "client_closed_request", "The client closed the request.")
	case errors.As(err, &ne), // context.DeadlineExceeded is one: the request's deadline, or a driver's
		experiment.Unreachable(err), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return experiment.Errorf(experiment.KindUnavailable, "internal_error",
			"A service Lift depends on did not answer in time; nothing was changed. Retry in a few seconds.")
	}
	return experiment.Errorf(experiment.KindInternal, "internal_error", "An internal error occurred. Retry later; if it persists, contact support with the request id.")
}

// Invalid is a 400 invalid_request_error with the given code and param.
func Invalid(code, param, format string, args ...any) *experiment.Error {
	return experiment.Errorf(experiment.KindInvalidRequest, code, format, args...).WithParam(param)
}

// isMaxBytes reports whether err came from a body over the limit.
func isMaxBytes(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}
