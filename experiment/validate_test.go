package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// memCatalog is an in-memory Catalog for the pure domain's tests; the store's
// tests run the same rules against Postgres.
type memCatalog struct{ v CatalogView }

func (m memCatalog) Lookup(_ context.Context, _ int64, r CatalogRefs) (*CatalogView, error) {
	out := &CatalogView{Products: map[string]Product{}, Variants: map[string]Variant{},
		Collections: map[string]Collection{}, Themes: map[string]Theme{}, Zones: map[string]Zone{}, Markets: map[string]Market{}}
	for _, id := range r.Products {
		if p, ok := m.v.Products[id]; ok {
			out.Products[id] = p
		}
	}
	for _, id := range r.Variants {
		if p, ok := m.v.Variants[id]; ok {
			out.Variants[id] = p
		}
	}
	for id, p := range m.v.Variants {
		if slices.Contains(r.ProductVariants, p.ProductID) {
			out.Variants[id] = p
		}
	}
	for _, id := range r.Collections {
		if p, ok := m.v.Collections[id]; ok {
			out.Collections[id] = p
		}
	}
	out.Floors = map[string]Item{}
	for _, id := range r.CollectionFloors {
		if f, ok := m.v.Floor(id); ok {
			out.Floors[id] = f
		}
	}
	if x, ok := m.v.FindDearest(); ok && r.Dearest {
		out.Dearest = &x
	}
	for _, id := range r.Themes {
		if p, ok := m.v.Themes[id]; ok {
			out.Themes[id] = p
		}
	}
	for _, id := range r.Zones {
		if p, ok := m.v.Zones[id]; ok {
			out.Zones[id] = p
		}
	}
	for _, id := range r.Markets {
		if p, ok := m.v.Markets[id]; ok {
			out.Markets[id] = p
		}
	}
	return out, nil
}

var testCatalog = memCatalog{CatalogView{
	Products: map[string]Product{"gid://shopify/Product/1": {ID: "gid://shopify/Product/1", Title: "Tee"}},
	Variants: map[string]Variant{
		"gid://shopify/ProductVariant/11": {ID: "gid://shopify/ProductVariant/11", ProductID: "gid://shopify/Product/1", Price: "20.00", Cost: "8.00"},
		"gid://shopify/ProductVariant/99": {ID: "gid://shopify/ProductVariant/99", ProductID: "gid://shopify/Product/9", Price: "5.00"},
	},
	Themes: map[string]Theme{"gid://shopify/Theme/1": {ID: "gid://shopify/Theme/1", Name: "Dawn", Templates: []string{"product", "product.alt"}},
		"gid://shopify/Theme/3": {ID: "gid://shopify/Theme/3", Name: "Live", Role: "main", Templates: []string{"product", "product.alt"}}},
	Zones: map[string]Zone{"gid://shopify/DeliveryZone/1": {ID: "gid://shopify/DeliveryZone/1", Name: "Domestic", Rates: []ZoneRate{{ID: "gid://shopify/DeliveryMethodDefinition/1", Name: "Standard", Price: "5.00"}}},
		"gid://shopify/DeliveryZone/3": {ID: "gid://shopify/DeliveryZone/3", Name: "Served", LiftRates: true, Rates: []ZoneRate{{ID: "gid://shopify/DeliveryMethodDefinition/3", Name: "Standard", Price: "5.00"}}}},
	Markets: map[string]Market{"gid://shopify/Market/2": {ID: "gid://shopify/Market/2", Name: "EU", Currency: "EUR", Countries: []string{"DE", "FR"}}},
}}

var testShop = &Shop{ID: 1, Currency: "USD", SubscriptionActive: true, Features: []string{"price", "offer", "multi_market"}}

func validate(t *testing.T, body string) ([]Finding, error) {
	t.Helper()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tt, err := ParseCreate([]byte(body), 1, now)
	if err != nil {
		return nil, err
	}
	return Validate(context.Background(), testShop, tt, testCatalog, ValidateFull, now)
}

