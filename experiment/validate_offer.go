// The offer test's rules (part 7): offers, discounts, combinations and
// conditions.

package experiment

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
)

var combinable = map[string]bool{"order": true, "product": true, "shipping": true}

func (v *validator) checkOffers(c *OfferContent, p string, control bool) int {
	if c == nil || len(c.Offers) == 0 {
		return 0
	}
	if control {
		v.fail("control_offers_rates", p+".offers", "The control group shows no offer; it carries none.")
		return len(c.Offers)
	}
	keys := map[string]bool{}
	for j, o := range c.Offers {
		op := fmt.Sprintf("%s.offers[%d]", p, j)
		switch {
		case strings.TrimSpace(o.Key) == "":
			v.fail("invalid_request", op+".key", "Every offer needs a key.")
		case keys[o.Key]:
			v.fail("duplicate_rule_key", op+".key", "Offer key %q is used twice in this group.", o.Key)
		}
		keys[o.Key] = true
		if strings.TrimSpace(o.Title) == "" {
			v.fail("invalid_request", op+".title", "Every offer needs the title buyers see.")
		}
		v.checkDiscount(o.Discount, op+".discount")
		seen := map[string]bool{}
		for k, w := range o.CombinesWith {
			cp := fmt.Sprintf("%s.combines_with[%d]", op, k)
			switch {
			case !combinable[w]:
				v.fail("discount_combination_invalid", cp, "combines_with takes order, product or shipping; got %q.", w)
			case seen[w]:
				v.fail("discount_combination_invalid", cp, "%q is listed twice.", w)
			case w == "shipping" && o.Discount.Type == "free_shipping":
				v.fail("discount_combination_invalid", cp, "A free-shipping offer cannot combine with another shipping discount.")
			}
			seen[w] = true
		}
		if o.Conditions != nil {
			v.checkConditions(o.Conditions, op+".conditions")
		}
	}
	return len(c.Offers)
}

func (v *validator) checkDiscount(d Discount, p string) {
	if d.MaxDiscountAmount != nil {
		v.fail("max_discount_amount_not_allowed", p+".max_discount_amount",
			"A maximum discount amount is authored in the admin panel.")
	}
	switch d.Type {
	case "percentage":
		r, ok := new(big.Rat).SetString(d.Value)
		if !ok || !amountPattern.MatchString(d.Value) || r.Sign() <= 0 || r.Cmp(big.NewRat(100, 1)) > 0 {
			v.fail("invalid_request", p+".value", "A percentage is a number above 0 and at most 100; got %q.", d.Value)
		}
	case "fixed_amount":
		if !amountPattern.MatchString(d.Value) || decLess(d.Value, "0.0001") {
			v.fail("invalid_request", p+".value", "A fixed amount is a positive decimal string; got %q.", d.Value)
		} else {
			v.checkUnits(d.Value, p+".value", v.shopCurrency()) // it is in the shop's money
		}
	case "free_shipping":
		if d.Value != "" {
			v.fail("invalid_request", p+".value", "A free_shipping discount takes no value.")
		}
	default:
		v.fail("invalid_request", p+".type", "discount.type is percentage, fixed_amount or free_shipping; got %q.", d.Type)
	}
}

func (v *validator) checkConditions(c *OfferConditions, p string) {
	cur := v.shopCurrency()
	okMin := c.MinSubtotal == nil || v.checkMoney(*c.MinSubtotal, p+".min_subtotal", cur)
	okMax := c.MaxSubtotal == nil || v.checkMoney(*c.MaxSubtotal, p+".max_subtotal", cur)
	if okMin && okMax && c.MinSubtotal != nil && c.MaxSubtotal != nil && decLess(c.MaxSubtotal.Amount, c.MinSubtotal.Amount) {
		v.fail("condition_range_invalid", p+".max_subtotal", "max_subtotal is below min_subtotal.")
	}
	if c.MinQuantity != nil && *c.MinQuantity < 0 {
		v.fail("condition_range_invalid", p+".min_quantity", "min_quantity cannot be negative.")
	}
	if c.MaxQuantity != nil && *c.MaxQuantity < 1 {
		v.fail("condition_range_invalid", p+".max_quantity", "max_quantity is at least 1.")
	}
	if c.MinQuantity != nil && c.MaxQuantity != nil && *c.MaxQuantity < *c.MinQuantity {
		v.fail("condition_range_invalid", p+".max_quantity", "max_quantity is below min_quantity.")
	}
	for i, id := range c.ProductIDs {
		if _, ok := v.cat.Products[id]; !ok {
			v.fail("product_not_found", fmt.Sprintf("%s.product_ids[%d]", p, i), "This shop has no product %s.", id)
		}
		if slices.Contains(c.ProductIDs[:i], id) {
			v.fail("invalid_request", fmt.Sprintf("%s.product_ids[%d]", p, i), "Product %s is listed twice.", id)
		}
	}
	for i, id := range c.CollectionIDs {
		if _, ok := v.cat.Collections[id]; !ok {
			v.fail("collection_not_found", fmt.Sprintf("%s.collection_ids[%d]", p, i), "This shop has no collection %s.", id)
		}
	}
}
