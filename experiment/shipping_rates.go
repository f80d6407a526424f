package experiment

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
)

// A shipping test changes the rates a checkout offers. The platform asks
// the shop's carrier service for rates (Lift's, registered at launch with
// the callback POST /api/carrier/rates), and its question carries the
// destination and the cart's lines, not the cart's attributes: the
// tracker puts the visitor's assignments on each line it adds
// (properties[_lift_assignments], StorefrontTest.LineAssignments).

// RateRequest is what QuoteRates needs from the platform's rate request.
type RateRequest struct {
	Country string // the destination's ISO 3166-1 alpha-2 code
	// Subtotal is the cart's lines' price × quantity, a decimal in the
	// shop's currency ("" when the request is in another currency), and
	// Grams their weight: what a zone rate's conditions are judged on.
	Subtotal string
	Grams    int64
	// Assignments is a line's _lift_assignments property ("42:1,57:0");
	// empty when no line carries one (the visitor sees the control's).
	Assignments string
}

// QuotedRate is one shipping option of a checkout.
type QuotedRate struct {
	Name  string
	Code  string // stable per rate: the zone rate's id, or the test's added rate
	Price Money
}

// QuoteRates answers the rates of the zone that ships to req.Country (one
// listing it, else the rest-of-world zone; zoneOf): the
// zone's own rates as the catalog mirror has them, changed as the
// visitor's group of an active shipping test of that zone changes them
// when the assignments name the test (a rate with rate_id replaces that
// rate, one without is added). So a zone the merchant serves through
// Lift's carrier service keeps its own rates before a test, while it is
// paused and after it ends, and a visitor outside the test (or its
// control) sees them too. A destination no zone of the mirror ships to
// gets no rates.
func (s *Service) QuoteRates(ctx context.Context, shop *Shop, req RateRequest) ([]QuotedRate, error) {
	view, err := s.repo.Catalog().Lookup(ctx, shop.ID, CatalogRefs{ZoneCountries: []string{req.Country}})
	if err != nil {
		return nil, fmt.Errorf("experiment.QuoteRates: %w", err)
	}
	zone, ok := zoneOf(view, req.Country)
	if !ok {
		return []QuotedRate{}, nil
	}
	out := make([]QuotedRate, 0, len(zone.Rates))
	for _, r := range zone.Rates {
		out = append(out, QuotedRate{Name: r.Name, Code: r.ID, Price: Money{Amount: r.Price, Currency: shop.Currency}})
	}
	live, _, err := s.repo.FindTests(ctx, shop.ID, Filter{Statuses: []Status{StatusActive}, Limit: maxLiveRead})
	if err != nil {
		return nil, fmt.Errorf("experiment.QuoteRates: %w", err)
	}
	return offered(groupRates(out, live, zone.ID, req.Assignments), zone, req), nil
}

// groupRates is rates as the visitor's group of the zone's running
// shipping test changes them (one running test a zone: conflict.go).
func groupRates(rates []QuotedRate, live []*Test, zoneID, assignments string) []QuotedRate {
	for _, t := range live {
		v := decoded(t)
		if v.shipping == nil || !slices.Contains(v.shipping.ZoneIDs, zoneID) {
			continue
		}
		g := groupOf(t.ID, assignments)
		for i, grp := range t.Groups {
			if grp.Index == g && v.groups[i].shipping != nil {
				return applyGroupRates(rates, v.groups[i].shipping.Rates, zoneID, fmt.Sprintf("lift-%d-%d-", t.ID, g))
			}
		}
		return rates
	}
	return rates
}

// offered keeps the rates the platform would offer this cart: a zone
// rate (or a group's price for it, which keeps its conditions) only when
// the cart meets its conditions; a rate a group added has none.
func offered(rates []QuotedRate, zone Zone, req RateRequest) []QuotedRate {
	return slices.DeleteFunc(rates, func(q QuotedRate) bool {
		i := slices.IndexFunc(zone.Rates, func(r ZoneRate) bool { return r.ID == q.Code })
		return i >= 0 && !zone.Rates[i].Offered(req.Subtotal, req.Grams)
	})
}

// zoneOf is the zone shipping to country, the lowest id first should two
// claim it.
func zoneOf(view *CatalogView, country string) (Zone, bool) {
	var listed, rest []Zone
	for _, z := range view.Zones {
		switch {
		case slices.Contains(z.Countries, country):
			listed = append(listed, z)
		case z.RestOfWorld:
			rest = append(rest, z)
		}
	}
	// A zone naming the country wins over the rest of the world, as on
	// the platform.
	found := listed
	if len(found) == 0 {
		found = rest
	}
	if len(found) == 0 {
		return Zone{}, false
	}
	return slices.MinFunc(found, func(a, b Zone) int { return cmp.Compare(a.ID, b.ID) }), true
}

// groupOf is the group the assignments give test id, or -1.
func groupOf(id int64, assignments string) int {
	for _, p := range parseAssignments(assignments) {
		if p.experimentID == strconv.FormatInt(id, 10) {
			return int(p.group)
		}
	}
	return -1
}

// applyGroupRates changes a zone's rates as a group's do: one with a
// rate_id replaces that rate, one without is added, coded by prefix and
// its place in the group's list.
func applyGroupRates(rates []QuotedRate, group []Rate, zoneID, prefix string) []QuotedRate {
	for i, r := range group {
		if r.ZoneID != zoneID {
			continue
		}
		q := QuotedRate{Name: r.Name, Code: prefix + strconv.Itoa(i), Price: r.Price}
		if j := slices.IndexFunc(rates, func(x QuotedRate) bool { return r.RateID != "" && x.Code == r.RateID }); j >= 0 {
			q.Code = r.RateID
			rates[j] = q
			continue
		}
		rates = append(rates, q)
	}
	return rates
}
