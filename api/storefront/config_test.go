package storefront_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/api/storefront"
	"github.com/liftab/lift/experiment"
)

// countingTests is the config use case with a fixed answer and a call count,
// so the surface's rendering and cache are tested apart from the store
// (cmd/lift's browser test runs it on the real service).
type countingTests struct {
	calls atomic.Int32
	tests []experiment.StorefrontTest
}

func (c *countingTests) StorefrontConfig(_ context.Context, shop *experiment.Shop) (*experiment.StorefrontConfig, error) {
	c.calls.Add(1)
	return &experiment.StorefrontConfig{Shop: shop.Domain, Currency: shop.Currency, Tests: c.tests}, nil
}

// StorefrontPreview answers the token "good" with test 42's group 1 alone
// and refuses any other as the service does.
func (c *countingTests) StorefrontPreview(_ context.Context, shop *experiment.Shop, token string) (*experiment.StorefrontConfig, error) {
	if token != "good" {
		return nil, experiment.Errorf(experiment.KindInvalidRequest, "invalid_preview", "This preview link is not valid or has expired; make a new one.")
	}
	return &experiment.StorefrontConfig{Shop: shop.Domain, Currency: shop.Currency, Tests: []experiment.StorefrontTest{},
		Preview: &experiment.StorefrontPreview{Test: c.tests[0], Group: 1}}, nil
}

// TestStorefrontConfigPreview: a preview link's config is its test alone,
// never cached; a bad token is the surface's 400 (browser audit 2, B2-1).
func TestStorefrontConfigPreview(t *testing.T) {
	t.Parallel()
	src := &countingTests{tests: []experiment.StorefrontTest{{ID: "42", Type: experiment.TypePrice, TrafficAllocation: 80,
		Groups: []experiment.StorefrontGroup{{Index: 0, Weight: 50}, {Index: 1, Weight: 50}}}}}
	b := setup(t, func(c *storefront.Config) { c.Tests = src; c.ConfigTTL = time.Hour })
	r := b.do(t, "GET", storefront.PathConfig+"?shop="+shopDomain+"&preview=good", "", "")
	p, _ := r.body["preview"].(map[string]any)
	if r.status != 200 || p == nil || p["group"] != 1.0 || p["test"].(map[string]any)["id"] != "42" || len(r.body["tests"].([]any)) != 0 ||
		r.header.Get("Cache-Control") != "no-store" || r.header.Get("ETag") != "" {
		t.Fatalf("preview config = %d %v %s", r.status, r.header, r.raw)
	}
	if r := b.do(t, "GET", storefront.PathConfig+"?shop="+shopDomain+"&preview=forged", "", ""); r.status != 400 || r.body["status"] != "error" {
		t.Fatalf("forged preview = %d %s", r.status, r.raw)
	}
	if r := b.do(t, "GET", storefront.PathConfig+"?shop="+shopDomain, "", ""); r.status != 200 || r.body["preview"] != nil {
		t.Fatalf("config without a preview = %d %s", r.status, r.raw)
	}
}

