package experiment

import "testing"

// TestZoneOf: a destination is quoted by the zone that lists its country
// (the lowest id when two do, so the answer is stable), else by the
// rest-of-world zone, else by none.
func TestZoneOf(t *testing.T) {
	t.Parallel()
	view := &CatalogView{Zones: map[string]Zone{
		"z2":   {ID: "z2", Countries: []string{"US", "CA"}},
		"z1":   {ID: "z1", Countries: []string{"CA"}},
		"rest": {ID: "rest", RestOfWorld: true},
	}}
	for _, tc := range []struct{ country, want string }{{"US", "z2"}, {"CA", "z1"}, {"JP", "rest"}} {
		if z, ok := zoneOf(view, tc.country); !ok || z.ID != tc.want {
			t.Errorf("zoneOf(%s) = %q, %v; want %q", tc.country, z.ID, ok, tc.want)
		}
	}
	delete(view.Zones, "rest")
	if z, ok := zoneOf(view, "JP"); ok {
		t.Errorf("zoneOf(JP) without a rest-of-world zone = %q", z.ID)
	}
}

// TestZoneRateOffered: a rate's conditions bound the cart's subtotal and
// weight, both ends included; a subtotal in another currency ("") is not
// judged, a weight always is.
func TestZoneRateOffered(t *testing.T) {
	t.Parallel()
	free := ZoneRate{Price: "0", MinSubtotal: "75.00"}
	small := ZoneRate{Price: "4.99", MaxSubtotal: "74.99", MaxGrams: 2000}
	heavy := ZoneRate{Price: "19.00", MinGrams: 2001}
	for _, tc := range []struct {
		name     string
		r        ZoneRate
		subtotal string
		grams    int64
		want     bool
	}{
		{"free below", free, "74.99", 500, false},
		{"free at the bound", free, "75", 500, true},
		{"free above", free, "120.50", 500, true},
		{"free, other currency", free, "", 500, true},
		{"small", small, "74.99", 2000, true},
		{"small over the subtotal", small, "75.00", 100, false},
		{"small over the weight", small, "10.00", 2001, false},
		{"heavy", heavy, "10.00", 2001, true},
		{"heavy, too light", heavy, "", 2000, false},
		{"no conditions", ZoneRate{Price: "6.95"}, "0", 0, true},
	} {
		if got := tc.r.Offered(tc.subtotal, tc.grams); got != tc.want {
			t.Errorf("%s: Offered(%q, %d) = %v, want %v", tc.name, tc.subtotal, tc.grams, got, tc.want)
		}
	}
}

// TestOfferedKeepsConditionsOfReplacedRates: a group's price for a zone
// rate keeps the rate's conditions (it is the same rate at another price);
// a rate the group adds has none.
func TestOfferedKeepsConditionsOfReplacedRates(t *testing.T) {
	t.Parallel()
	zone := Zone{ID: "z", Rates: []ZoneRate{{ID: "std", Name: "Standard", Price: "4.99", MaxSubtotal: "74.99"},
		{ID: "free", Name: "Free", Price: "0", MinSubtotal: "75"}}}
	quoted := []QuotedRate{{Name: "Standard", Code: "std"}, {Name: "Free", Code: "free"}}
	group := []Rate{{ZoneID: "z", RateID: "free", Name: "Free", Price: Money{Amount: "0"}}, {ZoneID: "z", Name: "Saver", Price: Money{Amount: "2.99"}}}
	rates := applyGroupRates(quoted, group, "z", "lift-1-1-")
	var codes []string
	for _, q := range offered(rates, zone, RateRequest{Subtotal: "40.00"}) {
		codes = append(codes, q.Code)
	}
	if len(codes) != 2 || codes[0] != "std" || codes[1] != "lift-1-1-1" {
		t.Fatalf("a 40.00 cart is offered %v, want std and the group's added rate", codes)
	}
}
