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
