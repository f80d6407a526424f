package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBuiltInPlatformSellsTheDemoCatalog: on a node without platform.url
// (lift dev, make run), the OAuth install that the welcome's install URL
// starts keeps the demo shop's catalog, and a catalog refresh reads the
// same one back: the built-in fake platform sells the demo catalog. It
// used to sell nothing, and the install emptied the demo shop's mirror.
func TestBuiltInPlatformSellsTheDemoCatalog(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, _ := s.shop(true)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	step := func(u string) *url.URL {
		t.Helper()
		resp, err := noFollow.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if resp.StatusCode != http.StatusFound || err != nil {
			t.Fatalf("GET %s = %d %v, want a redirect", u, resp.StatusCode, err)
		}
		return loc
	}
	authorize := step(s.url + "/api/auth?shop=" + url.QueryEscape(shop.Domain))
	callback := step(authorize.String()) // the fake approves, as a merchant clicking Install
	callback.Scheme, callback.Host = "http", strings.TrimPrefix(s.url, "http://")
	if app := step(callback.String()); app.Path != "/app/" {
		t.Fatalf("the install ended at %s, want the app", app)
	}
	ctx := context.Background()
	installed, err := s.app.DB.FindShopByDomain(ctx, shop.Domain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.app.installService().RefreshCatalog(ctx, installed)
	want := "catalog refreshed: 8 products (+0/-0), 21 variants (+0/-0; 0 prices and 0 unit costs changed), 3 collections (+0/-0), 3 themes, 2 delivery zones (2 with Lift rates), 3 markets"
	if err != nil || got.String() != want {
		t.Fatalf("refresh after the install: %q (%v), want %q", got, err, want)
	}
}
