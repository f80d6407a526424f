package experiment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// floorCatalog prices one product's variants differently, so a rule that
// reads the first variant instead of the cheapest is caught, and has a
// zone whose rates a shipping group may copy.
var floorCatalog = memCatalog{CatalogView{
	Products: map[string]Product{
		"gid://shopify/Product/1": {ID: "gid://shopify/Product/1", Title: "Tee"},
		"gid://shopify/Product/2": {ID: "gid://shopify/Product/2", Title: "Sweater"},
	},
	Variants: map[string]Variant{
		"gid://shopify/ProductVariant/11": {ID: "gid://shopify/ProductVariant/11", ProductID: "gid://shopify/Product/1", Title: "L", Price: "25.00"},
		"gid://shopify/ProductVariant/12": {ID: "gid://shopify/ProductVariant/12", ProductID: "gid://shopify/Product/1", Title: "S", Price: "18.00"},
		"gid://shopify/ProductVariant/21": {ID: "gid://shopify/ProductVariant/21", ProductID: "gid://shopify/Product/2", Title: "M", Price: "98.00"},
	},
	// Tops' cheapest item is the tee's S, listed second; Sweaters has one
	// product; Gone lists only a product the catalog no longer has.
	Collections: map[string]Collection{
		"gid://shopify/Collection/3": {ID: "gid://shopify/Collection/3", Title: "Tops",
			ProductIDs: []string{"gid://shopify/Product/2", "gid://shopify/Product/1"}},
		"gid://shopify/Collection/4": {ID: "gid://shopify/Collection/4", Title: "Sweaters", ProductIDs: []string{"gid://shopify/Product/2"}},
		"gid://shopify/Collection/5": {ID: "gid://shopify/Collection/5", Title: "Gone", ProductIDs: []string{"gid://shopify/Product/7"}},
	},
	Zones: map[string]Zone{"gid://shopify/DeliveryZone/1": {ID: "gid://shopify/DeliveryZone/1", Name: "Domestic", Rates: []ZoneRate{
		{ID: "gid://shopify/DeliveryMethodDefinition/1", Name: "Standard", Price: "5.00"},
		{ID: "gid://shopify/DeliveryMethodDefinition/2", Name: "Express", Price: "12.00"}}}},
}}

func validateWith(t *testing.T, cat Catalog, body string) ([]Finding, error) {
	t.Helper()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tt, err := ParseCreate([]byte(body), 1, now)
	if err != nil {
		return nil, err
	}
	return Validate(context.Background(), testShop, tt, cat, ValidateFull, now)
}

// offerBody is an offer test whose group "Half off" takes discount off
// conditions (JSON, or "" for none).
func offerBody(discount, conditions string) string {
	o := `{"key":"price-change","title":"T","discount":` + discount
	if conditions != "" {
		o += `,"conditions":` + conditions
	}
	return `{"type":"offer","name":"o","test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Half off","split":50,"content":{"offers":[` + o + `}]}}]}`
}

// floorCase is a body refused with code at param whose first finding's
// message holds every want, or accepted when code is "".
type floorCase struct {
	name, body, code, param string
	want                    []string
}

func runFloorCases(t *testing.T, cases []floorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := validateWith(t, floorCatalog, tc.body)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Kind != KindValidation || e.Code != tc.code || e.Param != tc.param {
				t.Fatalf("error = %v, want 422 %s at %s", err, tc.code, tc.param)
			}
			for _, w := range tc.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q does not say %q", e.Message, w)
				}
			}
			if n := errorFindings(e.Findings); n != 1 {
				t.Errorf("%d blocking findings, want this one alone: %+v", n, e.Findings)
			}
		})
	}
}

func errorFindings(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.Severity == SeverityError {
			n++
		}
	}
	return n
}

