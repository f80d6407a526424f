package api_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/lifttest"
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
