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
}

func (r *countingResolver) FindShopByDomain(ctx context.Context, domain string) (*experiment.Shop, error) {
	r.calls.Add(1)
	if r.fail.Load() {
		return nil, context.DeadlineExceeded
	}
	return r.db.FindShopByDomain(ctx, domain)
}

func TestShopCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: lifttest.PostgresURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateShop(ctx, experiment.Shop{Domain: "cache-shop.myshopify.com", Name: "C", Timezone: "UTC", Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	r := &countingResolver{db: db}
	c := newShopCache(r, time.Minute, 5*time.Second, func() time.Time { return now })

	steps := []struct {
		name      string
		advance   time.Duration
		domain    string
		fail      bool
		wantErr   bool
		wantCalls int64
	}{
		{"FirstLookupReachesStore", 0, "cache-shop.myshopify.com", false, false, 1},
		{"SecondIsCached", 10 * time.Second, "Cache-Shop.myshopify.com", false, false, 1},
		{"UnknownIsRefused", 0, "nope.myshopify.com", false, true, 2},
		{"UnknownIsCachedBriefly", time.Second, "nope.myshopify.com", false, true, 2},
		{"UnknownIsAskedAgainAfterItsTTL", 5 * time.Second, "nope.myshopify.com", false, true, 3},
		{"ExpiredEntryIsRefreshed", time.Minute, "cache-shop.myshopify.com", false, false, 4},
		{"StoreDownServesStale", 2 * time.Minute, "cache-shop.myshopify.com", true, false, 5},
		{"StoreDownUnknownFails", 0, "other.myshopify.com", true, true, 6},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		r.fail.Store(s.fail)
		_, err := c.find(ctx, "shop", s.domain)
		if (err != nil) != s.wantErr || r.calls.Load() != s.wantCalls {
			t.Fatalf("%s: err = %v, store calls = %d; want error %v, %d calls", s.name, err, r.calls.Load(), s.wantErr, s.wantCalls)
		}
	}
}
