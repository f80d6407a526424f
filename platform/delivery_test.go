package platform_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
)

// TestFetchCatalogReadsDeliveryZones: the catalog read brings the default
// delivery profile's zones, every page of them, with their own rates and
// whether Lift's carrier service takes part: only Lift's callback, active,
// counts; a zone handed to Lift keeps its own rates (turned off) as what
// Lift quotes, a zone served by another app's carrier has none of its own
// on, and a zone without carriers lists its active rates.
func TestFetchCatalogReadsDeliveryZones(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	c.ProductInterval = time.Millisecond
	const ours, theirs = "https://lift.test/api/carrier/rates", "https://other.example/rates"
	c.RatesURL, fake.LiftRatesURL = ours, ours
	rate := func(id, name, price string) experiment.ZoneRate {
		return experiment.ZoneRate{ID: "gid://shopify/DeliveryMethodDefinition/" + id, Name: name, Price: price}
	}
	zone := func(id, name string, lift bool, countries []string, rates ...experiment.ZoneRate) experiment.Zone {
		return experiment.Zone{ID: "gid://shopify/DeliveryZone/" + id, Name: name, Countries: countries, Rates: rates, LiftRates: lift}
	}
	// Conditions come back as set: a subtotal bound, weight bounds (the
	// fake speaks kilograms, 0.5 kg is 500 g).
	freeFrom75 := rate("13", "Free", "0.00")
	freeFrom75.MinSubtotal, freeFrom75.MinGrams, freeFrom75.MaxGrams = "75.00", 500, 20000
	zones := []experiment.Zone{
		zone("1", "Domestic", true, []string{"US"}, rate("11", "Standard", "6.95"), rate("12", "Express", "14.95"), freeFrom75),
		zone("2", "Europe", false, []string{"DE", "FR"}, rate("21", "Standard", "12.00")),
		zone("3", "Canada", false, []string{"CA"}, rate("31", "Standard", "9.00")),
		zone("4", "Oceania", false, []string{"AU", "NZ"}, rate("41", "Economy", "15.00")),
		zone("5", "Rest of world", false, []string{}),
	}
	zones[4].RestOfWorld = true
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{DeliveryZones: zones})
	fake.PutZoneCarrier(shopDomain, zones[1].ID, theirs, true) // another app serves Europe
	fake.PutZoneCarrier(shopDomain, zones[2].ID, ours, false)  // Lift rates added to Canada, then turned off
	snap, err := c.FetchCatalog(context.Background(), shopDomain, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []experiment.Zone{
		zones[0],
		zone("2", "Europe", false, []string{"DE", "FR"}),
		zones[2], zones[3], zones[4],
	}
	want[1].Rates, want[4].Rates = []experiment.ZoneRate{}, []experiment.ZoneRate{}
	if !reflect.DeepEqual(snap.DeliveryZones, want) {
		t.Fatalf("zones\n%+v\nwant\n%+v", snap.DeliveryZones, want)
	}
	// Five zones are three pages of the fake's two; the profiles, one
	// page of two (the merchant's own profile comes first).
	for op, n := range map[string]int{"DeliveryProfiles": 1, "DeliveryZones": 3} {
		if got := fake.Calls(shopDomain, op); got != n {
			t.Errorf("%s answered %d times, want %d", op, got, n)
		}
	}
}

// TestFetchCatalogZonesFailed: a refused zone read fails the catalog read
// (a refresh keeps the mirror whole), as a refused product page does.
func TestFetchCatalogZonesFailed(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	c.ProductInterval = time.Millisecond
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{
		DeliveryZones: []experiment.Zone{{ID: "gid://shopify/DeliveryZone/1", Name: "Domestic", Countries: []string{"US"}}}})
	fake.Fail(shopDomain, "DeliveryZones", 403)
	if snap, err := c.FetchCatalog(context.Background(), shopDomain, ""); err == nil || !isStatus(err, 403) {
		t.Fatalf("FetchCatalog = %+v, %v; want the 403", snap, err)
	}
}

// TestFetchCatalogReadsThemeTemplates: each theme comes with its
// templates, every page of them, sorted; before, a real shop's themes had
// none and every template test was template_not_found.
func TestFetchCatalogReadsThemeTemplates(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	c.ProductInterval = time.Millisecond
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{Themes: []experiment.Theme{
		{ID: "gid://shopify/OnlineStoreTheme/1", Name: "Dawn", Role: "main", Templates: []string{"product", "product.alternate", "collection", "customers/account", "index"}},
		{ID: "gid://shopify/OnlineStoreTheme/2", Name: "Bare", Role: "unpublished", Templates: []string{}},
	}})
	snap, err := c.FetchCatalog(context.Background(), shopDomain, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []experiment.Theme{
		{ID: "gid://shopify/OnlineStoreTheme/1", Name: "Dawn", Role: "main", Templates: []string{"collection", "customers/account", "index", "product", "product.alternate"}},
		{ID: "gid://shopify/OnlineStoreTheme/2", Name: "Bare", Role: "unpublished", Templates: []string{}},
	}
	if !reflect.DeepEqual(snap.Themes, want) {
		t.Fatalf("themes\n%+v\nwant\n%+v", snap.Themes, want)
	}
	if got := fake.Calls(shopDomain, "ThemeTemplates"); got != 4 { // three pages of Dawn's five, one of Bare's none
		t.Errorf("ThemeTemplates answered %d times, want 4", got)
	}
}

// TestDeliveryZonesReadLive: the launch's read of the zones says, for
// each, whether it offers Lift rates now (Lift's callback, active), with
// the light query alone; a grant that cannot read delivery profiles
// answers nil, not an error.
func TestDeliveryZonesReadLive(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	const ours = "https://lift.test/api/carrier/rates"
	c.RatesURL, fake.LiftRatesURL = ours, ours
	const zone = "gid://shopify/DeliveryZone/31"
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{DeliveryZones: []experiment.Zone{
		{ID: zone, Name: "Canada", Countries: []string{"CA"}, Rates: []experiment.ZoneRate{{ID: "gid://shopify/DeliveryMethodDefinition/311", Name: "Standard", Price: "9.00"}}}}})
	shop := &experiment.Shop{Domain: shopDomain}
	offers := func() bool {
		t.Helper()
		zones, err := c.DeliveryZones(context.Background(), shop)
		if err != nil || len(zones) != 1 || zones[0].ID != zone || zones[0].Name != "Canada" {
			t.Fatalf("zones = %+v, %v", zones, err)
		}
		return zones[0].LiftRates
	}
	if offers() {
		t.Fatal("a zone without Lift's carrier reads as offering Lift rates")
	}
	fake.PutZoneCarrier(shopDomain, zone, ours, true)
	if !offers() {
		t.Fatal("a zone the merchant handed to Lift reads as not offering Lift rates")
	}
	if got, whole := fake.Calls(shopDomain, "DeliveryZoneCarriers"), fake.Calls(shopDomain, "DeliveryZones"); got != 2 || whole != 0 {
		t.Errorf("two reads sent DeliveryZoneCarriers %d times and DeliveryZones %d times, want 2 and 0", got, whole)
	}
	c.Token = oauthToken(t, c, []string{"read_products", "write_products"})
	if zones, err := c.DeliveryZones(context.Background(), shop); zones != nil || err != nil {
		t.Fatalf("a grant that cannot read zones: %+v, %v; want nil, nil", zones, err)
	}
}
