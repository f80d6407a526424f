package storefront

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/liftab/lift/experiment"
)

// handle turns a handler's returned error into the session surface's error
// envelope {"status":"error","message":…}. It is the one place this surface
// writes errors; when the lead's api package offers its session-surface
// writer, this delegates to it.
func handle(log *slog.Logger, fn func(*gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := fn(c); err != nil {
			writeError(c, log, err)
		}
	}
}

type errorEnvelope struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func writeError(c *gin.Context, log *slog.Logger, err error) {
	e, ok := experiment.AsError(err)
	if !ok {
		e = experiment.Errorf(experiment.KindInternal, "internal", "internal server error")
	}
	status := statusOf(e.Kind)
	if status >= 500 && status != http.StatusServiceUnavailable {
		log.Error("storefront: request failed", "path", c.FullPath(), "err", err)
	}
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "5")
	}
	c.AbortWithStatusJSON(status, errorEnvelope{Status: "error", Message: e.Message})
}

// statusOf maps a Kind to this surface's statuses (part 7: 400, 401, 404,
// 500; 503 when ingest is over its backlog, so the client may retry).
func statusOf(k experiment.Kind) int {
	switch k {
	case experiment.KindInvalidRequest, experiment.KindValidation, experiment.KindTooLarge:
		return http.StatusBadRequest
	case experiment.KindUnauthenticated:
		return http.StatusUnauthorized
	case experiment.KindNotFound:
		return http.StatusNotFound
	case experiment.KindUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

var errBodyTooLarge = errors.New("body too large")