// TestDiscountKeepsPriceAboveZero: a discount may not make a product free
// (session audit 2, F6): not 100 percent, not a fixed amount of the
// cheapest variant's price or more.
func TestDiscountKeepsPriceAboveZero(t *testing.T) {
	t.Parallel()
	const value = "test_groups[1].content.offers[0].discount.value"
	pct := func(v string) string { return fmt.Sprintf(`{"type":"percentage","value":%q}`, v) }
	fixed := func(v string) string { return fmt.Sprintf(`{"type":"fixed_amount","value":%q}`, v) }
	tee := `{"product_ids":["gid://shopify/Product/1"]}`
	both := `{"product_ids":["gid://shopify/Product/2","gid://shopify/Product/1"]}`
	runFloorCases(t, []floorCase{
		{"Fixed500OffASweaterOf98", offerBody(fixed("500"), `{"product_ids":["gid://shopify/Product/2"]}`), "invalid_request", value,
			[]string{`"Half off"`, "Sweater (gid://shopify/Product/2)", "costs 98.00", "-402.00", "above zero"}},
		// The cheapest variant decides, not the first or the dearest.
		{"FixedOfTheCheapestVariant", offerBody(fixed("18"), tee), "invalid_request", value,
			[]string{`"Half off"`, "Tee", "cheapest variant (S) costs 18.00", "0.00"}},
		{"FixedAboveOneOfTwoProducts", offerBody(fixed("20.00"), both), "invalid_request", value,
			[]string{"product Tee (gid://shopify/Product/1)", "18.00"}},
		{"FixedJustBelowTheCheapest", offerBody(fixed("17.99"), tee), "", "", nil},
		{"Percent100", offerBody(pct("100"), tee), "invalid_request", value,
			[]string{`"Half off"`, "100%", "product Tee (gid://shopify/Product/1)", "above zero"}},
		{"Percent100WrittenWithDecimals", offerBody(pct("100.00"), both), "invalid_request", value,
			[]string{"products Sweater (gid://shopify/Product/2), Tee (gid://shopify/Product/1)"}},
		{"Percent100OnTheWholeCart", offerBody(pct("100"), ""), "invalid_request", value, []string{"every item it applies to"}},
		{"Percent99_99", offerBody(pct("99.99"), tee), "", "", nil},
		{"PercentOver100", offerBody(pct("101"), tee), "invalid_request", value, []string{"below 100", `"101"`}},
		// An unknown product is refused as such, not also as free.
		{"FixedOnAnUnknownProduct", offerBody(fixed("500"), `{"product_ids":["gid://shopify/Product/7"]}`), "product_not_found",
			"test_groups[1].content.offers[0].conditions.product_ids[0]", nil},
	})
}

// TestDiscountKeepsCollectionAboveZero: a fixed amount comes off each item
// of a collection too, so it stays below the collection's cheapest item
// (40.00 off a collection holding a 25.00 product made it free).
func TestDiscountKeepsCollectionAboveZero(t *testing.T) {
	t.Parallel()
	const value = "test_groups[1].content.offers[0].discount.value"
	fixed := func(v string) string { return fmt.Sprintf(`{"type":"fixed_amount","value":%q}`, v) }
	on := func(ids ...string) string {
		return `{"collection_ids":["gid://shopify/Collection/` + strings.Join(ids, `","gid://shopify/Collection/`) + `"]}`
	}
	runFloorCases(t, []floorCase{
		{"Fixed500OffTops", offerBody(fixed("500"), on("3")), "invalid_request", value,
			[]string{`Test group "Half off" takes 500 off collection Tops (gid://shopify/Collection/3)`,
				"cheapest variant (S) of product Tee (gid://shopify/Product/1) costs 18.00", "-482.00", "above zero", "take less than 18.00 off"}},
		// The cheapest item decides, not the first product listed.
		{"FixedOfTheCheapestItem", offerBody(fixed("18.00"), on("3")), "invalid_request", value,
			[]string{"collection Tops", "costs 18.00", "would cost 0.00"}},
		{"FixedJustBelowTheCheapestItem", offerBody(fixed("17.99"), on("3")), "", "", nil},
		{"FixedBelowOneCollectionOverAnother", offerBody(fixed("20"), on("4", "3")), "invalid_request", value,
			[]string{"collection Tops (gid://shopify/Collection/3)", "costs 18.00", "would cost -2.00"}},
		{"FixedBelowTheProductOverTheCollection", offerBody(fixed("20"),
			`{"product_ids":["gid://shopify/Product/2"],"collection_ids":["gid://shopify/Collection/3"]}`), "invalid_request", value,
			[]string{"collection Tops", "variant (S) of product Tee"}},
		{"FixedBelowASweaterCollection", offerBody(fixed("97.99"), on("4")), "", "", nil},
		// An unknown collection is refused as such, not also as free.
		{"FixedOnAnUnknownCollection", offerBody(fixed("500"), on("9")), "collection_not_found",
			"test_groups[1].content.offers[0].conditions.collection_ids[0]", nil},
		// A collection none of whose products the catalog prices has
		// nothing to compare with.
		{"FixedOnACollectionOfGoneProducts", offerBody(fixed("500"), on("5")), "", "", nil},
		{"Percent100OnACollection", offerBody(`{"type":"percentage","value":"100"}`, on("3")), "invalid_request", value,
			[]string{"every item it applies to"}},
	})
}

// TestVariantPriceAboveZero: a price test cannot price a variant at zero,
// in the shop's currency or a market's.
func TestVariantPriceAboveZero(t *testing.T) {
	t.Parallel()
	body := func(variant string) string {
		return `{"type":"price","name":"P","shared":{"price":{"product_ids":["gid://shopify/Product/1"]}},"test_groups":[{"index":0,"name":"Control","split":50},
	{"index":1,"name":"Free","split":50,"content":{"prices":[` + variant + `]}}]}`
	}
	runFloorCases(t, []floorCase{
		{"Zero", body(`{"product_variant_id":"gid://shopify/ProductVariant/12","price":{"amount":"0.00","currency":"USD"}}`),
			"invalid_request", "test_groups[1].content.prices[0].price.amount", []string{`"Free"`, "gid://shopify/ProductVariant/12", "above zero"}},
		{"OneCent", body(`{"product_variant_id":"gid://shopify/ProductVariant/12","price":{"amount":"0.01","currency":"USD"}}`), "", "", nil},
	})
}

