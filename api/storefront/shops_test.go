package storefront

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// countingResolver counts the lookups that reach the real store.
type countingResolver struct {
	db    *store.DB
	calls atomic.Int64
	fail  atomic.Bool // simulate Postgres being unreachable
	hang  atomic.Bool // simulate Postgres taking the query and never answering
}

func (r *countingResolver) FindShopByDomain(ctx context.Context, domain string) (*experiment.Shop, error) {
	r.calls.Add(1)
	if r.fail.Load() {
		return nil, context.DeadlineExceeded
	}
	if r.hang.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return r.db.FindShopByDomain(ctx, domain)
}

func TestShopCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := lifttest.DB(t)
	if _, err := db.CreateShop(ctx, experiment.Shop{Domain: "cache-shop.myshopify.com", Name: "C", Timezone: "UTC", Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	r := &countingResolver{db: db}
	c := newShopCache(r, time.Minute, 5*time.Second, func() time.Time { return now })
	c.lookup = 50 * time.Millisecond

	steps := []struct {
		name      string
		advance   time.Duration
		domain    string
		fail      bool
		hang      bool
		wantErr   bool
		wantCalls int64
	}{
		{"FirstLookupReachesStore", 0, "cache-shop.myshopify.com", false, false, false, 1},
		{"SecondIsCached", 10 * time.Second, "Cache-Shop.myshopify.com", false, false, false, 1},
		{"UnknownIsRefused", 0, "nope.myshopify.com", false, false, true, 2},
		{"UnknownIsCachedBriefly", time.Second, "nope.myshopify.com", false, false, true, 2},
		{"UnknownIsAskedAgainAfterItsTTL", 5 * time.Second, "nope.myshopify.com", false, false, true, 3},
		{"ExpiredEntryIsRefreshed", time.Minute, "cache-shop.myshopify.com", false, false, false, 4},
		{"StoreDownServesStale", 2 * time.Minute, "cache-shop.myshopify.com", true, false, false, 5},
		{"StoreDownUnknownFails", 0, "other.myshopify.com", true, false, true, 6},
		// A hung store (the request's own context has no deadline) is
		// given up on after the lookup timeout: stale, or a 503 to retry.
		{"StoreHangsServesStale", 2 * time.Minute, "cache-shop.myshopify.com", false, true, false, 7},
		{"StoreHangsUnknownIs503", 0, "other.myshopify.com", false, true, true, 8},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		r.fail.Store(s.fail)
		r.hang.Store(s.hang)
		_, err := c.find(ctx, "shop", s.domain)
		if (err != nil) != s.wantErr || r.calls.Load() != s.wantCalls {
			t.Fatalf("%s: err = %v, store calls = %d; want error %v, %d calls", s.name, err, r.calls.Load(), s.wantErr, s.wantCalls)
		}
		if e, _ := experiment.AsError(err); s.wantErr && (s.fail || s.hang) && (e == nil || e.Kind != experiment.KindUnavailable) {
			t.Fatalf("%s: %v, want a 503 (KindUnavailable)", s.name, err)
		}
	}
}
