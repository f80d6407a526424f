package experiment

import (
	"strings"
	"testing"
)

// TestDiffCatalog: a refresh's outcome counts the new mirror and what
// changed against the old one; an amount written another way ("19.9",
// "19.90") is no change, an unknown cost that became known is.
func TestDiffCatalog(t *testing.T) {
	t.Parallel()
	product := func(id string, variants ...Variant) CatalogProduct {
		return CatalogProduct{Product: Product{ID: id}, Variants: variants}
	}
	old := &CatalogSnapshot{
		Products: []CatalogProduct{
			product("p1", Variant{ID: "v1", Price: "19.90", Cost: "7.50"}, Variant{ID: "v2", Price: "25.00"}),
			product("p2", Variant{ID: "v3", Price: "40.00", Cost: "16.25"}),
		},
		Collections: []Collection{{ID: "c1"}, {ID: "c2"}},
		Themes:      []Theme{{ID: "t1"}},
	}
	for _, tc := range []struct {
		name string
		next *CatalogSnapshot
		want CatalogRefresh
	}{
		{"Unchanged", old, CatalogRefresh{Products: 2, Variants: 3, Collections: 2, Themes: 1}},
		{"SameAmountsWrittenOtherwise", &CatalogSnapshot{Products: []CatalogProduct{
			product("p1", Variant{ID: "v1", Price: "19.9", Cost: "7.5000"}, Variant{ID: "v2", Price: "25"}),
			product("p2", Variant{ID: "v3", Price: "40.00", Cost: "16.25"}),
		}}, CatalogRefresh{Products: 2, Variants: 3, CollectionsRemoved: 2}},
		{"Changed", &CatalogSnapshot{
			Products: []CatalogProduct{
				product("p1", Variant{ID: "v1", Price: "17.90", Cost: "8.00"}, Variant{ID: "v2", Price: "25.00", Cost: "9.00"}),
				product("p3", Variant{ID: "v4", Price: "12.00"}, Variant{ID: "v5", Price: "13.00"}),
			},
			Collections:   []Collection{{ID: "c2"}, {ID: "c3"}, {ID: "c4"}},
			DeliveryZones: []Zone{{ID: "z1", LiftRates: true}, {ID: "z2"}, {ID: "z3", LiftRates: true}},
			Markets:       []Market{{ID: "m1"}},
		}, CatalogRefresh{Products: 2, Variants: 4, Collections: 3, ProductsAdded: 1, ProductsRemoved: 1,
			VariantsAdded: 2, VariantsRemoved: 1, CollectionsAdded: 2, CollectionsRemoved: 1, PricesChanged: 1, CostsChanged: 2,
			Zones: 3, ZonesWithLiftRates: 2, Markets: 1}},
		{"Emptied", &CatalogSnapshot{}, CatalogRefresh{ProductsRemoved: 2, VariantsRemoved: 3, CollectionsRemoved: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := diffCatalog(old, tc.next); got != tc.want {
				t.Fatalf("diff = %+v\nwant   %+v", got, tc.want)
			}
		})
	}
}

// TestCatalogRefreshString: the line says what the mirror holds and what
// changed, or why nothing was done.
func TestCatalogRefreshString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    CatalogRefresh
		want string
	}{
		{CatalogRefresh{Skipped: "no platform token to read the catalog with"}, "catalog refresh skipped: no platform token to read the catalog with"},
		{CatalogRefresh{Products: 4, Variants: 5, Collections: 1, Themes: 2, ProductsAdded: 1, PricesChanged: 1, CostsChanged: 2, CollectionsRemoved: 1,
			Zones: 3, ZonesWithLiftRates: 1, Markets: 2},
			"catalog refreshed: 4 products (+1/-0), 5 variants (+0/-0; 1 prices and 2 unit costs changed), 1 collections (+0/-1), 2 themes, 3 delivery zones (1 with Lift rates), 2 markets"},
	} {
		if got := tc.r.String(); got != tc.want || strings.Contains(got, "%!") {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}
