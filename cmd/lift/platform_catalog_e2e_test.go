package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

// TestShippingZonesFromThePlatform: an OAuth install reads the shop's
// delivery zones from the platform (before, only a catalog file brought
// them, so a shipping test of a real shop was zone_not_found). A shipping
// test over a zone that does not offer Lift rates is created with a
// warning saying so; once the merchant hands the zone to Lift (its own
// rates turned off, Lift rates added) a catalog refresh records it, the
// same test is created without the warning, and the carrier callback
// still quotes the control the zone's own rates, each only to the carts
// its conditions allow ("free from 50"). A destination no zone lists gets
// the rest-of-world zone's rates.
func TestShippingZonesFromThePlatform(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})
	const zone = "gid://shopify/DeliveryZone/41"
	catalog := refreshedCatalog()
	catalog.DeliveryZones = []experiment.Zone{{ID: zone, Name: "Germany", Countries: []string{"DE"},
		Rates: []experiment.ZoneRate{{ID: "gid://shopify/DeliveryMethodDefinition/411", Name: "Standard", Price: "4.90"},
			{ID: "gid://shopify/DeliveryMethodDefinition/412", Name: "Free", Price: "0.00", MinSubtotal: "50.00"}}},
		{ID: "gid://shopify/DeliveryZone/40", Name: "Rest of world", RestOfWorld: true, LiftRates: true,
			Rates: []experiment.ZoneRate{{ID: "gid://shopify/DeliveryMethodDefinition/401", Name: "Worldwide", Price: "19.00"}}}}
	h.fake.SetShop(h.domain, experiment.ShopInfo{Name: "Installed Shop", Currency: "EUR", Timezone: "Europe/Berlin"}, catalog)
	shop, token := h.installForPriceTests(ctx)
	// The install registered Lift rates, so the merchant can add them to
	// a zone before any shipping test starts.
	if got := h.fake.ActiveCarriers(h.domain); len(got) != 1 || got[0] != h.app.PlatformClient.RatesURL || !shopNow(t, h, shop).CarrierService {
		t.Fatalf("carrier services after the install = %v; the shop's carrier_service %v", got, shopNow(t, h, shop).CarrierService)
	}
	// That is the contract's "existing carrier service": no plan feature
	// is needed for a shipping test.
	features := []string{"price"}
	if _, err := h.app.DB.UpdateShop(ctx, shop.ID, store.ShopUpdate{Features: &features}); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"type":"shipping","name":"Cheaper standard","shared":{"shipping":{"zone_ids":[%q]}},
		"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Cheaper","split":50,
		"content":{"rates":[{"zone_id":%q,"rate_id":"gid://shopify/DeliveryMethodDefinition/411","name":"Standard","price":{"amount":"2.90","currency":"EUR"}}]}}]}`, zone, zone)
	var first string // the first test's id
	warnings := func() []any {
		t.Helper()
		r := h.do("POST", "/v1/experiments", token, body, "Content-Type", "application/json")
		if r.status != 201 {
			t.Fatalf("create = %d %s", r.status, r.raw)
		}
		first = cmp.Or(first, fmt.Sprint(r.body["id"]))
		w, _ := r.body["warnings"].([]any)
		return w
	}
	w := warnings()
	// The warning stands on the test: its reads show it too.
	if got, _ := h.do("GET", "/v1/experiments/"+first, token, "").body["warnings"].([]any); len(got) != 1 {
		t.Fatalf("v1 read of the warned test: warnings %v", got)
	}
	if len(w) != 1 {
		t.Fatalf("warnings = %v, want the zone's", w)
	}
	// Nor does it start: the launch reads the zones live and refuses.
	r := h.do("POST", "/v1/experiments/"+first+"/start", token, "", "Idempotency-Key", "start-"+first)
	wantError(t, r, 422, "validation_error", "launch_blocked", nil)
	if msg := fmt.Sprint(r.errField("message")); !strings.Contains(msg, "Zone Germany ("+zone+") does not offer Lift rates") {
		t.Fatalf("launch_blocked message %q does not name the zone", msg)
	}
	if got := h.do("GET", "/v1/experiments/"+first, token, "").body["status"]; got != "draft" {
		t.Fatalf("a refused start left the test %v", got)
	}
	if f, _ := w[0].(map[string]any); f["code"] != "zone_without_lift_rates" || f["severity"] != "warning" ||
		f["param"] != "shared.shipping.zone_ids[0]" || !strings.Contains(fmt.Sprint(f["message"]), "Germany") {
		t.Fatalf("warning = %v", f)
	}

	h.fake.PutZoneCarrier(h.domain, zone, h.app.PlatformClient.RatesURL, true)
	out, err := h.app.installService().RefreshCatalog(ctx, shop)
	if err != nil || !strings.HasSuffix(out.String(), ", 2 delivery zones (2 with Lift rates), 0 markets") {
		t.Fatalf("refresh = %q, %v", out, err)
	}
	if w := warnings(); len(w) != 0 {
		t.Fatalf("warnings after the zone offers Lift rates = %v", w)
	}
	if got, _ := h.do("GET", "/v1/experiments/"+first, token, "").body["warnings"].([]any); len(got) != 0 {
		t.Fatalf("the first test still warned after the refresh that found Lift rates: %v", got)
	}
	flagsOnRefresh(t, h, shop, token, zone, body)
	for _, c := range []struct{ country, subtotal, want string }{
		{"DE", "20.00", "Standard 4.90"}, {"DE", "50.00", "Standard 4.90, Free 0.00"},
		{"JP", "20.00", "Worldwide 19.00"}, {"US", "80.00", "Worldwide 19.00"},
	} {
		rates, err := h.app.experiments().QuoteRates(ctx, shop, experiment.RateRequest{Country: c.country, Subtotal: c.subtotal, Grams: 400})
		var got []string
		for _, r := range rates {
			got = append(got, r.Name+" "+r.Price.Amount)
		}
		if err != nil || strings.Join(got, ", ") != c.want {
			t.Fatalf("the control's rates to %s for %s = %v, %v; want the zone's own %s", c.country, c.subtotal, got, err, c.want)
		}
	}
}

// TestMarketsFromThePlatform: an OAuth install reads the shop's enabled
// markets, so a price test priced in one is accepted (before, only a
// catalog file brought markets, and every market of a real shop was
// market_pricing_incomplete); once the merchant turns the market off, a
// refresh drops it and the same test is refused naming it.
func TestMarketsFromThePlatform(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})
	uk := experiment.Market{ID: "gid://shopify/Market/7", Name: "United Kingdom", Currency: "GBP", Countries: []string{"GB"}}
	catalog := refreshedCatalog()
	catalog.Markets = []experiment.Market{uk}
	info := experiment.ShopInfo{Name: "Installed Shop", Currency: "EUR", Timezone: "Europe/Berlin"}
	h.fake.SetShop(h.domain, info, catalog)
	shop, token := h.installForPriceTests(ctx)
	features := []string{"price", "multi_market"}
	if _, err := h.app.DB.UpdateShop(ctx, shop.ID, store.ShopUpdate{Features: &features}); err != nil {
		t.Fatal(err)
	}
	body := `{"type":"price","name":"UK price","shared":{"price":{"product_ids":["gid://shopify/Product/101"],
		"markets":[{"id":"gid://shopify/Market/7","countries":["GB"]}]}},
		"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Lower","split":50,"content":{"prices":[
		{"product_variant_id":"gid://shopify/ProductVariant/101","price":{"amount":"17.90","currency":"EUR"},
		 "country_prices":[{"country":"GB","price":{"amount":"15.00","currency":"GBP"}}]}]}}]}`
	if r := h.do("POST", "/v1/experiments", token, body, "Content-Type", "application/json"); r.status != 201 {
		t.Fatalf("create priced in the platform's market = %d %s", r.status, r.raw)
	}

	catalog.Markets = nil
	h.fake.SetShop(h.domain, info, catalog)
	h.fake.PutDisabledMarket(h.domain, uk)
	if r, err := h.app.installService().RefreshCatalog(ctx, shop); err != nil || !strings.HasSuffix(r.String(), ", 0 markets") {
		t.Fatalf("refresh = %q, %v", r, err)
	}
	wantError(t, h.do("POST", "/v1/experiments", token, body, "Content-Type", "application/json"),
		422, "validation_error", "market_pricing_incomplete", "shared.price.markets[0].id")
}

// flagsOnRefresh: a running shipping test (and any other not ended) whose
// zone stops offering Lift rates gets the standing warning at the next
// catalog refresh, on v1's read of the test, and loses it once the zone
// offers them again.
func flagsOnRefresh(t *testing.T, h *installHarness, shop *experiment.Shop, token, zone, body string) {
	t.Helper()
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})
	r := h.do("POST", "/v1/experiments", token, body, "Content-Type", "application/json")
	id := fmt.Sprint(r.body["id"])
	if r = h.do("POST", "/v1/experiments/"+id+"/start", token, "", "Idempotency-Key", "start-"+id); r.status != 200 {
		t.Fatalf("start = %d %s", r.status, r.raw)
	}
	standing := func() []any {
		t.Helper()
		w, _ := h.do("GET", "/v1/experiments/"+id, token, "").body["warnings"].([]any)
		return w
	}
	h.fake.ClearZoneCarriers(h.domain, zone) // the merchant takes the zone back
	out, err := h.app.installService().RefreshCatalog(ctx, shop)
	// The running test and the two drafts the caller made.
	if err != nil || !strings.HasSuffix(out.String(), "; 3 shipping tests on zones without Lift rates") {
		t.Fatalf("refresh = %q, %v", out, err)
	}
	w := standing()
	if len(w) != 1 {
		t.Fatalf("standing warnings = %v, want the zone's", w)
	}
	if f, _ := w[0].(map[string]any); f["code"] != "zone_without_lift_rates" || f["param"] != "shared.shipping.zone_ids[0]" ||
		!strings.Contains(fmt.Sprint(f["message"]), "Germany") {
		t.Fatalf("standing warning = %v", f)
	}
	h.fake.PutZoneCarrier(h.domain, zone, h.app.PlatformClient.RatesURL, true)
	if out, err = h.app.installService().RefreshCatalog(ctx, shop); err != nil || out.ShippingTestsFlagged != 0 {
		t.Fatalf("refresh = %q, %v", out, err)
	}
	if w := standing(); len(w) != 0 {
		t.Fatalf("standing warnings once the zone offers Lift rates again = %v", w)
	}
}

// TestInstallWhereCarrierServicesAreRefused: a shop whose plan lacks
// carrier-calculated shipping refuses Lift's carrier service; the install
// goes on without it (only shipping tests need it, and their launch asks
// again).
func TestInstallWhereCarrierServicesAreRefused(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	h.fake.Fail(h.domain, "CarrierServiceCreate", 403)
	shop, token := h.installForPriceTests(experiment.WithActor(context.Background(), experiment.Actor{Name: "test"}))
	if got := h.fake.ActiveCarriers(h.domain); len(got) != 0 || shopNow(t, h, shop).CarrierService {
		t.Fatalf("carrier services %v, shop %+v", got, shopNow(t, h, shop))
	}
	// Nor can it make a shipping test: its plan has no carrier-calculated
	// shipping (contract part 5, carrier_service_required).
	const zone = "gid://shopify/DeliveryZone/41"
	body := fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q]}},"test_groups":[{"index":0,"name":"A","split":50},
		{"index":1,"name":"B","split":50,"content":{"rates":[{"zone_id":%q,"name":"Standard","price":{"amount":"2.90","currency":"EUR"}}]}}]}`, zone, zone)
	wantError(t, h.do("POST", "/v1/experiments", token, body, "Content-Type", "application/json"),
		403, "permission_error", "carrier_service_required", nil)
}

