package storefront

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

// PathConfig is what /lift.js reads on every page: the shop's active tests.
const PathConfig = "/api/storefront/config"

// TestsConfig is the use case behind PathConfig; *experiment.Service
// implements it.
type TestsConfig interface {
	StorefrontConfig(ctx context.Context, shop *experiment.Shop) (*experiment.StorefrontConfig, error)
	// StorefrontPreview is the config of a preview link: its test alone.
	StorefrontPreview(ctx context.Context, shop *experiment.Shop, token string) (*experiment.StorefrontConfig, error)
}

// configCacheControl lets browsers and CDNs keep the config a minute and
// serve it stale for five more while they revalidate: a started or paused
// test reaches storefronts within about a minute, and a page load never
// waits on Lift for it.
const configCacheControl = "public, max-age=60, stale-while-revalidate=300"

// configCache keeps rendered configs for a few seconds, so a busy
// storefront's revalidations do not each read Postgres.
type configCache struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[int64]renderedConfig
}

type renderedConfig struct {
	body    []byte
	etag    string
	expires time.Time
}

func (c *configCache) get(ctx context.Context, src TestsConfig, shop *experiment.Shop) (renderedConfig, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[shop.ID]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e, nil
	}
	cfg, err := src.StorefrontConfig(ctx, shop)
	if err != nil {
		return renderedConfig{}, err
	}
	body, err := json.Marshal(cfg)
	if err != nil {
		return renderedConfig{}, err
	}
	sum := sha256.Sum256(body)
	e = renderedConfig{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, expires: now.Add(c.ttl)}
	c.mu.Lock()
	if len(c.m) >= maxCachedShops {
		clear(c.m)
	}
	c.m[shop.ID] = e
	c.mu.Unlock()
	return e, nil
}

// GET /api/storefront/config?shop → the shop's active tests as JSON, with a
// strong ETag (a hash of the body) and 304 on If-None-Match. An unknown or
// uninstalled shop is the surface's 400 like every tracking call. With
// &preview=<token> (a preview link's): that test and group alone, never
// cached, 400 for a token not valid here or expired, 404 for a test gone.
func (h *Handler) config(c *gin.Context) error {
	shop, err := h.findShop(c, c.Query("shop"))
	if err != nil {
		return err
	}
	if token := c.Query("preview"); token != "" {
		cfg, err := h.cfg.Tests.StorefrontPreview(c.Request.Context(), shop, token)
		if err != nil {
			return err
		}
		c.Header("Cache-Control", "no-store")
		c.JSON(http.StatusOK, cfg)
		return nil
	}
	e, err := h.configs.get(c.Request.Context(), h.cfg.Tests, shop)
	if err != nil {
		return err
	}
	c.Header("Cache-Control", configCacheControl)
	c.Header("ETag", e.etag)
	if etagMatches(c.GetHeader("If-None-Match"), e.etag) {
		c.Status(http.StatusNotModified)
		return nil
	}
	c.Data(http.StatusOK, contentTypeJSON, e.body)
	return nil
}

// etagMatches reads an If-None-Match list ("*" or tags, weak or not).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
