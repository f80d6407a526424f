package results

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/liftab/lift/experiment"
)

// The analytics response cache (session document part 8: "responses are
// cached"). An answer is keyed by the shop, the test (id and last update,
// so a changed definition misses), the view, the normalized request, and
// the test's data version (AnalyticsWarehouse.DataVersion): new rows for the
// test, or an erase, change the version, so the next request computes
// afresh and the stale entry simply ages out. An answer is kept only when
// the version after computing it is the one before. The version read is one
// count/max per table over the test's key range (events through their
// pre-aggregate), far cheaper than the analytics it spares. CacheTTL bounds any entry's life; the LRU bounds
// the memory. The cache is per process: each API node warms its own.

type cacheEntry struct {
	key     string
	body    json.RawMessage
	expires time.Time
}

type responseCache struct {
	mu      sync.Mutex
	max     int
	ttl     time.Duration
	now     func() time.Time
	order   *list.List // front: most recently used
	entries map[string]*list.Element
}

func newResponseCache(max int, ttl time.Duration, now func() time.Time) *responseCache {
	return &responseCache{max: max, ttl: ttl, now: now, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *responseCache) get(key string) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.body, true
}

func (c *responseCache) put(key string, body json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.Remove(el)
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, body: body, expires: c.now().Add(c.ttl)})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
	}
}

// len is how many answers are held (tests).
func (c *responseCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// cached answers s's view from the cache or computes it with build.
func (a *Analytics) cached(ctx context.Context, shop *experiment.Shop, t *experiment.Test, view View, storewide bool, s scope, build func() (any, error)) (json.RawMessage, error) {
	norm := AnalyticsRequest{DateStart: s.q.From, DateFinish: s.q.To, Countries: s.filter.Countries,
		ProductIDs: s.q.ProductIDs, DeviceType: s.filter.Device, VisitorType: s.filter.VisitorType}
	return a.cachedKey(ctx, shop, t, view, storewide, norm, build)
}

// cachedKey is cached over any normalized request.
func (a *Analytics) cachedKey(ctx context.Context, shop *experiment.Shop, t *experiment.Test, view View, storewide bool, norm any, build func() (any, error)) (json.RawMessage, error) {
	if err := settled(ctx, a.cfg.Warehouse, shop.ID, t.ID); err != nil {
		return nil, fmt.Errorf("results.Analytics %d: %w", t.ID, err)
	}
	version, err := a.cfg.Activity.DataVersion(ctx, shop.ID, fmt.Sprint(t.ID), storewide)
	if err != nil {
		return nil, fmt.Errorf("results.Analytics version %d: %w", t.ID, err)
	}
	req, err := json.Marshal(norm)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%d/%d/%d/%d/%s/%s/%s/%s", shop.ID, t.ID, t.UpdatedAt.UnixNano(), len(t.Groups), view, shop.Timezone, req, version)
	if body, ok := a.cache.get(key); ok {
		return body, nil
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// Rows that land while build reads make its answer newer than version.
	// Kept under version, it would come back when the version does: a
	// reset-analytics returns a test to the empty version it started from.
	after, err := a.cfg.Activity.DataVersion(ctx, shop.ID, fmt.Sprint(t.ID), storewide)
	if err == nil && after == version {
		a.cache.put(key, body)
	}
	return body, nil
}
