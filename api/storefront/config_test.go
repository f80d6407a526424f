package storefront_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

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
