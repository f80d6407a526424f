// The shipping test's rules (part 7): each group's rates over the declared
// zones.

package experiment

import (
	"fmt"
	"strings"
)

// checkRates validates a shipping group's rates and returns how many it
// sets.
func (v *validator) checkRates(c *ShippingContent, p, group string, control bool) int {
	if c == nil || len(c.Rates) == 0 {
		return 0
	}
	if control {
		v.fail("control_offers_rates", p+".rates", "The control group keeps the store's own shipping rates; it carries none.")
		return len(c.Rates)
	}
	declared := map[string]bool{}
	if v.shipping != nil {
		for _, z := range v.shipping.ZoneIDs {
			declared[z] = true
		}
	}
	seen := map[string]bool{}
	checked, changes := 0, 0
	for j, r := range c.Rates {
		rp := fmt.Sprintf("%s.rates[%d]", p, j)
		if !declared[r.ZoneID] {
			v.fail("zone_not_declared", rp+".zone_id", "Zone %q is not in shared.shipping.zone_ids.", r.ZoneID)
			continue
		}
		key := r.ZoneID + "|" + r.RateID
		if r.RateID == "" {
			key = r.ZoneID + "|name:" + strings.ToLower(r.Name)
		}
		if seen[key] {
			v.fail("duplicate_change", rp, "This group changes the same rate of zone %s twice.", r.ZoneID)
			continue
		}
		seen[key] = true
		z, known := v.cat.Zones[r.ZoneID]
		if r.RateID != "" && known && !hasRate(z, r.RateID) {
			v.fail("rate_not_found", rp+".rate_id", "Zone %s has no rate %s.", z.Name, r.RateID)
			known = false
		}
		named := strings.TrimSpace(r.Name) != ""
		if !named {
			v.fail("invalid_request", rp+".name", "A rate needs the name buyers see.")
		}
		v.checkMoney(r.Price, rp+".price", v.shopCurrency())
		if named && known {
			// As for prices (checkPrices): only a rate of a known zone and
			// rate says whether the group changes anything; a refused
			// amount is no catalog price, so it does not add this finding.
			checked++
			if !isCatalogRate(z, r) {
				changes++
			}
		}
	}
	if checked > 0 && changes == 0 {
		// Buyers in this group would see the zone's own rates, as the
		// control's do (session audit 2, F7 and S2-6).
		v.fail("change_required", p+".rates",
			"Every rate of test group %q is a rate its zone already has, at the same name and price: the group shows what the control shows.", group)
	}
	return len(c.Rates)
}

func hasRate(z Zone, id string) bool {
	for _, r := range z.Rates {
		if r.ID == id {
			return true
		}
	}
	return false
}

// isCatalogRate reports whether r shows buyers what zone z already does:
// the rate it replaces (or, added without rate_id, one of the zone's rates)
// at the same name and price.
func isCatalogRate(z Zone, r Rate) bool {
	for _, cr := range z.Rates {
		if (r.RateID == "" || cr.ID == r.RateID) && strings.TrimSpace(r.Name) == strings.TrimSpace(cr.Name) && decEqual(r.Price.Amount, cr.Price) {
			return true
		}
	}
	return false
}
