package store_test

import (
	"testing"

	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/money"
	"github.com/liftab/lift/store"
)

// FuzzParseCatalog: whatever a catalog file holds, ParseCatalog refuses it
// or returns a catalog whose amounts parse and whose rest-of-world zones
// list no countries: what the import then writes without further checks.
func FuzzParseCatalog(f *testing.F) {
	f.Add(catalogdata.Demo)
	for _, s := range []string{`{"currency":"USD"}`, `{"currency":"USD","delivery_zones":[{"id":"gid://shopify/DeliveryZone/1","rest_of_world":true,` +
		`"rates":[{"id":"gid://shopify/DeliveryMethodDefinition/2","name":"W","price":"9.00","min_subtotal":"75","max_grams":500}]}]}`,
		`{"currency":"USD","delivery_zones":[{"id":"gid://shopify/DeliveryZone/1","rates":[{"id":"x","price":"1e9"}]}]}`, `[]`, `{"currency":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := store.ParseCatalog(raw)
		if err != nil {
			return
		}
		for _, z := range c.DeliveryZones {
			if z.RestOfWorld && len(z.Countries) > 0 {
				t.Fatalf("zone %s is the rest of the world and lists %v", z.ID, z.Countries)
			}
			for _, r := range z.Rates {
				for _, a := range []string{r.Price, r.MinSubtotal, r.MaxSubtotal} {
					if _, err := money.Parse(a); a != "" && err != nil {
						t.Fatalf("rate %s kept the amount %q: %v", r.ID, a, err)
					}
				}
				if r.MinGrams < 0 || r.MaxGrams < 0 {
					t.Fatalf("rate %s kept negative grams", r.ID)
				}
			}
		}
	})
}
