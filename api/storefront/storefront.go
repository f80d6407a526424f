// Package storefront serves the public tracking endpoints that storefronts
// call from visitors' browsers (session document 4.4): sessions, country,
// observe, track event / assignment, the three legacy analytics calls and the
// analytics-vendor metadata. Handlers parse, call the ingester, answer; they
// hold no SQL and decide nothing about validity.
package storefront

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/ingest"
)

// ShopResolver finds a shop by its platform domain. *store.DB implements it.
// It returns a KindNotFound *experiment.Error when no shop has that domain.
type ShopResolver interface {
	FindShopByDomain(ctx context.Context, domain string) (*experiment.Shop, error)
}

// AnalyticsMetadata is what GET /api/ga4/metadata answers when found.
type AnalyticsMetadata struct {
	ExperimentID           string
	ExperimentName         string
	VariantID              int
	VariantName            string
	AnalyticsMeasurementID string
}

// MetadataSource finds the analytics-vendor metadata of a test group. It
// returns a KindNotFound *experiment.Error when the test or group does not
// exist or the feature is off for the shop.
type MetadataSource interface {
	FindAnalyticsMetadata(ctx context.Context, experimentID string, groupIndex int) (*AnalyticsMetadata, error)
}

// Config wires the surface. Ingester and Shops are required.
type Config struct {
	Ingester *ingest.Ingester
	Shops    ShopResolver
	Metadata MetadataSource // nil: every lookup answers found=false
	Geo      *GeoIP         // nil: only CDN headers resolve a country
	Tests    TestsConfig    // nil: no /api/storefront/config route
	// ConfigTTL is how long a shop's rendered config is reused; default 5 s.
	ConfigTTL time.Duration

	// CountryHeaders are read in order for a CDN-provided country before
	// GeoIP; default CF-IPCountry (Cloudflare), CloudFront-Viewer-Country
	// (CloudFront), X-Vercel-IP-Country (Vercel), X-Country-Code (any proxy
	// configured to set it).
	CountryHeaders []string
	ShopTTL        time.Duration // how long a found shop is cached; default 60 s
	MissingShopTTL time.Duration // how long an unknown domain is cached; default 5 s
	MaxBodyBytes   int64         // request body limit; default 64 KiB
	Logger         *slog.Logger
}

// Handler holds the surface's dependencies.
type Handler struct {
	cfg     Config
	in      *ingest.Ingester
	shops   *shopCache
	configs *configCache
	log     *slog.Logger
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Handler, error) {
	if cfg.Ingester == nil || cfg.Shops == nil {
		return nil, errors.New("storefront.New: Ingester and Shops are required")
	}
	if cfg.CountryHeaders == nil {
		cfg.CountryHeaders = []string{"CF-IPCountry", "CloudFront-Viewer-Country", "X-Vercel-IP-Country", "X-Country-Code"}
	}
	cfg.ShopTTL = cmp.Or(cfg.ShopTTL, 60*time.Second)
	cfg.MissingShopTTL = cmp.Or(cfg.MissingShopTTL, 5*time.Second)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, 64<<10)
	cfg.ConfigTTL = cmp.Or(cfg.ConfigTTL, 5*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Handler{
		cfg: cfg, in: cfg.Ingester, log: cfg.Logger,
		shops:   newShopCache(cfg.Shops, cfg.ShopTTL, cfg.MissingShopTTL, cfg.Ingester.Now),
		configs: &configCache{ttl: cfg.ConfigTTL, now: cfg.Ingester.Now, m: map[int64]renderedConfig{}},
	}, nil
}

// Routes of the surface, relative to the app root.
const (
	PathGetSession  = "/api/get-session"
	PathCountryCode = "/api/public/get-country-code"
	PathObserve     = "/api/observe"
	PathObserveSess = "/api/observe/session"
	PathTrackEvent  = "/api/track/event"
	PathTrackAssign = "/api/track/assignment"
	PathAddToCart   = "/api/analytics/add-to-cart"
	PathCheckout    = "/api/analytics/checkout"
	PathOrder       = "/api/analytics/order"
	PathGA4Metadata = "/api/ga4/metadata"
)

// Tracking is the routes a storefront calls on every page to record what
// happened (they bound their one Postgres read themselves).
var Tracking = []string{PathGetSession, PathObserve, PathObserveSess, PathTrackEvent, PathTrackAssign,
	PathAddToCart, PathCheckout, PathOrder}

// PerPage is every route a storefront calls on each page view: Tracking and
// the reads lift.js makes beside it (its config, the visitor's country). The
// access log keeps their accepted calls at debug level: they come as often
// as page views (the demo store's traffic logged a line every 120 ms).
var PerPage = append([]string{PathConfig, PathCountryCode}, Tracking...)

// Mount registers every route, with CORS and its preflight, on r. Errors
// are answered by api.WriteError in the session surface's envelope
// {"status":"error","message":…}.
func (h *Handler) Mount(r gin.IRouter) {
	g := r.Group("", api.UseSurface(api.SurfaceSession), cors)
	routes := []struct {
		method, path string
		fn           func(*gin.Context) error
	}{
		{"GET", PathGetSession, h.getSession},
		{"GET", PathCountryCode, h.countryCode},
		{"GET", PathObserve, h.observe},
		{"GET", PathObserveSess, h.observeSession},
		{"POST", PathTrackEvent, h.trackEvent},
		{"POST", PathTrackAssign, h.trackAssignment},
		{"POST", PathAddToCart, h.legacy(ingest.LegacyAddToCart)},
		{"POST", PathCheckout, h.legacy(ingest.LegacyCheckout)},
		{"POST", PathOrder, h.legacy(ingest.LegacyOrder)},
		{"GET", PathGA4Metadata, h.ga4Metadata},
	}
	if h.cfg.Tests != nil {
		routes = append(routes, struct {
			method, path string
			fn           func(*gin.Context) error
		}{"GET", PathConfig, h.config})
	}
	for _, rt := range routes {
		g.Handle(rt.method, rt.path, api.Handle(rt.fn))
		g.OPTIONS(rt.path, preflight)
	}
}