// TestShippingGroupMustChangeARate: a group whose every rate is one its
// zone already has, at the same name and price, shows buyers what the
// control does (session audit 2, F7 re-check and S2-6).
func TestShippingGroupMustChangeARate(t *testing.T) {
	t.Parallel()
	body := func(rates string) string {
		return `{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":["gid://shopify/DeliveryZone/1"]}},"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Same","split":50,"content":{"rates":[` + rates + `]}}]}`
	}
	rate := func(id, name, amount string) string {
		r := `{"zone_id":"gid://shopify/DeliveryZone/1","name":` + fmt.Sprintf("%q", name) + `,"price":{"amount":"` + amount + `","currency":"USD"}`
		if id != "" {
			r += `,"rate_id":"gid://shopify/DeliveryMethodDefinition/` + id + `"`
		}
		return r + "}"
	}
	const rates = "test_groups[1].content.rates"
	unchanged := []string{`"Same"`, "same name and price", "what the control shows"}
	runFloorCases(t, []floorCase{
		{"RateAtItsOwnNameAndPrice", body(rate("1", "Standard", "5")), "change_required", rates, unchanged},
		{"EveryRateUnchanged", body(rate("1", "Standard", "5.00") + "," + rate("2", "Express", "12.0")), "change_required", rates, unchanged},
		// Added without rate_id, a copy of a rate the zone has is no change.
		{"AddedCopyOfARate", body(rate("", "Express", "12.00")), "change_required", rates, unchanged},
		{"NewPrice", body(rate("1", "Standard", "4.00")), "", "", nil},
		{"NewName", body(rate("1", "Standard (2-5 days)", "5.00")), "", "", nil},
		// Another rate's name and price on this one is a change of this one.
		{"AnotherRatesNameAndPrice", body(rate("1", "Express", "12.00")), "", "", nil},
		{"OneOfTwoChanged", body(rate("1", "Standard", "5.00") + "," + rate("2", "Express", "9.00")), "", "", nil},
		{"AddedRate", body(rate("", "Pickup", "0.00")), "", "", nil},
		// An unknown rate is refused as such, not also as unchanged.
		{"UnknownRate", body(rate("9", "Standard", "5.00")), "rate_not_found", "test_groups[1].content.rates[0].rate_id", nil},
	})
}

// TestOrderDiscountWarnsWhenItGivesAnItemAway: a fixed amount off the
// whole order is never refused (the platform takes at most the subtotal
// off), but one of at least the dearest price (the sweater's 98.00) that
// no min_subtotal or min_quantity keeps from a one-item order is warned
// of: every such order would be free.
func TestOrderDiscountWarnsWhenItGivesAnItemAway(t *testing.T) {
	t.Parallel()
	fixed := func(v string) string { return fmt.Sprintf(`{"type":"fixed_amount","value":%q}`, v) }
	minSubtotal := func(a string) string { return fmt.Sprintf(`{"min_subtotal":{"amount":%q,"currency":"USD"}}`, a) }
	const warns = "discount_above_every_price"
	for _, tc := range []struct {
		name, body, code string // code "": no finding at all
		want             []string
	}{
		{"OverEveryPrice", offerBody(fixed("500"), ""), warns, []string{`Test group "Half off" takes 500 off the whole order`,
			"dearest variant (M) of product Sweater (gid://shopify/Product/2) costs 98.00", "any one item would cost nothing", "min_subtotal above 500"}},
		{"OfTheDearestPrice", offerBody(fixed("98.00"), `{}`), warns, []string{"costs 98.00"}},
		{"WithAMinimumItReaches", offerBody(fixed("100"), minSubtotal("100.00")), warns, nil},
		{"WithOneItemAtLeast", offerBody(fixed("100"), `{"min_quantity":1}`), warns, nil},
		{"BelowTheDearestPrice", offerBody(fixed("97.99"), ""), "", nil},
		{"TenOffOrdersOverFifty", offerBody(fixed("10"), minSubtotal("50.00")), "", nil},
		{"WithAMinimumAboveIt", offerBody(fixed("500"), minSubtotal("500.01")), "", nil},
		{"ForTwoItemsOrMore", offerBody(fixed("500"), `{"min_quantity":2}`), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			warnings, err := validateWith(t, floorCatalog, tc.body)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.code == "" {
				if len(warnings) != 0 {
					t.Fatalf("warnings = %+v, want none", warnings)
				}
				return
			}
			if len(warnings) != 1 || warnings[0].Code != tc.code || warnings[0].Severity != SeverityWarning ||
				warnings[0].Param != "test_groups[1].content.offers[0].discount.value" {
				t.Fatalf("warnings = %+v, want one %s at the discount's value", warnings, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(warnings[0].Message, w) {
					t.Errorf("message %q does not say %q", warnings[0].Message, w)
				}
			}
		})
	}
}
