// The shipping test's rules (part 7): each group's rates over the declared
// zones.

package experiment

import (
	"fmt"
	"strings"
)

func (v *validator) checkRates(c *ShippingContent, p string, control bool) int {
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
		if r.RateID != "" {
			if z, ok := v.cat.Zones[r.ZoneID]; ok && !hasRate(z, r.RateID) {
				v.fail("rate_not_found", rp+".rate_id", "Zone %s has no rate %s.", z.Name, r.RateID)
			}
		}
		if strings.TrimSpace(r.Name) == "" {
			v.fail("invalid_request", rp+".name", "A rate needs the name buyers see.")
		}
		v.checkMoney(r.Price, rp+".price", v.shopCurrency())
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
