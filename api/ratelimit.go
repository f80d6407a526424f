package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/liftab/lift/experiment"
)

// Class is a rate-limit budget: each token has one budget per class.
type Class string

const (
	ClassRead  Class = "read"
	ClassWrite Class = "write"
	ClassQuery Class = "query"
	// ClassUnauthenticated is the budget of a client address for requests
	// refused by authentication (401, 403 api_access_disabled): they have
	// no token to count against. Without a limit for it, such requests are
	// neither counted nor answered with rate-limit headers.
	ClassUnauthenticated Class = "unauthenticated"
)

const limitPrefix = "lift:rl:"

// Breaker defaults: after breakerFailures Redis errors in a row the limiter
// stops asking Redis for breakerCooldown, then lets one request probe.
const (
	breakerFailures = 3
	breakerCooldown = 5 * time.Second
	redisBudget     = 500 * time.Millisecond // longest a request waits on Redis
)

// ErrLimiterOpen is returned while the breaker is open: Redis failed
// repeatedly and is not asked again until the cooldown ends.
var ErrLimiterOpen = errors.New("api: rate limiter unavailable (breaker open)")

// RateLimiter counts requests per token per class in fixed windows in Redis.
// A circuit breaker keeps a Redis outage from costing every request a wait.
type RateLimiter struct {
	rdb    redis.UniversalClient
	window time.Duration
	limits map[Class]int
	now    func() time.Time
	br     breaker
}

// NewRateLimiter makes a limiter with a budget per class per window.
func NewRateLimiter(rdb redis.UniversalClient, window time.Duration, limits map[Class]int, now func() time.Time) *RateLimiter {
	return &RateLimiter{rdb: rdb, window: window, limits: limits, now: now,
		br: breaker{threshold: breakerFailures, cooldown: breakerCooldown}}
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
	return l.take(ctx, strconv.FormatInt(tokenID, 10), class)
}

// take counts one request against subject's budget for class.
func (l *RateLimiter) take(ctx context.Context, subject string, class Class) (Allowance, error) {
	a, key := l.allowance(subject, class)
	var incr *redis.IntCmd
	err := l.call(ctx, func(ctx context.Context) error {
		_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			incr = p.Incr(ctx, key)
			p.ExpireAt(ctx, key, a.Reset.Add(time.Second))
			return nil
		})
		return err
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

// peek is subject's budget for class as it stands, without spending it;
// Allowed says whether one more request fits.
func (l *RateLimiter) peek(ctx context.Context, subject string, class Class) (Allowance, error) {
	a, key := l.allowance(subject, class)
	var n int
	err := l.call(ctx, func(ctx context.Context) error {
		v, err := l.rdb.Get(ctx, key).Int()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
		n = v
		return err
	})
	if err != nil {
		a.Remaining = a.Limit
		return a, err
	}
	a.Remaining = max(0, a.Limit-n)
	a.Allowed = n < a.Limit
	return a, nil
}

func (l *RateLimiter) allowance(subject string, class Class) (Allowance, string) {
	start := l.now().Truncate(l.window)
	a := Allowance{Limit: l.limits[class], Reset: start.Add(l.window)}
	return a, fmt.Sprintf("%s%s:%s:%d", limitPrefix, subject, class, start.Unix())
}

// call runs fn against Redis through the breaker, within redisBudget.
func (l *RateLimiter) call(ctx context.Context, fn func(context.Context) error) error {
	if !l.br.allow(l.now()) {
		return ErrLimiterOpen
	}
	ctx, cancel := context.WithTimeout(ctx, redisBudget)
	defer cancel()
	err := fn(ctx)
	if err != nil && errors.Is(context.Cause(ctx), context.Canceled) {
		l.br.abandon() // the client left: says nothing about Redis
		return err
	}
	l.br.record(err, l.now())
	return err
}

// BreakerOpen reports whether the limiter is answering without Redis.
func (l *RateLimiter) BreakerOpen() bool { return l.br.open(l.now()) }

// breaker is a circuit breaker: closed, it lets every call through and
// counts consecutive failures; at threshold it opens for cooldown, refusing
// calls at once; then one call probes (half-open) and closes it on success
// or opens it again on failure.
type breaker struct {
	threshold int
	cooldown  time.Duration

	mu        sync.Mutex
	failures  int
	openUntil time.Time
	probing   bool
}

func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold {
		return true
	}
	if now.Before(b.openUntil) || b.probing {
		return false
	}
	b.probing = true
	return true
}

