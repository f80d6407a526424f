package platform_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
)

// TestFetchCatalogReadsMarkets: the catalog read brings every page of the
// shop's enabled markets with their currency and countries; a market the
// merchant turned off is left out (it sells to no one, so a price test
// cannot price it).
func TestFetchCatalogReadsMarkets(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	c.ProductInterval = time.Millisecond
	markets := []experiment.Market{
		{ID: "gid://shopify/Market/1", Name: "United States", Currency: "USD", Countries: []string{"US"}},
		{ID: "gid://shopify/Market/2", Name: "European Union", Currency: "EUR", Countries: []string{"DE", "FR", "NL"}},
		{ID: "gid://shopify/Market/3", Name: "United Kingdom", Currency: "GBP", Countries: []string{"GB"}},
	}
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{Markets: markets})
	fake.PutDisabledMarket(shopDomain, experiment.Market{ID: "gid://shopify/Market/4", Name: "Japan", Currency: "JPY", Countries: []string{"JP"}})
	snap, err := c.FetchCatalog(context.Background(), shopDomain, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.Markets, markets) {
		t.Fatalf("markets\n%+v\nwant\n%+v", snap.Markets, markets)
	}
	if got := fake.Calls(shopDomain, "Markets"); got != 2 { // four markets, two a page
		t.Errorf("Markets answered %d times, want 2", got)
	}
}

// TestFetchCatalogWithoutTheNewScopes: a shop installed before Lift asked
// for read_shipping and read_markets has a token the platform refuses
// those reads with (ACCESS_DENIED); the catalog read still succeeds,
// saying nothing of zones and markets (nil, so a refresh keeps the
// mirror's), while a token granted write_shipping reads the zones.
func TestFetchCatalogWithoutTheNewScopes(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	c.ProductInterval = time.Millisecond
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{
		DeliveryZones: []experiment.Zone{{ID: "gid://shopify/DeliveryZone/1", Name: "Domestic", Countries: []string{"US"}}},
		Markets:       []experiment.Market{{ID: "gid://shopify/Market/2", Name: "EU", Currency: "EUR", Countries: []string{"DE"}}}})
	for _, tc := range []struct {
		scopes       []string
		zones, marks bool
	}{
		{[]string{"read_products", "write_products"}, false, false},
		{[]string{"read_products", "write_shipping"}, true, false},
		{[]string{"read_products", "read_shipping", "read_markets"}, true, true},
	} {
		token := oauthToken(t, c, tc.scopes)
		snap, err := c.FetchCatalog(context.Background(), shopDomain, token)
		if err != nil {
			t.Fatalf("%v: %v", tc.scopes, err)
		}
		if (snap.DeliveryZones != nil) != tc.zones || (snap.Markets != nil) != tc.marks ||
			(tc.zones && len(snap.DeliveryZones) != 1) || (tc.marks && len(snap.Markets) != 1) {
			t.Fatalf("%v: zones %+v, markets %+v", tc.scopes, snap.DeliveryZones, snap.Markets)
		}
	}
}

// oauthToken is a token the fake issues through OAuth with scopes.
func oauthToken(t *testing.T, c *platform.Client, scopes []string) string {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(c.AuthorizeURL(shopDomain, scopes, "https://lift.example/api/auth/callback", "n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	grant, err := c.ExchangeCode(context.Background(), shopDomain, loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	return grant.AccessToken
}