const priceShared = `"shared":{"price":{"product_ids":["gid://shopify/Product/1"]}}`

func priceBody(variant string) string {
	return `{"type":"price","name":"P",` + priceShared + `,"test_groups":[{"index":0,"name":"Control","split":50},
	{"index":1,"name":"B","split":50,"content":{"prices":[` + variant + `]}}]}`
}

func TestValidateCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, code, param string
	}{
		{"InvalidType", `{"type":"banana","name":"x"}`, "invalid_type", "type"},
		{"NotImplemented", `{"type":"checkout","name":"x"}`, "not_implemented", "type"},
		{"SplitSum", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":40,"content":{"destination":"/b"}}]}`, "split_sum_invalid", "test_groups"},
		{"DuplicateName", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"a","split":50,"content":{"destination":"/b"}}]}`, "duplicate_group_name", "test_groups[1].name"},
		{"DestinationRequired", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50}]}`, "destination_required", "test_groups[1].content.destination"},
		// A create is a draft; a status it will not honour is refused (v1 audit 2, V6).
		{"StatusOnCreate", `{"type":"url_redirect","name":"x","status":"active","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"destination":"/b"}}]}`, "invalid_request", "status"},
		// Paths a browser reads as another host (v1 audit 2, V7).
		{"DestinationOtherHost", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"destination":"//evil.example/x"}}]}`, "invalid_request", "test_groups[1].content.destination"},
		{"DestinationBackslash", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"destination":"/\\evil.example"}}]}`, "invalid_request", "test_groups[1].content.destination"},
		{"DestinationTab", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"destination":"/\t/evil.example"}}]}`, "invalid_request", "test_groups[1].content.destination"},
		{"DestinationIsTheSource", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/sale"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"destination":"/sale?x=1"}}]}`, "change_required", "test_groups[1].content.destination"},
		{"MatchType", `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/","match_type":"regex"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"destination":"/b"}}]}`, "match_type_unsupported", "shared.url_redirect.match_type"},
		{"VariantNotFound", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/5","price":{"amount":"1.00","currency":"USD"}}`), "product_not_found", "test_groups[1].content.prices[0].product_variant_id"},
		{"VariantOfOtherProduct", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/99","price":{"amount":"1.00","currency":"USD"}}`), "product_not_found", "test_groups[1].content.prices[0].product_variant_id"},
		// The catalog price again shows what the control shows (v1 audit 2, V5).
		{"CatalogPrice", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"20.0","currency":"USD"}}`), "change_required", "test_groups[1].content.prices"},
		{"CurrencyMismatch", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"19.00","currency":"EUR"}}`), "currency_mismatch", "test_groups[1].content.prices[0].price.currency"},
		{"FractionOfACent", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"24.001","currency":"USD"}}`), "invalid_request", "test_groups[1].content.prices[0].price.amount"},
		{"OverStorage", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"99999999999999999999999999999999.99","currency":"USD"}}`), "invalid_request", "test_groups[1].content.prices[0].price.amount"},
		{"DuplicateChange", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"19.00","currency":"USD"}},{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"18.00","currency":"USD"}}`), "duplicate_change", "test_groups[1].content.prices[1].product_variant_id"},
		{"MarketIncomplete", priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"19.00","currency":"USD"},"country_prices":[{"country":"DE","price":{"amount":"18.00","currency":"EUR"}}]}`), "market_pricing_incomplete", "test_groups[1].content.prices[0].country_prices[0].country"},
		{"ChangeRequired", priceBody(``), "change_required", "test_groups[1].content.prices"},
		{"UnknownField", `{"type":"theme","name":"x","bogus":1}`, "invalid_request", "bogus"},
		{"WrongKind", `{"type":"theme","name":7}`, "invalid_request", "name"},
		{"ThemeNotFound", `{"type":"theme","name":"x","test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"theme_id":"gid://shopify/Theme/7"}}]}`, "theme_not_found", "test_groups[1].content.theme_id"},
		{"ControlInvalid", `{"type":"theme","name":"x","test_groups":[{"index":0,"name":"A","split":50,"content":{"theme_id":"gid://shopify/Theme/1"}},{"index":1,"name":"B","split":50,"content":{"theme_id":"gid://shopify/Theme/1"}}]}`, "control_group_invalid", "test_groups[0].content"},
		{"ThemeIsThePublishedOne", `{"type":"theme","name":"x","test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"theme_id":"gid://shopify/Theme/3"}}]}`, "change_required", "test_groups[1].content.theme_id"},
		{"TemplateRequired", `{"type":"template","name":"x","shared":{"template":{"theme_id":"gid://shopify/Theme/3"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50}]}`, "template_required", "test_groups[1].content.template"},
		{"TemplateNotFound", `{"type":"template","name":"x","shared":{"template":{"theme_id":"gid://shopify/Theme/3"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"template":"product.nope"}}]}`, "template_not_found", "test_groups[1].content.template"},
		// The templates switch on the live store (session audit 2, F7
		// re-check): another theme's never show, nor does a group on the
		// page type's own template, which the control already sees.
		{"TemplateThemeNotPublished", `{"type":"template","name":"x","shared":{"template":{"theme_id":"gid://shopify/Theme/1"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"template":"product.alt"}}]}`, "theme_not_published", "shared.template.theme_id"},
		{"TemplateIsTheDefault", `{"type":"template","name":"x","shared":{"template":{"theme_id":"gid://shopify/Theme/3"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"template":"product"}}]}`, "change_required", "test_groups[1].content.template"},
		{"ZoneNotDeclared", `{"type":"shipping","name":"x","shared":{"shipping":{"zone_ids":["gid://shopify/DeliveryZone/1"]}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"rates":[{"zone_id":"gid://shopify/DeliveryZone/2","name":"S","price":{"amount":"1.00","currency":"USD"}}]}}]}`, "zone_not_declared", "test_groups[1].content.rates[0].zone_id"},
		{"ControlRates", `{"type":"shipping","name":"x","shared":{"shipping":{"zone_ids":["gid://shopify/DeliveryZone/1"]}},"test_groups":[{"index":0,"name":"A","split":50,"content":{"rates":[{"zone_id":"gid://shopify/DeliveryZone/1","name":"S","price":{"amount":"1.00","currency":"USD"}}]}},{"index":1,"name":"B","split":50,"content":{"rates":[{"zone_id":"gid://shopify/DeliveryZone/1","name":"S","price":{"amount":"1.00","currency":"USD"}}]}}]}`, "control_offers_rates", "test_groups[0].content.rates"},
		{"OfferCombination", `{"type":"offer","name":"x","test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"offers":[{"key":"k","title":"T","discount":{"type":"free_shipping"},"combines_with":["shipping"]}]}}]}`, "discount_combination_invalid", "test_groups[1].content.offers[0].combines_with[0]"},
		{"OfferRange", `{"type":"offer","name":"x","test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"offers":[{"key":"k","title":"T","discount":{"type":"percentage","value":"10"},"conditions":{"min_quantity":5,"max_quantity":2}}]}}]}`, "condition_range_invalid", "test_groups[1].content.offers[0].conditions.max_quantity"},
		{"OfferFixedFractionOfACent", `{"type":"offer","name":"x","test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"offers":[{"key":"k","title":"T","discount":{"type":"fixed_amount","value":"5.001"}}]}}]}`, "invalid_request", "test_groups[1].content.offers[0].discount.value"},
		{"OfferProductTwice", `{"type":"offer","name":"x","test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"offers":[{"key":"k","title":"T","discount":{"type":"percentage","value":"10"},"conditions":{"product_ids":["gid://shopify/Product/1","gid://shopify/Product/1"]}}]}}]}`, "invalid_request", "test_groups[1].content.offers[0].conditions.product_ids[1]"},
		{"CombinedOfferShared", `{"type":"combined","name":"x","shared":{"theme":{},"offer":{"bogus":1}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"theme":{"theme_id":"gid://shopify/Theme/2"}}}]}`, "invalid_request", "shared.offer"},
		{"AudienceCountriesNumber", redirectWithAudience(`{"countries":5}`), "invalid_request", "audience.countries"},
		{"AudienceCountriesString", redirectWithAudience(`{"countries":"US"}`), "invalid_request", "audience.countries"},
		{"AudienceCountryLowerCase", redirectWithAudience(`{"countries":["US","ca"]}`), "invalid_request", "audience.countries"},
		{"AudienceDevice", redirectWithAudience(`{"devices":["mobile","watch"]}`), "invalid_request", "audience.devices"},
		{"AudienceDevicesString", redirectWithAudience(`{"devices":"mobile"}`), "invalid_request", "audience.devices"},
		{"AudienceVisitorType", redirectWithAudience(`{"visitor_type":"customer"}`), "invalid_request", "audience.visitor_type"},
		{"CombinedNeedsChange", `{"type":"combined","name":"x","shared":{"theme":{},"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{}}]}`, "change_required", "test_groups[1].content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := validate(t, tc.body)
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("want error %s, got %v", tc.code, err)
			}
			if e.Code != tc.code || e.Param != tc.param {
				t.Fatalf("got %s at %q, want %s at %q (%v)", e.Code, e.Param, tc.code, tc.param, e.Findings)
			}
		})
	}
}

