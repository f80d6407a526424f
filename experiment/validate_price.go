// The price test's rules (part 7): shared products and markets, each group's
// variant prices, money amounts.

package experiment

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/liftab/lift/money"
)

func (v *validator) productCap() int {
	if v.shop != nil && v.shop.RaisedProductLimit {
		return RaisedProductLimit
	}
	return ProductLimit
}

// checkProductIDs checks a test's product list at param: at most the shop's
// cap (false when over it, so the caller stops there), global ids, each
// once, each in the catalog. kind names the test in the cap's message.
func (v *validator) checkProductIDs(ids []string, param, kind string) bool {
	if limit, n := v.productCap(), len(ids); n > limit {
		v.fail("product_limit_exceeded", param, "A %s test on this shop carries at most %d products; %d were sent.", kind, limit, n)
		return false
	}
	seen := map[string]bool{}
	for i, id := range ids {
		p := fmt.Sprintf("%s[%d]", param, i)
		switch {
		case !gidPattern.MatchString(id):
			v.fail("invalid_request", p, "%q is not a platform global id.", id)
		case seen[id]:
			v.fail("duplicate_change", p, "Product %s is listed twice.", id)
		default:
			if _, ok := v.cat.Products[id]; !ok {
				v.fail("product_not_found", p, "This shop has no product %s.", id)
			}
		}
		seen[id] = true
	}
	return true
}

func (v *validator) checkPriceShared(p *PriceShared) {
	n := len(p.ProductIDs)
	if n == 0 {
		v.fail("invalid_request", "shared.price.product_ids", "shared.price.product_ids needs at least one product.")
	}
	if !v.checkProductIDs(p.ProductIDs, "shared.price.product_ids", "price") {
		return
	}
	for i, m := range p.Markets {
		param := fmt.Sprintf("shared.price.markets[%d]", i)
		cm, ok := v.cat.Markets[m.ID]
		if !ok {
			v.fail("market_pricing_incomplete", param+".id", "This shop has no market %q.", m.ID)
			continue
		}
		for j, c := range m.Countries {
			if !slices.Contains(cm.Countries, c) {
				v.fail("market_pricing_incomplete", fmt.Sprintf("%s.countries[%d]", param, j),
					"Market %s does not sell to %q.", cm.Name, c)
			}
		}
	}
}

// marketCountries maps each priceable country to its market's currency.
func (v *validator) marketCountries() map[string]string {
	out := map[string]string{}
	if v.price == nil {
		return out
	}
	for _, m := range v.price.Markets {
		cm, ok := v.cat.Markets[m.ID]
		if !ok {
			continue
		}
		countries := m.Countries
		if len(countries) == 0 {
			countries = cm.Countries
		}
		for _, c := range countries {
			out[c] = cm.Currency
		}
	}
	return out
}

func (v *validator) checkMoney(m Money, p, currency string) bool {
	if !amountPattern.MatchString(m.Amount) {
		v.fail("invalid_request", p+".amount", "An amount is a decimal string such as \"19.99\"; got %q.", m.Amount)
		return false
	}
	if currency != "" && m.Currency != currency {
		v.fail("currency_mismatch", p+".currency", "This amount must be in %s; got %q.", currency, m.Currency)
		return false
	}
	return v.checkUnits(m.Amount, p+".amount", m.Currency)
}

// checkUnits refuses an amount (a decimal string) the checkout cannot
// charge in currency (a fraction of a cent) or storage cannot hold: it is
// not rounded behind the merchant's back.
func (v *validator) checkUnits(amount, param, currency string) bool {
	d, err := money.Parse(amount)
	if err != nil {
		v.fail("invalid_request", param, "%s is more than an amount can be (at most 14 digits before the point).", amount)
		return false
	}
	if units := money.MinorUnits(currency); !d.Equal(d.Round(units)) {
		v.fail("invalid_request", param, "%s has more decimals than %s's %d.", amount, currency, units)
		return false
	}
	return true
}

func (v *validator) shopCurrency() string {
	if v.shop == nil {
		return ""
	}
	return v.shop.Currency
}

