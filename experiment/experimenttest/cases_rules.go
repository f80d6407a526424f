package experimenttest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
)

// ruleCase is a create body the service refuses with a 422 of code at
// param, whose message holds every want; code "" is a create that must
// succeed.
type ruleCase struct {
	name, body, code, param string
	want                    []string
}

// offerOn is an offer test whose variant group "Cheaper" takes discount
// off products.
func offerOn(discount string, products ...string) string {
	ids := `"` + strings.Join(products, `","`) + `"`
	return fmt.Sprintf(`{"type":"offer","name":"o","test_groups":`+twoGroups+`}`, fmt.Sprintf(
		`{"offers":[{"key":"price-change","title":"Cheaper","discount":%s,"conditions":{"product_ids":[%s]}}]}`, discount, ids))
}

// offerOnCollections is offerOn for collections.
func offerOnCollections(discount string, collections ...string) string {
	return strings.Replace(offerOn(discount, collections...), `"product_ids"`, `"collection_ids"`, 1)
}

// ship is a shipping test of both demo zones whose variant group sets rates.
func ship(rates string) string {
	return fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q,%q]}},"test_groups":`+twoGroups+`}`,
		Domestic, Intl, `{"rates":[`+rates+`]}`)
}

// rateOf is one rate of zone; rateID "" adds a rate.
func rateOf(zone, rateID, name, amount string) string {
	id := ""
	if rateID != "" {
		id = fmt.Sprintf(`"rate_id":%q,`, rateID)
	}
	return fmt.Sprintf(`{"zone_id":%q,%s"name":%q,"price":{"amount":%q,"currency":"USD"}}`, zone, id, name, amount)
}

// testCreateRules runs the content rules that read the catalog (a
// product's variants, a collection's cheapest item, a zone's rates) on the backend's own catalog: on
// Postgres, the store's lookup answers them.
func testCreateRules(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	const value = "test_groups[1].content.offers[0].discount.value"
	cases := []ruleCase{
		// Session audit 2, F6: FIXED 500 off the sweater (98.00) made it
		// free, and so did 100 percent.
		{"ErrFixedAmountOverThePrice", offerOn(`{"type":"fixed_amount","value":"500"}`, Sweater), "invalid_request", value,
			[]string{`"Variant"`, "Merino Crew Sweater (" + Sweater + ")", "costs 98.00", "-402.00"}},
		{"ErrFixedAmountOfThePrice", offerOn(`{"type":"fixed_amount","value":"28.00"}`, Sweater, Tee), "invalid_request", value,
			[]string{"Organic Cotton Tee (" + Tee + ")", "costs 28.00", "0.00"}},
		// 25.00 off each item of Tops (28.00 at the least) and Accessories
		// would give Accessories' 22.00 socks away; the tie of the socks'
		// two sizes goes to the lower id, S/M.
		{"ErrFixedAmountOverACollectionItem", offerOnCollections(`{"type":"fixed_amount","value":"25.00"}`, Tops, Accessories), "invalid_request", value,
			[]string{`"Variant" takes 25.00 off collection Accessories (` + Accessories + ")",
				"cheapest variant (S/M) of product Recycled Running Sock (3-pack) (gid://shopify/Product/8107) costs 22.00", "would cost -3.00"}},
		{"ErrHundredPercent", offerOn(`{"type":"percentage","value":"100"}`, Sweater), "invalid_request", value,
			[]string{`"Variant"`, "100%", "Merino Crew Sweater"}},
		{"ErrPriceZero", strings.Replace(PriceTest("Free"), `"19.00"`, `"0"`, 1), "invalid_request",
			"test_groups[1].content.prices[0].price.amount", []string{TeeS, "above zero"}},
		// F7 re-check: rate 5011 at its own name and price, and S2-6: a
		// variant whose rates are the store's, as the control's are.
		{"ErrRateUnchanged", ship(rateOf(Domestic, Standard, "Standard", "6.95")), "change_required", "test_groups[1].content.rates",
			[]string{`"Variant"`, "same name and price"}},
		{"ErrRatesCopied", ship(rateOf(Domestic, "", "Standard", "6.95") + "," + rateOf(Intl, "", "International Standard", "19")), "change_required",
			"test_groups[1].content.rates", []string{"what the control shows"}},
		{"RateRepriced", ship(rateOf(Domestic, Standard, "Standard", "5.95")), "", "", nil},
		{"FixedAmountBelowThePrice", offerOn(`{"type":"fixed_amount","value":"27.99"}`, Sweater, Tee), "", "", nil},
		{"FixedAmountBelowACollectionItem", offerOnCollections(`{"type":"fixed_amount","value":"21.99"}`, Tops, Accessories), "", "", nil},
		{"PercentBelow100", offerOn(`{"type":"percentage","value":"99"}`, Sweater), "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := b.Service.Create(b.Ctx(), b.Shop, []byte(c.body), JSONReply(201))
			if c.code == "" {
				if err != nil || out.Test.ID == 0 {
					t.Fatalf("create refused: %v", err)
				}
				return
			}
			e := WantCode(t, err, experiment.KindValidation, c.code)
			if e.Param != c.param {
				t.Fatalf("param = %q, want %q", e.Param, c.param)
			}
			for _, w := range c.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q does not say %q", e.Message, w)
				}
			}
		})
	}
}

// testNameLength: a test's name is at most experiment.MaxNameChars
// characters in every type, checkout included, counted as characters: 255
// × "é" (510 bytes) is a name, 256 is not (session audit 2, S2-11, where
// checkout counted bytes).
func testNameLength(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	shop := b.NewShop(t, Plan{Features: append([]string{"checkout_blocks"}, FullPlan.Features...), SubscriptionActive: true, CarrierService: true})
	bodies := map[experiment.Type]string{experiment.TypeCheckout: fmt.Sprintf(`{"type":"checkout","name":"x","test_groups":`+twoGroups+`}`, `{"blocks":[]}`)}
	for typ, body := range TypeBodies() {
		bodies[typ] = body
	}
	named := func(body, name string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		m["name"] = name
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for typ, body := range bodies {
		t.Run(string(typ), func(t *testing.T) {
			create := func(name string) (*experiment.Outcome, error) {
				// The admin panel's way in, which every surface's create of
				// a checkout test takes; other types it hands to Create.
				return b.Service.CreateFromAdminPanel(b.Ctx(), shop, []byte(named(body, name)))
			}
			name := strings.Repeat("é", experiment.MaxNameChars)
			out, err := create(name)
			if err != nil {
				t.Fatalf("a name of %d characters (%d bytes): %v", experiment.MaxNameChars, len(name), err)
			}
			if out.Test.Name != name {
				t.Fatalf("stored name of %d bytes, want %d", len(out.Test.Name), len(name))
			}
			_, err = create(name + "é")
			e := WantCode(t, err, experiment.KindValidation, "invalid_request")
			if e.Param != "name" || !strings.Contains(e.Message, "at most 255 characters") {
				t.Fatalf("over the limit: param %q, message %q", e.Param, e.Message)
			}
		})
	}
}