func redirectWithAudience(audience string) string {
	return `{"type":"url_redirect","name":"x","audience":` + audience + `,"shared":{"url_redirect":{"source_path":"/"}},
	"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"destination":"/b"}}]}`
}

// The keys the tracker applies pass in every shape it reads; others are
// kept as written.
func TestValidateAudienceAccepted(t *testing.T) {
	t.Parallel()
	for _, a := range []string{`null`, `{}`, `{"countries":[],"devices":[]}`, `{"countries":null,"visitor_type":null}`,
		`{"countries":["US","CA"],"devices":["desktop","mobile","tablet"],"visitor_type":"returning"}`,
		`{"visitor_type":"new","utm_source":"newsletter"}`} {
		if _, err := validate(t, redirectWithAudience(a)); err != nil {
			t.Errorf("audience %s: %v", a, err)
		}
	}
}

// TestAudienceKeysNobodyApplies: a key the storefront does not apply is
// kept with a warning naming it ("country" for "countries" targeted
// everyone without a word), and the object has a size bound, since every
// visitor downloads it (v1 audit 2, V1).
func TestAudienceKeysNobodyApplies(t *testing.T) {
	t.Parallel()
	warn, err := validate(t, redirectWithAudience(`{"country":["US"],"devices":["mobile"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(warn) != 1 || warn[0].Code != "audience_key_ignored" || warn[0].Param != "audience.country" {
		t.Fatalf("warnings = %+v", warn)
	}
	var big []string
	for i := range MaxAudienceBytes/1000 + 1 {
		big = append(big, fmt.Sprintf(`"note%d":"%s"`, i, strings.Repeat("x", 1000)))
	}
	_, err = validate(t, redirectWithAudience(`{`+strings.Join(big, ",")+`}`))
	if e, _ := AsError(err); e == nil || e.Code != "invalid_request" || e.Param != "audience" {
		t.Fatalf("an audience over %d bytes: %v", MaxAudienceBytes, err)
	}
}

func TestValidateWarningsAndLimit(t *testing.T) {
	t.Parallel()
	warn, err := validate(t, priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"7.00","currency":"USD"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(warn) != 1 || warn[0].Code != "price_below_cost" || warn[0].Severity != SeverityWarning {
		t.Fatalf("warnings = %+v", warn)
	}
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = `"gid://shopify/Product/1"`
	}
	body := `{"type":"price","name":"P","shared":{"price":{"product_ids":[` + strings.Join(ids, ",") + `]}},"test_groups":[]}`
	_, err = validate(t, body)
	e, _ := AsError(err)
	if e == nil || e.Code != "product_limit_exceeded" || !strings.Contains(e.Message, "100") || !strings.Contains(e.Message, "101") {
		t.Fatalf("got %v", err)
	}
}

// TestValidateZoneWithoutLiftRates: a shipping test over a zone that does
// not offer Lift rates is accepted with a warning naming the zone (the
// platform would never ask Lift for its rates); over one that does, none.
func TestValidateZoneWithoutLiftRates(t *testing.T) {
	t.Parallel()
	body := func(zone string) string {
		return `{"type":"shipping","name":"x","shared":{"shipping":{"zone_ids":["` + zone + `"]}},"test_groups":[{"index":0,"name":"A","split":50},
		{"index":1,"name":"B","split":50,"content":{"rates":[{"zone_id":"` + zone + `","name":"Standard","price":{"amount":"3.00","currency":"USD"}}]}}]}`
	}
	warn, err := validate(t, body("gid://shopify/DeliveryZone/1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(warn) != 1 || warn[0].Code != "zone_without_lift_rates" || warn[0].Severity != SeverityWarning ||
		warn[0].Param != "shared.shipping.zone_ids[0]" || !strings.Contains(warn[0].Message, "Domestic") {
		t.Fatalf("warnings = %+v", warn)
	}
	if warn, err = validate(t, body("gid://shopify/DeliveryZone/3")); err != nil || len(warn) != 0 {
		t.Fatalf("a zone offering Lift rates: %+v, %v", warn, err)
	}
}

func draftWithPrice(t *testing.T) *Test {
	t.Helper()
	tt, err := ParseCreate([]byte(priceBody(`{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"19.00","currency":"USD"}}`)), 1, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// TestDuplicateNameNamesIndexes: groups are named by index, their
// identity, not by their position in the array.
func TestDuplicateNameNamesIndexes(t *testing.T) {
	t.Parallel()
	_, err := validate(t, `{"type":"url_redirect","name":"x","shared":{"url_redirect":{"source_path":"/"}},"test_groups":[{"index":0,"name":"A","split":50},{"index":5,"name":"a","split":50,"content":{"destination":"/b"}}]}`)
	if e, _ := AsError(err); e == nil || e.Code != "duplicate_group_name" || !strings.Contains(e.Message, "index 0 and 5") {
		t.Fatalf("got %v", err)
	}
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	now := time.Unix(100, 0).UTC()
	t.Run("MergeByIndexAndVariant", func(t *testing.T) {
		t.Parallel()
		cur := draftWithPrice(t)
		next, res, err := ApplyPatch(cur, []byte(`{"test_groups":[{"index":1,"split":60,"content":{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/12","price":{"amount":"1.00","currency":"USD"}}]}},{"index":0,"split":40}]}`), now)
		if err != nil {
			t.Fatal(err)
		}
		var c PriceContent
		if err := json.Unmarshal(next.Groups[1].Content, &c); err != nil {
			t.Fatalf("merged content %s: %v", next.Groups[1].Content, err)
		}
		if len(c.Prices) != 2 || next.Groups[1].Split != 60 || next.Groups[1].Name != "B" {
			t.Fatalf("merged = %+v %s", next.Groups, next.Groups[1].Content)
		}
		if !res.Reassigned || next.AssignmentVersion != cur.AssignmentVersion+1 {
			t.Fatalf("assignment_version not bumped: %+v", res)
		}
	})
	t.Run("Remove", func(t *testing.T) {
		t.Parallel()
		cur := draftWithPrice(t)
		next, _, err := ApplyPatch(cur, []byte(`{"test_groups":[{"index":1,"content":{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/11","remove":true}]}}]}`), now)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(`{"prices":[]}`, string(next.Groups[1].Content)); diff != "" {
			t.Fatal(diff)
		}
	})
	t.Run("LockedField", func(t *testing.T) {
		t.Parallel()
		cur := draftWithPrice(t)
		cur.Status = StatusActive
		_, _, err := ApplyPatch(cur, []byte(`{"name":"ok","test_groups":[{"index":1,"name":"B2","content":{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/11","price":{"amount":"9.00","currency":"USD"}}]}}]}`), now)
		e, _ := AsError(err)
		if e == nil || e.Code != "locked_field" || e.Param != "test_groups[1].content.prices[0].price.amount" {
			t.Fatalf("got %v", err)
		}
		next, _, err := ApplyPatch(cur, []byte(`{"name":"ok","schedule":{"end_at":"2030-01-01T00:00:00Z"},"test_groups":[{"index":1,"name":"B2"}]}`), now)
		if err != nil || next.Name != "ok" || next.Groups[1].Name != "B2" {
			t.Fatalf("open fields refused: %v", err)
		}
	})
	t.Run("ReadOnlyAsReadOrRefused", func(t *testing.T) {
		t.Parallel()
		cur := draftWithPrice(t)
		cur.ID, cur.Status = 7, StatusActive
		if _, _, err := ApplyPatch(cur, []byte(`{"id":"7","status":"active","object":"experiment","name":"ok"}`), now); err != nil {
			t.Fatalf("fields sent back as read: %v", err)
		}
		// A GET with include=results_summary, sent back: its test_groups are
		// the summary's, not groups to patch (v1 audit 2, V2).
		asRead := `{"name":"ok","warnings":[{"severity":"warning","code":"price_below_cost"}],
			"results_summary":{"computed_at":"2026-06-01T00:00:00Z","test_groups":[{"test_group_index":0,"sample_size":10}]}}`
		if next, _, err := ApplyPatch(cur, []byte(asRead), now); err != nil || len(next.Groups) != len(cur.Groups) {
			t.Fatalf("a GET body sent back: %v", err)
		}
		for body, param := range map[string]string{`{"status":"ended"}`: "status", `{"id":"8"}`: "id", `{"status":7}`: "status"} {
			_, _, err := ApplyPatch(cur, []byte(body), now)
			if e, _ := AsError(err); e == nil || e.Code != "invalid_request" || e.Param != param {
				t.Errorf("%s: got %v, want invalid_request at %s", body, err, param)
			}
		}
	})
	t.Run("EditorOwned", func(t *testing.T) {
		t.Parallel()
		cur := &Test{Type: TypeVisualEditor, Name: "v", TrafficAllocation: 100, Groups: []Group{
			{Index: 0, Name: "A", Split: 50, Content: json.RawMessage(`{}`)},
			{Index: 1, Name: "B", Split: 50, Content: json.RawMessage(`{"dom_changes":[{"selector":"h1","action":"set","attribute":"html","value":"Hi"}]}`)}}}
		_, _, err := ApplyPatch(cur, []byte(`{"test_groups":[{"index":1,"content":{"custom_css":"h1{}"}}]}`), now)
		e, _ := AsError(err)
		if e == nil || e.Code != "editor_owned_content" || e.Param != "test_groups[1].content.custom_css" {
			t.Fatalf("got %v", err)
		}
		if _, _, err := ApplyPatch(cur, []byte(`{"test_groups":[{"index":1,"name":"Renamed"}]}`), now); err != nil {
			t.Fatalf("rename refused: %v", err)
		}
	})
	t.Run("RuleKeyNotFound", func(t *testing.T) {
		t.Parallel()
		cur := &Test{Type: TypeOffer, Name: "o", TrafficAllocation: 100, Groups: []Group{
			{Index: 0, Name: "A", Split: 50, Content: json.RawMessage(`{}`)},
			{Index: 1, Name: "B", Split: 50, Content: json.RawMessage(`{"offers":[{"key":"a","title":"A","discount":{"type":"free_shipping"}}]}`)}}}
		_, _, err := ApplyPatch(cur, []byte(`{"test_groups":[{"index":1,"content":{"offers":[{"key":"zz","remove":true}]}}]}`), now)
		e, _ := AsError(err)
		if e == nil || e.Code != "rule_key_not_found" || e.Param != "test_groups[0].content.offers[0].key" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("OneEntryPerKey", func(t *testing.T) {
		// The last of two entries for one key stood silently (v1 audit 2, V10).
		t.Parallel()
		cur := &Test{Type: TypeOffer, Name: "o", TrafficAllocation: 100, Groups: []Group{
			{Index: 0, Name: "A", Split: 50, Content: json.RawMessage(`{}`)},
			{Index: 1, Name: "B", Split: 50, Content: json.RawMessage(`{"offers":[{"key":"a","title":"A","discount":{"type":"free_shipping"}}]}`)}}}
		for body, param := range map[string]string{
			`{"test_groups":[{"index":1,"name":"X"},{"index":1,"name":"Y"}]}`:                          "test_groups[1].index",
			`{"test_groups":[{"index":1,"content":{"offers":[{"key":"a","title":"X"},{"key":"a"}]}}]}`: "test_groups[0].content.offers[1].key",
		} {
			_, _, err := ApplyPatch(cur, []byte(body), now)
			if e, _ := AsError(err); e == nil || e.Code != "invalid_request" || e.Param != param {
				t.Errorf("%s: got %v, want 422 naming %s", body, err, param)
			}
		}
	})
	t.Run("RemoveIsABoolean", func(t *testing.T) {
		t.Parallel()
		cur := &Test{Type: TypeOffer, Name: "o", TrafficAllocation: 100, Groups: []Group{
			{Index: 0, Name: "A", Split: 50, Content: json.RawMessage(`{}`)},
			{Index: 1, Name: "B", Split: 50, Content: json.RawMessage(`{}`)}}}
		for _, v := range []string{`"yes"`, `1`, `null`} {
			_, _, err := ApplyPatch(cur, []byte(`{"test_groups":[{"index":1,"remove":`+v+`}]}`), now)
			if e, _ := AsError(err); e == nil || e.Code != "invalid_request" || e.Param != "test_groups[0].remove" {
				t.Errorf("remove %s: got %v, want 422 naming test_groups[0].remove", v, err)
			}
		}
	})
}

func TestPlanAction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from      Status
		action    Action
		want      Status
		unchanged bool
		code      string
	}{
		{StatusDraft, ActionStart, StatusActive, false, ""},
		{StatusFailed, ActionStart, StatusActive, false, ""},
		{StatusActive, ActionStart, StatusActive, true, ""},
		{StatusActive, ActionPause, StatusPaused, false, ""},
		{StatusPaused, ActionResume, StatusActive, false, ""},
		{StatusPaused, ActionEnd, StatusEnded, false, ""},
		{StatusEnded, ActionEnd, StatusEnded, true, ""},
		{StatusEnded, ActionArchive, StatusArchived, false, ""},
		{StatusDraft, ActionPreview, StatusPreview, false, ""},
		{StatusPreview, ActionPreview, StatusPreview, false, ""},
		{StatusDraft, ActionPause, "", false, "invalid_status_transition"},
		{StatusActive, ActionArchive, "", false, "invalid_status_transition"},
		{StatusArchived, ActionStart, "", false, "invalid_status_transition"},
	} {
		t.Run(string(tc.from)+"_"+string(tc.action), func(t *testing.T) {
			t.Parallel()
			tt := &Test{Status: tc.from}
			p, err := PlanAction(tt, tc.action)
			if tc.code != "" {
				e, _ := AsError(err)
				if e == nil || e.Code != tc.code || e.Details["current_status"] != string(tc.from) {
					t.Fatalf("got %v", err)
				}
				return
			}
			if err != nil || p.Target != tc.want || p.Unchanged != tc.unchanged {
				t.Fatalf("plan = %+v, %v", p, err)
			}
		})
	}
	if diff := cmp.Diff([]Action{ActionPause, ActionEnd}, AllowedActions(StatusActive)); diff != "" {
		t.Fatal(diff)
	}
	_, err := PlanAction(&Test{Status: StatusDraft, ChecksPending: true}, ActionStart)
	if e, _ := AsError(err); e == nil || e.Code != "checks_pending" {
		t.Fatalf("got %v", err)
	}
	if _, err := PlanAction(&Test{Status: StatusDraft, ChecksPending: true}, ActionArchive); err != nil {
		t.Fatalf("archive during checks: %v", err)
	}
}

func TestEntitlements(t *testing.T) {
	t.Parallel()
	price := &Test{Type: TypePrice, Shared: map[string]json.RawMessage{"price": json.RawMessage(`{"markets":[{"id":"m"}]}`)}}
	ship := &Test{Type: TypeShipping}
	for _, tc := range []struct {
		name  string
		shop  Shop
		t     *Test
		step  Step
		code  string
		param string
	}{
		{"Inactive", Shop{}, ship, StepCreate, "subscription_inactive", ""},
		{"Cap", Shop{SubscriptionActive: true, BillingCapReached: true}, ship, StepResume, "billing_cap_reached", ""},
		{"CapNotOnUpdate", Shop{SubscriptionActive: true, BillingCapReached: true, CarrierService: true}, ship, StepUpdate, "", ""},
		{"Feature", Shop{SubscriptionActive: true, Features: []string{"price"}}, price, StepCreate, "feature_not_in_plan", "multi_market"},
		{"Carrier", Shop{SubscriptionActive: true}, ship, StepStart, "carrier_service_required", ""},
		{"CarrierAnnual", Shop{SubscriptionActive: true, AnnualBilling: true}, ship, StepStart, "", ""},
		{"Allowance", Shop{SubscriptionActive: true, AnnualBilling: true, AllowanceExhausted: true}, ship, StepStart, "billing_cap_reached", ""},
		{"AllowanceNotOnCreate", Shop{SubscriptionActive: true, AnnualBilling: true, AllowanceExhausted: true}, ship, StepCreate, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckEntitlements(&tc.shop, tc.t, tc.step)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, _ := AsError(err)
			if e == nil || e.Code != tc.code || e.Param != tc.param || e.Kind != KindForbidden {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// TestRefusedPriceIsNotAlsoUnchanged: a group whose only entry is refused
// (an unknown variant, one of another product, a non-global id) gets that
// finding alone, not also "every price is the catalog price", which would
// be false: nothing was said of its price.
func TestRefusedPriceIsNotAlsoUnchanged(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ variant, code string }{
		"unknown":       {"gid://shopify/ProductVariant/404", "product_not_found"},
		"other product": {"gid://shopify/ProductVariant/99", "product_not_found"},
		"not a gid":     {"44001", "invalid_request"},
	} {
		_, err := validate(t, priceBody(`{"product_variant_id":"`+tc.variant+`","price":{"amount":"9.00","currency":"USD"}}`))
		e, ok := AsError(err)
		if !ok || e.Code != tc.code {
			t.Fatalf("%s: %v, want %s", name, err, tc.code)
		}
		for _, f := range e.Findings {
			if f.Code == "change_required" {
				t.Errorf("%s: findings %v also say the group changes nothing", name, e.Findings)
			}
		}
	}
}