func TestStorefrontConfigEndpoint(t *testing.T) {
	t.Parallel()
	src := &countingTests{tests: []experiment.StorefrontTest{{ID: "42", Type: experiment.TypePrice, TrafficAllocation: 80,
		Groups: []experiment.StorefrontGroup{{Index: 0, Weight: 50}, {Index: 1, Weight: 50}}}}}
	b := setup(t, func(c *storefront.Config) { c.Tests = src; c.ConfigTTL = time.Hour })
	r := b.do(t, "GET", storefront.PathConfig+"?shop="+shopDomain, "", "")
	if r.status != 200 || r.body["shop"] != shopDomain || r.body["currency"] != "EUR" {
		t.Fatalf("config = %d %s", r.status, r.raw)
	}
	want := `{"shop":"demo-shop.myshopify.com","currency":"EUR","tests":[{"id":"42","type":"price","assignment_version":0,"bucketing":0,` +
		`"traffic_allocation":80,"audience":null,"scope":null,"groups":[{"index":0,"name":"","weight":50,"changes":null},` +
		`{"index":1,"name":"","weight":50,"changes":null}]}]}`
	if r.raw != want {
		t.Errorf("body\n got %s\nwant %s", r.raw, want)
	}
	etag := r.header.Get("ETag")
	if len(etag) != 34 || etag[0] != '"' || r.header.Get("Cache-Control") != "public, max-age=60, stale-while-revalidate=300" ||
		r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("headers = %v", r.header)
	}
	for _, c := range []struct {
		inm  string
		want int
	}{{etag, 304}, {"W/" + etag, 304}, {`"other", ` + etag, 304}, {"*", 304}, {`"other"`, 200}} {
		r := b.do(t, "GET", storefront.PathConfig+"?shop="+shopDomain, "", "", "If-None-Match", c.inm)
		if r.status != c.want || r.header.Get("ETag") != etag || (c.want == 304 && r.raw != "") {
			t.Errorf("If-None-Match %s = %d %q etag %s, want %d", c.inm, r.status, r.raw, r.header.Get("ETag"), c.want)
		}
	}
	if n := src.calls.Load(); n != 1 {
		t.Errorf("use case called %d times within the TTL, want 1", n)
	}
	for _, c := range []struct{ query, field string }{
		{"", "shop"}, {"?shop=nope.myshopify.com", "shop"}, {"?shop=" + goneDomain, "shop"},
	} {
		wantError(t, b.do(t, "GET", storefront.PathConfig+c.query, "", ""), 400, c.field)
	}
}

// hungDeps are a config use case and a metadata source that answer only
// when their context ends, as a stalled Postgres does through pgx; after
// ten seconds they give up, so that a handler which drops the request's
// context fails the test instead of hanging it.
type hungDeps struct{}

func (hungDeps) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("store: %w", ctx.Err())
	case <-time.After(10 * time.Second):
		return errors.New("store: the request's context never ended")
	}
}

func (d hungDeps) StorefrontConfig(ctx context.Context, _ *experiment.Shop) (*experiment.StorefrontConfig, error) {
	return nil, d.wait(ctx)
}

func (d hungDeps) StorefrontPreview(ctx context.Context, _ *experiment.Shop, _ string) (*experiment.StorefrontConfig, error) {
	return nil, d.wait(ctx)
}

func (d hungDeps) FindAnalyticsMetadata(ctx context.Context, _ string, _ int) (*storefront.AnalyticsMetadata, error) {
	return nil, d.wait(ctx)
}

// The config read and the GA4 lookup end at http.request_timeout when
// Postgres hangs (ops audit O2-1: they waited as long as the hang, because
// the handlers passed the *gin.Context, whose Done never fires, instead of
// the request's context). The config answers the session surface's
// retryable 503; the lookup answers its usual not-found 200.
func TestHungDependencyEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *storefront.Config) { c.Tests = hungDeps{}; c.Metadata = hungDeps{} })
	r := gin.New()
	r.Use(api.RequestIDs(), api.Deadline(200*time.Millisecond))
	b.h.Mount(r)
	for _, c := range []struct {
		target string
		status int
		body   string
	}{
		{storefront.PathConfig + "?shop=" + shopDomain, 503, `"status":"error"`},
		{storefront.PathGA4Metadata + "?experimentId=1&groupIndex=0", 200, `"found":false`},
	} {
		start := time.Now()
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", c.target, nil))
		took := time.Since(start)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.body) || took > 5*time.Second {
			t.Errorf("%s with a hung store = %d %s after %v, want %d %s within the 200ms deadline",
				c.target, w.Code, w.Body, took, c.status, c.body)
		}
		if c.status == 503 && w.Header().Get("Retry-After") == "" {
			t.Errorf("%s: 503 without Retry-After", c.target)
		}
	}
}
