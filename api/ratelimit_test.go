package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// switchableRedis dials a port where nothing listens while down is set and
// the real Redis otherwise, counting every dial.
type switchableRedis struct {
	real, dead string
	down       atomic.Bool
	dials      atomic.Int64
}

func (s *switchableRedis) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	s.dials.Add(1)
	addr := s.real
	if s.down.Load() {
		addr = s.dead
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// TestRateLimiterBreaker: with Redis refusing, the limiter stops dialing
// after a few failures and answers at once; a probe after the cooldown finds
// Redis back and the limiter counts again.
func TestRateLimiterBreaker(t *testing.T) {
	t.Parallel()
	addr, db := lifttest.Redis(t)
	dead := httptest.NewServer(nil)
	deadAddr := dead.Listener.Addr().String()
	dead.Close()
	sw := &switchableRedis{real: addr, dead: deadAddr}
	sw.down.Store(true)
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: db, Dialer: sw.dial, DialTimeout: 2 * time.Second, MaxRetries: 1})
	defer rdb.Close()
	// Real time (Redis expires the window's key at its end), moved by hand
	// past the cooldowns; the hour window outlasts the test.
	now := time.Now()
	clock := func() time.Time { return now }
	l := api.NewRateLimiter(rdb, time.Hour, map[api.Class]int{api.ClassRead: 5}, clock)
	ctx := context.Background()

	for i := range 3 { // each failure is a real attempt
		before := sw.dials.Load()
		if _, err := l.Take(ctx, 1, api.ClassRead); err == nil || errors.Is(err, api.ErrLimiterOpen) {
			t.Fatalf("take %d with Redis down: err = %v, want a Redis error", i+1, err)
		}
		if sw.dials.Load() == before {
			t.Fatalf("take %d did not dial", i+1)
		}
	}
	if !l.BreakerOpen() {
		t.Fatal("breaker still closed after 3 failures")
	}
	before := sw.dials.Load()
	for i := range 20 {
		if _, err := l.Take(ctx, 1, api.ClassRead); !errors.Is(err, api.ErrLimiterOpen) {
			t.Fatalf("take %d with the breaker open: err = %v, want ErrLimiterOpen", i+4, err)
		}
	}
	if d := sw.dials.Load() - before; d != 0 {
		t.Fatalf("%d dials while the breaker was open, want 0", d)
	}

	now = now.Add(6 * time.Second) // half-open: one probe, still down
	if _, err := l.Take(ctx, 1, api.ClassRead); err == nil || errors.Is(err, api.ErrLimiterOpen) {
		t.Fatalf("probe with Redis down: err = %v, want a Redis error", err)
	}
	if sw.dials.Load() == before || !l.BreakerOpen() {
		t.Fatalf("probe: dials %d (before %d), open %v; want a dial and the breaker open again", sw.dials.Load(), before, l.BreakerOpen())
	}

	sw.down.Store(false) // Redis is back
	now = now.Add(6 * time.Second)
	for i := range 3 {
		a, err := l.Take(ctx, 1, api.ClassRead)
		if err != nil || !a.Allowed || a.Remaining != 4-i {
			t.Fatalf("take %d after recovery: %+v, %v; want allowed with %d remaining", i+1, a, err, 4-i)
		}
	}
	if l.BreakerOpen() {
		t.Fatal("breaker open after Redis answered")
	}
}

// authBudget is a router with the v1 chain's first three steps over real
// Postgres and Redis, and the secrets its test sends.
type authBudget struct {
	t                       *testing.T
	h                       http.Handler
	now                     *time.Time
	valid, revoked, blocked string
}

func newAuthBudget(t *testing.T, tokens func(*store.DB) api.TokenFinder) *authBudget {
	t.Helper()
	db := lifttest.DB(t)
	b := &authBudget{t: t, valid: secret(t, db, true, false), revoked: secret(t, db, true, true), blocked: secret(t, db, false, false)}
	addr, rdb := lifttest.Redis(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: rdb})
	t.Cleanup(func() { rc.Close() })
	// Real time (Redis expires a window's key at its end), moved by hand;
	// the hour window outlasts the test.
	now := time.Now()
	b.now = &now
	l := api.NewRateLimiter(rc, time.Hour, map[api.Class]int{api.ClassRead: 100, api.ClassUnauthenticated: 2},
		func() time.Time { return *b.now })
	g := gin.New()
	if err := g.SetTrustedProxies(nil); err != nil { // the client address is the TCP peer
		t.Fatal(err)
	}
	g.GET("/x", api.LimitUnauthenticated(l), api.Authenticate(tokens(db)), api.RateLimit(l, api.Policy{}),
		func(c *gin.Context) { c.String(200, "ok") })
	b.h = g
	return b
}

