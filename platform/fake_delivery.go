package platform

import (
	"strings"

	"github.com/liftab/lift/experiment"
)

// The fake's delivery profiles: a merchant-made profile first and then
// the general (default) one, whose one location group ships to the
// catalog's delivery zones. A zone's catalog rates are flat-rate methods,
// active unless an active carrier service serves the zone (the merchant
// turned them off and added the carrier's rates: PutZoneCarrier, or, for
// Lift's, the catalog zone's LiftRates with LiftRatesURL set); carrier
// services taking part in a zone are methods of their own.

const (
	fakeCustomProfile  = "gid://shopify/DeliveryProfile/71"
	fakeDefaultProfile = "gid://shopify/DeliveryProfile/70"
	fakeLocationGroup  = "gid://shopify/DeliveryLocationGroup/80"
)

// fakeZoneCarrier is a carrier service taking part in a zone.
type fakeZoneCarrier struct {
	MethodID, CallbackURL string
	Active                bool
}

// PutZoneCarrier adds to a zone a shipping method whose rates the carrier
// service at callbackURL gives, as a merchant does in the shipping
// settings (active false: added, then turned off).
func (f *Fake) PutZoneCarrier(domain, zoneID, callbackURL string, active bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.shop(domain).install
	in.ZoneCarriers[zoneID] = append(in.ZoneCarriers[zoneID],
		fakeZoneCarrier{MethodID: f.id("DeliveryMethodDefinition"), CallbackURL: callbackURL, Active: active})
}

// conditionsOf is a rate's bounds as the platform's method conditions:
// amounts as money, weights in kilograms (as merchants set them).
func conditionsOf(r experiment.ZoneRate) []any {
	out := []any{}
	add := func(field, op string, criteria map[string]any) {
		out = append(out, map[string]any{"field": field, "operator": op, "conditionCriteria": criteria})
	}
	if r.MinSubtotal != "" {
		add("TOTAL_PRICE", "GREATER_THAN_OR_EQUAL_TO", map[string]any{"amount": r.MinSubtotal, "currencyCode": "USD"})
	}
	if r.MaxSubtotal != "" {
		add("TOTAL_PRICE", "LESS_THAN_OR_EQUAL_TO", map[string]any{"amount": r.MaxSubtotal, "currencyCode": "USD"})
	}
	if r.MinGrams > 0 {
		add("TOTAL_WEIGHT", "GREATER_THAN_OR_EQUAL_TO", map[string]any{"unit": "KILOGRAMS", "value": float64(r.MinGrams) / 1000})
	}
	if r.MaxGrams > 0 {
		add("TOTAL_WEIGHT", "LESS_THAN_OR_EQUAL_TO", map[string]any{"unit": "KILOGRAMS", "value": float64(r.MaxGrams) / 1000})
	}
	return out
}

// ClearZoneCarriers removes every carrier service's method from a zone, as
// a merchant who takes the zone back to its own rates does.
func (f *Fake) ClearZoneCarriers(domain, zoneID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.shop(domain).install.ZoneCarriers, zoneID)
}

func (f *Fake) deliveryOperation(in *fakeInstall, op string, v map[string]any) (any, bool) {
	str := func(k string) string { x, _ := v[k].(string); return x }
	switch op {
	case OpDeliveryProfiles:
		profiles := []any{
			map[string]any{"id": fakeCustomProfile, "default": false, "profileLocationGroups": []any{
				map[string]any{"locationGroup": map[string]string{"id": "gid://shopify/DeliveryLocationGroup/81"}}}},
			map[string]any{"id": fakeDefaultProfile, "default": true, "profileLocationGroups": []any{
				map[string]any{"locationGroup": map[string]string{"id": fakeLocationGroup}}}},
		}
		start, end, info := fakePage(len(profiles), str("after"))
		return map[string]any{"deliveryProfiles": map[string]any{"nodes": profiles[start:end], "pageInfo": info}}, true
	case OpDeliveryZones, OpZoneCarriers: // the latter's fields are a part of the former's
		if str("profile") != fakeDefaultProfile {
			return map[string]any{"deliveryProfile": nil}, true
		}
		if str("group") != fakeLocationGroup {
			return map[string]any{"deliveryProfile": map[string]any{"profileLocationGroups": []any{}}}, true
		}
		return map[string]any{"deliveryProfile": map[string]any{"profileLocationGroups": []any{
			map[string]any{"locationGroupZones": f.zonePage(in, str("after"))}}}}, true
	}
	return nil, false
}

// zonePage is a page of the default location group's zones, each with its
// methods.
func (f *Fake) zonePage(in *fakeInstall, after string) any {
	zones := in.Catalog.DeliveryZones
	start, end, info := fakePage(len(zones), after)
	nodes := []any{}
	for _, z := range zones[start:end] {
		carriers := in.ZoneCarriers[z.ID]
		if z.LiftRates && f.LiftRatesURL != "" {
			num := z.ID[strings.LastIndexByte(z.ID, '/')+1:]
			carriers = append([]fakeZoneCarrier{{MethodID: "gid://shopify/DeliveryMethodDefinition/9" + num,
				CallbackURL: f.LiftRatesURL, Active: true}}, carriers...)
		}
		handed := false // to an active carrier service: the merchant turned the zone's own rates off
		for _, c := range carriers {
			handed = handed || c.Active
		}
		countries := []any{}
		for _, c := range z.Countries {
			countries = append(countries, map[string]any{"code": map[string]any{"countryCode": c, "restOfWorld": false}})
		}
		if z.RestOfWorld {
			countries = append(countries, map[string]any{"code": map[string]any{"countryCode": nil, "restOfWorld": true}})
		}
		methods := []any{}
		for _, r := range z.Rates {
			methods = append(methods, map[string]any{"id": r.ID, "name": r.Name, "active": !handed,
				"rateProvider": map[string]any{"price": map[string]string{"amount": r.Price}}, "methodConditions": conditionsOf(r)})
		}
		for _, c := range carriers {
			methods = append(methods, map[string]any{"id": c.MethodID, "name": carrierServiceName, "active": c.Active,
				"rateProvider": map[string]any{"carrierService": map[string]string{"callbackUrl": c.CallbackURL}}, "methodConditions": []any{}})
		}
		nodes = append(nodes, map[string]any{"zone": map[string]any{"id": z.ID, "name": z.Name, "countries": countries},
			"methodDefinitions": map[string]any{"nodes": methods}})
	}
	return map[string]any{"nodes": nodes, "pageInfo": info}
}