// checkPrices validates a price group's content and returns how many changes it makes.
func (v *validator) checkPrices(c *PriceContent, p, group string, control bool) int {
	if c == nil {
		return 0
	}
	if control {
		return len(c.Prices)
	}
	products := map[string]bool{}
	if v.price != nil {
		for _, id := range v.price.ProductIDs {
			products[id] = true
		}
	}
	markets := v.marketCountries()
	seen := map[string]bool{}
	changes, known := 0, 0
	for j, vp := range c.Prices {
		ep := fmt.Sprintf("%s.prices[%d]", p, j)
		id := vp.ProductVariantID
		if seen[id] {
			v.fail("duplicate_change", ep+".product_variant_id", "Variant %s is priced twice in this group.", id)
			continue
		}
		seen[id] = true
		variant, ok := v.cat.Variants[id]
		switch {
		case !gidPattern.MatchString(id):
			v.fail("invalid_request", ep+".product_variant_id", "%q is not a platform global id.", id)
			continue
		case !ok:
			v.fail("product_not_found", ep+".product_variant_id", "This shop has no product variant %s.", id)
			continue
		case !products[variant.ProductID]:
			v.fail("product_not_found", ep+".product_variant_id",
				"Variant %s belongs to product %s, which is not in shared.price.product_ids.", id, variant.ProductID)
			continue
		}
		// A variant at its catalog price, with no compare-at or country
		// price, shows what the control shows: a group of only such
		// entries tests nothing (v1 audit 2, V5), as the published theme
		// in a theme test does not.
		known++
		if vp.CompareAtPrice != nil || len(vp.CountryPrices) > 0 || variant.Price == "" || !decEqual(vp.Price.Amount, variant.Price) {
			changes++
		}
		if v.checkMoney(vp.Price, ep+".price", v.shopCurrency()) && v.checkAboveZero(vp.Price.Amount, ep+".price.amount", group, id) {
			if variant.Cost != "" && decLess(vp.Price.Amount, variant.Cost) {
				v.warn("price_below_cost", ep+".price.amount",
					"%s is below the variant's unit cost %s; every sale of it loses money.", vp.Price.Amount, variant.Cost)
			}
		}
		if vp.CompareAtPrice != nil && v.checkMoney(*vp.CompareAtPrice, ep+".compare_at_price", v.shopCurrency()) &&
			decLess(vp.CompareAtPrice.Amount, vp.Price.Amount) {
			v.warn("compare_at_below_price", ep+".compare_at_price.amount",
				"compare_at_price is below price; the storefront shows no saving.")
		}
		priced := map[string]bool{}
		for k, cp := range vp.CountryPrices {
			cpp := fmt.Sprintf("%s.country_prices[%d]", ep, k)
			cur, covered := markets[cp.Country]
			switch {
			case !countryCode.MatchString(cp.Country):
				v.fail("invalid_request", cpp+".country", "A country is a two-letter code; got %q.", cp.Country)
			case !covered:
				v.fail("market_pricing_incomplete", cpp+".country",
					"Country %s is not covered by a market in shared.price.markets; list its market to price it.", cp.Country)
			case priced[cp.Country]:
				v.fail("duplicate_change", cpp+".country", "Country %s is priced twice for this variant.", cp.Country)
			default:
				if v.checkMoney(cp.Price, cpp+".price", cur) {
					v.checkAboveZero(cp.Price.Amount, cpp+".price.amount", group, id)
				}
			}
			priced[cp.Country] = true
		}
		var missing []string
		for c := range markets {
			if !priced[c] {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			v.fail("market_pricing_incomplete", ep+".country_prices",
				"The listed markets make %s priceable; price this variant there too (countries are never dropped silently).",
				strings.Join(missing, ", "))
		}
	}
	if known > 0 && changes == 0 {
		// Only about entries that passed the checks above: one refused
		// already (an unknown variant) says nothing of its price.
		v.fail("change_required", p+".prices", "Every price in this group is the variant's catalog price: the group shows what the control shows.")
	}
	if len(c.Prices) > 0 && changes == 0 {
		return len(c.Prices) // refused above, with the reason; not again as "no prices"
	}
	return changes
}

// checkAboveZero refuses a variant priced at zero (a valid amount,
// checked before): a free product tests no price and gives the goods away,
// as a discount of all of the price would (checkPriceStaysPositive).
func (v *validator) checkAboveZero(amount, param, group, variant string) bool {
	if c, ok := decCmp(amount, "0"); ok && c > 0 {
		return true
	}
	v.fail("invalid_request", param,
		"Test group %q prices variant %s at %s, which would then cost nothing: a price change keeps every price above zero.", group, variant, amount)
	return false
}

// decCmp compares decimal strings as big.Rat.Cmp does; ok is false when
// either does not parse.
func decCmp(a, b string) (c int, ok bool) {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return x.Cmp(y), true
}

// decEqual reports a == b for decimal strings; unparsable values compare false.
func decEqual(a, b string) bool { c, ok := decCmp(a, b); return ok && c == 0 }

// decLess reports a < b for decimal strings; unparsable values compare false.
func decLess(a, b string) bool { c, ok := decCmp(a, b); return ok && c < 0 }