// secret makes a shop and a read token of it and returns the token's secret.
func secret(t *testing.T, db *store.DB, apiEnabled, revoked bool) string {
	t.Helper()
	ctx := context.Background()
	s, err := db.CreateShop(ctx, experiment.Shop{Domain: lifttest.Name("budget-") + ".myshopify.com"})
	var tok *experiment.Token
	var sec string
	if err != nil {
		t.Fatal(err)
	}
	// A token is only made for an enabled shop; it is disabled afterwards.
	for _, on := range []bool{true, apiEnabled} {
		if _, err := db.UpdateShop(ctx, s.ID, store.ShopUpdate{APIEnabled: &on}); err != nil {
			t.Fatal(err)
		}
		if on {
			if tok, sec, err = db.CreateToken(ctx, s.ID, experiment.ScopeRead); err != nil {
				t.Fatal(err)
			}
		}
	}
	if revoked {
		if _, err := db.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
	}
	return sec
}

type authStep struct {
	name   string
	secret string
	status int
	code   string // error code; "" on success
	limits string // X-RateLimit-Limit/Remaining
}

func (b *authBudget) run(steps []authStep) {
	b.t.Helper()
	for _, s := range steps {
		req := httptest.NewRequest("GET", "/x", nil)
		if s.secret != "" {
			req.Header.Set("Authorization", "Bearer "+s.secret)
		}
		w := httptest.NewRecorder()
		b.h.ServeHTTP(w, req)
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &body) // "ok" on success: no code
		h := w.Header()
		limits := strings.Join(header(h, "X-RateLimit-Limit"), ",") + "/" + strings.Join(header(h, "X-RateLimit-Remaining"), ",")
		reset := header(h, "X-RateLimit-Reset")
		if w.Code != s.status || body.Error.Code != s.code || limits != s.limits || len(reset) != 1 {
			b.t.Fatalf("%s: %d %s limits %s reset %v, want %d %q limits %s", s.name, w.Code, w.Body, limits,
				reset, s.status, s.code, s.limits)
		}
		if retry := h.Get("Retry-After"); (w.Code == 429) != (retry != "") {
			b.t.Fatalf("%s: %d with Retry-After %q", s.name, w.Code, retry)
		}
	}
}

// TestUnauthenticatedBudgetThrottlesOnlyFailures: the address's budget
// counts refused authentications and answers them 429 once spent, but a
// valid token from the same address always proceeds on its own budget (one
// bad client behind a shared NAT locks nobody else out).
func TestUnauthenticatedBudgetThrottlesOnlyFailures(t *testing.T) {
	t.Parallel()
	b := newAuthBudget(t, func(db *store.DB) api.TokenFinder { return db })
	unknown := "lift_" + strings.Repeat("x", 43)
	b.run([]authStep{
		{"missing token", "", 401, "missing_token", "2/1"},
		{"valid token", b.valid, 200, "", "100/99"},
		{"unknown token", unknown, 401, "invalid_token", "2/0"},
		{"revoked over budget", b.revoked, 429, "rate_limited", "2/0"},
		{"disabled shop over budget", b.blocked, 429, "rate_limited", "2/0"},
		{"malformed over budget", "nope", 429, "rate_limited", "2/0"},
		{"valid token over budget", b.valid, 200, "", "100/98"},
		{"valid token again", b.valid, 200, "", "100/97"},
	})
	*b.now = b.now.Add(time.Hour) // the next window
	b.run([]authStep{
		{"failure in a new window", unknown, 401, "invalid_token", "2/1"},
		{"revoked in a new window", b.revoked, 401, "token_revoked", "2/0"},
		{"disabled shop over budget", b.blocked, 429, "rate_limited", "2/0"},
	})
}

// TestUnauthenticatedBudgetSparesFaults: a token lookup that fails is our
// fault, not a refused credential: it spends nothing and reports the budget
// as it stands.
func TestUnauthenticatedBudgetSparesFaults(t *testing.T) {
	t.Parallel()
	b := newAuthBudget(t, func(*store.DB) api.TokenFinder {
		// A second handle on the same database, closed: every lookup fails.
		broken, err := store.Open(context.Background(), store.Config{URL: lifttest.PostgresURL(t)})
		if err != nil {
			t.Fatal(err)
		}
		broken.Close()
		return broken
	})
	b.run([]authStep{
		{"lookup fails", b.valid, 500, "internal_error", "2/2"},
		{"lookup fails again", b.valid, 500, "internal_error", "2/2"},
		{"malformed (no lookup)", "nope", 401, "invalid_token", "2/1"},
	})
}

// header is h's values of name in any spelling: the limiter writes the
// contract's spelling, not Go's canonical one.
func header(h http.Header, name string) []string {
	var out []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			out = append(out, v...)
		}
	}
	return out
}