func (b *breaker) record(err error, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if err == nil {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= b.threshold {
		b.openUntil = now.Add(b.cooldown)
	}
}

func (b *breaker) abandon() {
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

func (b *breaker) open(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures >= b.threshold && now.Before(b.openUntil)
}

// setLimitHeaders writes the X-RateLimit-* headers of a.
func setLimitHeaders(c *gin.Context, a Allowance) {
	h := c.Writer.Header()
	// Assigned directly so the wire spelling is the contract's, not Go's
	// canonical X-Ratelimit-Limit (header names are case-insensitive).
	h["X-RateLimit-Limit"] = []string{strconv.Itoa(a.Limit)}
	h["X-RateLimit-Remaining"] = []string{strconv.Itoa(a.Remaining)}
	h["X-RateLimit-Reset"] = []string{strconv.FormatInt(a.Reset.Unix(), 10)}
}

// refuseOverBudget answers 429 rate_limited with Retry-After.
func (l *RateLimiter) refuseOverBudget(c *gin.Context, a Allowance, what string) {
	retry := max(1, int(a.Reset.Sub(l.now()).Seconds()+0.999))
	c.Writer.Header().Set("Retry-After", strconv.Itoa(retry))
	WriteError(c, experiment.Errorf(experiment.KindRateLimited, "rate_limited",
		"Too many %s; retry after %d seconds.", what, retry))
}

// RateLimit spends the request's budget and sets X-RateLimit-Limit,
// -Remaining and -Reset on every response. Over budget: 429 rate_limited with
// Retry-After. Redis unreachable (or the breaker open): reads are served,
// anything else is refused with 503 rate_limit_unavailable.
func RateLimit(l *RateLimiter, p Policy) gin.HandlerFunc {
	return func(c *gin.Context) {
		class := p.Class(c)
		a, err := l.Take(c.Request.Context(), Token(c).ID, class)
		setLimitHeaders(c, a)
		switch {
		case err != nil && class != ClassRead:
			WriteError(c, experiment.Errorf(experiment.KindUnavailable, "rate_limit_unavailable",
				"The rate limiter is unreachable, so the request was refused; nothing changed. Retry shortly."))
			return
		case err == nil && !a.Allowed:
			l.refuseOverBudget(c, a, fmt.Sprintf("%s requests for this token", class))
			return
		}
		c.Next()
	}
}

// LimitUnauthenticated goes before Authenticate and gives each client
// address (the one gin derives, so behind a proxy only with
// http.trusted_proxies set) a budget of refused authentications (401, 403
// api_access_disabled). It only throttles failures: a request whose token
// authenticates always goes on to its token's own budget, so one client
// spending an address's budget (on a shared NAT, or behind a load balancer
// Lift does not trust) locks nobody else out. A failure carries the
// address's X-RateLimit-* headers; one over budget is answered 429
// rate_limited with Retry-After instead. Redis unreachable: the failure is
// answered as it is, uncounted. Slowing guessing is not the point (a secret
// has 256 random bits); keeping refused clients cheap and visible is.
func LimitUnauthenticated(l *RateLimiter) gin.HandlerFunc {
	return func(c *gin.Context) {
		if l.limits[ClassUnauthenticated] > 0 {
			c.Set(authBudgetKey, l)
		}
		c.Next()
	}
}

const authBudgetKey = "lift.authBudget"

// refuseAuthentication answers a request Authenticate refused with err,
// through the address's budget when LimitUnauthenticated installed one.
func refuseAuthentication(c *gin.Context, err error) {
	v, _ := c.Get(authBudgetKey)
	l, _ := v.(*RateLimiter)
	if l == nil {
		WriteError(c, err)
		return
	}
	subject := "ip:" + c.ClientIP()
	ctx := c.Request.Context()
	if !refusedCredential(err) {
		// A fault of ours (the token lookup failed) spends nothing; the
		// response still reports the budget as it stands.
		a, _ := l.peek(ctx, subject, ClassUnauthenticated)
		setLimitHeaders(c, a)
		WriteError(c, err)
		return
	}
	a, lerr := l.take(ctx, subject, ClassUnauthenticated)
	setLimitHeaders(c, a)
	if lerr == nil && !a.Allowed {
		l.refuseOverBudget(c, a, "failed authentications from this address")
		return
	}
	WriteError(c, err)
}

// refusedCredential reports whether err refuses the request's credential
// (401, 403 api_access_disabled), the failures the budget counts.
func refusedCredential(err error) bool {
	e, ok := experiment.AsError(err)
	return ok && (e.Kind == experiment.KindUnauthenticated || e.Code == "api_access_disabled")
}
