package storefront

import (
	"context"
	"sync"
	"time"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// shopCache keeps shop lookups off Postgres on the hot path. Found shops
// live ShopTTL, unknown domains MissingShopTTL (so a new install is seen
// within seconds). If the lookup fails for another reason (Postgres down), a
// stale entry is served rather than refusing tracking.
type shopCache struct {
	r        ShopResolver
	ttl, neg time.Duration
	lookup   time.Duration // lookupTimeout; tests shorten it
	now      func() time.Time
	mu       sync.RWMutex
	m        map[string]shopEntry
}

type shopEntry struct {
	shop    *experiment.Shop // nil: no such shop
	expires time.Time
}

// lookupTimeout bounds one shop lookup on the tracking path.
const lookupTimeout = 2 * time.Second

// maxCachedShops bounds the map: a flood of made-up domains only resets it.
const maxCachedShops = 100_000

func newShopCache(r ShopResolver, ttl, neg time.Duration, now func() time.Time) *shopCache {
	return &shopCache{r: r, ttl: ttl, neg: neg, lookup: lookupTimeout, now: now, m: make(map[string]shopEntry)}
}

// find returns the installed shop of a domain, or a 400 naming param.
func (c *shopCache) find(ctx context.Context, param, domain string) (*experiment.Shop, error) {
	domain = experiment.NormalizeShopDomain(domain)
	if domain == "" {
		return nil, experiment.Errorf(experiment.KindInvalidRequest, "missing_parameter", "%s is required", param).WithParam(param)
	}
	if len(domain) > 255 { // no host name is longer; nor is a shop's
		return nil, experiment.Errorf(experiment.KindInvalidRequest, "invalid_parameter",
			"%s must be a shop domain such as example.myshopify.com", param).WithParam(param)
	}
	now := c.now()
	c.mu.RLock()
	e, ok := c.m[domain]
	c.mu.RUnlock()
	if !ok || now.After(e.expires) {
		// Bytes Postgres cannot hold as text must not reach the lookup,
		// where they fail it (a 500): they are the caller's error. A cached
		// domain passed this check already.
		if !api.ValidText(domain) {
			return nil, experiment.Errorf(experiment.KindInvalidRequest, "invalid_parameter",
				"%s must be a shop domain such as example.myshopify.com", param).WithParam(param)
		}
		// A hung Postgres must not hold tracking: past lookupTimeout the
		// stale entry serves, or the request gets a 503 to retry (the ops
		// audit's requests waited as long as Postgres did, and the
		// tracker does not retry a beacon).
		lctx, cancel := context.WithTimeout(ctx, c.lookup)
		shop, err := c.r.FindShopByDomain(lctx, domain)
		cancel()
		switch {
		case err == nil:
			e = shopEntry{shop: shop, expires: now.Add(c.ttl)}
		case experiment.IsNotFound(err):
			e = shopEntry{expires: now.Add(c.neg)}
		case ok:
			return usable(param, domain, e.shop) // stale beats refusing tracking
		default:
			return nil, experiment.Errorf(experiment.KindUnavailable, "shop_lookup_unavailable",
				"The shop could not be looked up; retry in a few seconds.")
		}
		c.mu.Lock()
		if len(c.m) >= maxCachedShops {
			clear(c.m)
		}
		c.m[domain] = e
		c.mu.Unlock()
	}
	return usable(param, domain, e.shop)
}

func usable(param, domain string, shop *experiment.Shop) (*experiment.Shop, error) {
	if shop == nil || !shop.Installed() {
		return nil, experiment.Errorf(experiment.KindInvalidRequest, "unknown_shop",
			"%s %q is not a shop with Lift installed", param, domain).WithParam(param)
	}
	return shop, nil
}