// shopNow reads the shop as it is stored now.
func shopNow(t *testing.T, h *installHarness, shop *experiment.Shop) *experiment.Shop {
	t.Helper()
	s, err := h.app.DB.FindShopByDomain(context.Background(), shop.Domain)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestThemeTemplatesFromThePlatform: an OAuth install reads each theme's
// templates, so a template test of a real shop's alternate template is
// accepted (before, themes came without templates and every template
// test was template_not_found), and one of a template the theme lacks is
// still refused, naming it.
func TestThemeTemplatesFromThePlatform(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})
	const theme = "gid://shopify/OnlineStoreTheme/5"
	catalog := refreshedCatalog()
	catalog.Themes = []experiment.Theme{{ID: theme, Name: "Dawn", Role: "main", Templates: []string{"product", "product.alternate"}}}
	h.fake.SetShop(h.domain, experiment.ShopInfo{Name: "Installed Shop", Currency: "EUR", Timezone: "Europe/Berlin"}, catalog)
	_, token := h.installForPriceTests(ctx)
	body := func(template string) string {
		return fmt.Sprintf(`{"type":"template","name":"Alternate PDP","shared":{"template":{"theme_id":%q}},
			"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Alternate","split":50,"content":{"template":%q}}]}`, theme, template)
	}
	if r := h.do("POST", "/v1/experiments", token, body("product.alternate"), "Content-Type", "application/json"); r.status != 201 {
		t.Fatalf("create of the theme's alternate template = %d %s", r.status, r.raw)
	}
	wantError(t, h.do("POST", "/v1/experiments", token, body("product.other"), "Content-Type", "application/json"),
		422, "validation_error", "template_not_found", "test_groups[1].content.template")
}
