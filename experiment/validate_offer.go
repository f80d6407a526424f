// The offer test's rules (part 7): offers, discounts, combinations and
// conditions.

package experiment

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/liftab/lift/money"
)

var combinable = map[string]bool{"order": true, "product": true, "shipping": true}

func (v *validator) checkOffers(c *OfferContent, p, group string, control bool) int {
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
		if v.checkDiscount(o.Discount, op+".discount") {
			v.checkPriceStaysPositive(o, op+".discount.value", group)
		}
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

// checkDiscount checks a discount's own fields and reports whether its
// value is one the price rule below can read.
func (v *validator) checkDiscount(d Discount, p string) bool {
	if d.MaxDiscountAmount != nil {
		v.fail("max_discount_amount_not_allowed", p+".max_discount_amount",
			"A maximum discount amount is authored in the admin panel.")
	}
	switch d.Type {
	case "percentage":
		r, ok := new(big.Rat).SetString(d.Value)
		if !ok || !amountPattern.MatchString(d.Value) || r.Sign() <= 0 || r.Cmp(big.NewRat(100, 1)) > 0 {
			v.fail("invalid_request", p+".value", "A percentage is a number above 0 and below 100; got %q.", d.Value)
			return false
		}
	case "fixed_amount":
		if !amountPattern.MatchString(d.Value) || decLess(d.Value, "0.0001") {
			v.fail("invalid_request", p+".value", "A fixed amount is a positive decimal string; got %q.", d.Value)
			return false
		}
		return v.checkUnits(d.Value, p+".value", v.shopCurrency()) // it is in the shop's money
	case "free_shipping":
		if d.Value != "" {
			v.fail("invalid_request", p+".value", "A free_shipping discount takes no value.")
		}
	default:
		v.fail("invalid_request", p+".type", "discount.type is percentage, fixed_amount or free_shipping; got %q.", d.Type)
		return false
	}
	return true
}

// checkPriceStaysPositive refuses a discount that leaves a product it
// applies to at zero or less (session audit 2, F6): a free product tests
// no price, and every order of it gives the goods away. 100 percent does
// that to anything; a fixed amount is checkFixedAmount's, or on the whole
// order checkOrderAmount's.
func (v *validator) checkPriceStaysPositive(o Offer, param, group string) {
	switch o.Discount.Type {
	case "percentage":
		if c, ok := decCmp(o.Discount.Value, "100"); !ok || c < 0 {
			return
		}
		what := "every item it applies to"
		if o.Conditions != nil && len(o.Conditions.ProductIDs) > 0 {
			what = v.productNames(o.Conditions.ProductIDs)
		}
		v.fail("invalid_request", param,
			"Test group %q takes 100%% off %s, which would then cost nothing: a price change keeps every price above zero.", group, what)
	case "fixed_amount":
		if onWholeOrder(o.Conditions) {
			v.checkOrderAmount(o.Discount.Value, o.Conditions, param, group)
		} else {
			v.checkFixedAmount(o.Discount.Value, o.Conditions, param, group)
		}
	}
}

// onWholeOrder reports whether an offer of conditions c names no product
// or collection: its discount comes off the order, not each item.
func onWholeOrder(c *OfferConditions) bool {
	return c == nil || len(c.ProductIDs)+len(c.CollectionIDs) == 0
}

// checkOrderAmount warns of a fixed amount off the whole order that gives
// any one item away. The platform takes at most the order's subtotal off,
// so no price goes below zero and nothing is refused: "10 off orders over
// 50" is an ordinary offer, and so is a small amount with no minimum. But
// an amount of at least the shop's dearest price, with no min_subtotal
// above it and no min_quantity above 1, makes every order of one item
// free, whichever it is: the mistake an error would be too much for.
func (v *validator) checkOrderAmount(value string, c *OfferConditions, param, group string) {
	top := v.cat.Dearest
	if top == nil || decLess(value, top.Variant.Price) {
		return
	}
	if c != nil && (c.MinQuantity != nil && *c.MinQuantity > 1 || c.MinSubtotal != nil && decLess(value, c.MinSubtotal.Amount)) {
		return
	}
	v.warn("discount_above_every_price", param,
		"Test group %q takes %s off the whole order, and the shop's dearest variant (%s) of product %s costs %s: "+
			"an order of any one item would cost nothing. Set a min_subtotal above %s, or take less than %s off.",
		group, value, top.Variant.Title, named(top.Product.Title, top.Variant.ProductID), top.Variant.Price, value, top.Variant.Price)
}

// checkFixedAmount holds a fixed amount, which comes off each item, below
// the cheapest variant of every product named and of every collection's
// products. A product or collection the catalog does not have is left to
// checkConditions (product_not_found, collection_not_found). A
// collection's cheapest item is the mirror's: it covers the products the
// mirror lists for the collection, every one the platform had at the
// install or the last catalog refresh. An offer on the whole order is
// checkOrderAmount's.
func (v *validator) checkFixedAmount(value string, c *OfferConditions, param, group string) {
	for _, id := range c.ProductIDs {
		cheapest, ok := v.cat.Cheapest(func(p string) bool { return p == id })
		if !ok || decLess(value, cheapest.Variant.Price) {
			continue
		}
		v.fail("invalid_request", param,
			"Test group %q takes %s off %s, whose cheapest variant (%s) costs %s: %s", group, value,
			v.productNames([]string{id}), cheapest.Variant.Title, cheapest.Variant.Price, v.takeLess(value, cheapest.Variant.Price))
	}
	for _, id := range c.CollectionIDs {
		floor, ok := v.cat.Floors[id]
		if !ok || decLess(value, floor.Variant.Price) {
			continue
		}
		v.fail("invalid_request", param,
			"Test group %q takes %s off collection %s, whose cheapest variant (%s) of product %s costs %s: %s",
			group, value, named(v.cat.Collections[id].Title, id), floor.Variant.Title, named(floor.Product.Title, floor.Variant.ProductID),
			floor.Variant.Price, v.takeLess(value, floor.Variant.Price))
	}
}

// takeLess ends a fixed amount's refusal: what price would be left, and
// the rule.
func (v *validator) takeLess(off, price string) string {
	left, _ := money.Parse(price)
	amount, _ := money.Parse(off)
	return fmt.Sprintf("it would cost %s. A price change keeps every price above zero; take less than %s off.",
		left.Sub(amount).StringFixed(money.MinorUnits(v.shopCurrency())), price)
}

// named is "<title> (<id>)", or the id alone when there is no title.
func named(title, id string) string {
	if title == "" {
		return id
	}
	return fmt.Sprintf("%s (%s)", title, id)
}

// productNames names products for a message: "product <title> (<id>)".
func (v *validator) productNames(ids []string) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = named(v.cat.Products[id].Title, id)
	}
	if len(ids) == 1 {
		return "product " + names[0]
	}
	return "products " + strings.Join(names, ", ")
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
