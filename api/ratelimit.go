package api

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/liftab/lift/experiment"
)

// Class is a rate-limit budget: each token has one budget per class.
type Class string

const (
	ClassRead   Class = "read"
	ClassWrite  Class = "write"
	ClassQuery  Class = "query"
	limitPrefix       = "lift:rl:"
)

// RateLimiter counts requests per token per class in fixed windows in Redis.
type RateLimiter struct {
	rdb    redis.UniversalClient
	window time.Duration
	limits map[Class]int
	now    func() time.Time
}

// NewRateLimiter makes a limiter with a budget per class per window.
func NewRateLimiter(rdb redis.UniversalClient, window time.Duration, limits map[Class]int, now func() time.Time) *RateLimiter {
	return &RateLimiter{rdb: rdb, window: window, limits: limits, now: now}
}

// Allowance is the state of one budget after counting a request.
type Allowance struct {
	Limit     int
	Remaining int
	Reset     time.Time
	Allowed   bool
}

// Take counts one request against the token's budget for class.
func (l *RateLimiter) Take(ctx context.Context, tokenID int64, class Class) (Allowance, error) {
	now := l.now()
	start := now.Truncate(l.window)
	a := Allowance{Limit: l.limits[class], Reset: start.Add(l.window)}
	key := fmt.Sprintf("%s%d:%s:%d", limitPrefix, tokenID, class, start.Unix())
	var incr *redis.IntCmd
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, key)
		p.ExpireAt(ctx, key, a.Reset.Add(time.Second))
		return nil
	})
	if err != nil {
		a.Remaining = a.Limit
		return a, err
	}
	n := int(incr.Val())
	a.Remaining = max(0, a.Limit-n)
	a.Allowed = n <= a.Limit
	return a, nil
}

// RateLimit spends the request's budget and sets X-RateLimit-Limit,
// -Remaining and -Reset on every response. Over budget: 429 rate_limited with
// Retry-After. Redis unreachable: reads are served, anything else is refused
// with 503 rate_limit_unavailable.
func RateLimit(l *RateLimiter, p Policy) gin.HandlerFunc {
	return func(c *gin.Context) {
		class := p.Class(c)
		ctx, cancel := context.WithTimeout(c.Request.Context(), 500*time.Millisecond)
		a, err := l.Take(ctx, Token(c).ID, class)
		cancel()
		h := c.Writer.Header()
		// Assigned directly so the wire spelling is the contract's, not Go's
		// canonical X-Ratelimit-Limit (header names are case-insensitive).
		h["X-RateLimit-Limit"] = []string{strconv.Itoa(a.Limit)}
		h["X-RateLimit-Remaining"] = []string{strconv.Itoa(a.Remaining)}
		h["X-RateLimit-Reset"] = []string{strconv.FormatInt(a.Reset.Unix(), 10)}
		switch {
		case err != nil && class != ClassRead:
			WriteError(c, experiment.Errorf(experiment.KindUnavailable, "rate_limit_unavailable",
				"The rate limiter is unreachable, so the request was refused; nothing changed. Retry shortly."))
			return
		case err == nil && !a.Allowed:
			retry := int(a.Reset.Sub(l.now()).Seconds() + 0.999)
			h.Set("Retry-After", strconv.Itoa(max(1, retry)))
			WriteError(c, experiment.Errorf(experiment.KindRateLimited, "rate_limited",
				"Too many %s requests for this token; retry after %d seconds.", class, max(1, retry)))
			return
		}
		c.Next()
	}
}
