package experiment

import (
	"context"
	"slices"
)

// Catalog is the shop's catalog mirror that validation reads. The store
// implements it over Postgres.
type Catalog interface {
	// Lookup returns the catalog objects of the shop named in refs. Objects
	// the shop does not have are simply absent from the view; only a failure
	// to read is an error.
	Lookup(ctx context.Context, shopID int64, refs CatalogRefs) (*CatalogView, error)
}

// CatalogRefs are the platform ids a test names, by kind.
type CatalogRefs struct {
	Products []string
	Variants []string
	// ProductVariants are products whose every variant the view carries
	// in Variants: a discount on a product names no variant, yet must
	// leave the cheapest one above zero.
	ProductVariants []string
	// CollectionFloors are collections whose cheapest item the view
	// carries in Floors: a fixed discount on a collection comes off each
	// of its items, so it must leave the cheapest above zero.
	CollectionFloors []string
	// Dearest asks for the shop's dearest item in CatalogView.Dearest: a
	// fixed amount off the whole order that is at least its price gives
	// an order of any one item away.
	Dearest     bool
	Collections []string
	Themes      []string
	Zones       []string
	// ZoneCountries asks for every zone shipping to one of these
	// (a rest-of-world zone ships to them all)
	// countries (ISO codes), in CatalogView.Zones with the named ones.
	ZoneCountries []string
	Markets       []string
}

func (r *CatalogRefs) empty() bool {
	return !r.Dearest && len(r.Products)+len(r.Variants)+len(r.ProductVariants)+len(r.CollectionFloors)+
		len(r.Collections)+len(r.Themes)+len(r.Zones)+len(r.ZoneCountries)+len(r.Markets) == 0
}

// CatalogView is what Lookup found.
type CatalogView struct {
	Products map[string]Product
	// Variants are those named in CatalogRefs.Variants and every variant
	// of the products in CatalogRefs.ProductVariants.
	Variants    map[string]Variant
	Collections map[string]Collection
	Themes      map[string]Theme
	Zones       map[string]Zone
	Markets     map[string]Market
	// Floors are, by id, the cheapest item of each collection in
	// CatalogRefs.CollectionFloors: the lowest-priced variant of the
	// products the mirror lists for it (ties by variant id). A collection
	// the catalog lacks, or whose products have no variant, is absent.
	Floors map[string]Item
	// Dearest is the shop's highest-priced variant (ties by variant id)
	// when CatalogRefs.Dearest asked for it; nil when the shop has none.
	Dearest *Item
}

// Item is a variant with its product, for a message that names both.
type Item struct {
	Product Product
	Variant Variant
}

// Cheapest is the lowest-priced variant in the view of the products
// accepted by in, with its product when the view has it. The catalog's
// fakes answer Floors with it (Floor).
func (v *CatalogView) Cheapest(in func(productID string) bool) (Item, bool) { return v.extreme(in, -1) }

// Floor is the cheapest item of collection id's products in the view, as
// Floors carries it; the catalog's fakes answer CollectionFloors with it.
func (v *CatalogView) Floor(id string) (Item, bool) {
	c, ok := v.Collections[id]
	if !ok {
		return Item{}, false
	}
	return v.Cheapest(func(p string) bool { return slices.Contains(c.ProductIDs, p) })
}

// FindDearest is the highest-priced variant in the view, with its
// product; the catalog's fakes answer CatalogRefs.Dearest with it.
func (v *CatalogView) FindDearest() (Item, bool) {
	return v.extreme(func(string) bool { return true }, 1)
}

// extreme is the variant of the products accepted by in whose price
// compares to every other's as sign says (-1 the lowest, 1 the highest).
// Ties go to the lower variant id, so a message is the same every time;
// a variant without a price is skipped.
func (v *CatalogView) extreme(in func(productID string) bool, sign int) (Item, bool) {
	var best Variant
	found := false
	for _, x := range v.Variants {
		if !in(x.ProductID) || x.Price == "" {
			continue
		}
		c, ok := decCmp(x.Price, best.Price)
		if !found || (ok && (c == sign || (c == 0 && x.ID < best.ID))) {
			best, found = x, true
		}
	}
	return Item{Product: v.Products[best.ProductID], Variant: best}, found
}

// Product is a product of the catalog mirror.
type Product struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Handle string `json:"handle,omitempty"`
}

// Variant is a purchasable variant with its current price and unit cost.
type Variant struct {
	ID        string `json:"id"`
	ProductID string `json:"product_id"`
	Title     string `json:"title"`
	SKU       string `json:"sku,omitempty"`
	Price     string `json:"price"`          // in the shop's currency
	Cost      string `json:"cost,omitempty"` // unit cost, empty when unknown
}

// Collection is a product collection.
type Collection struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	ProductIDs []string `json:"product_ids,omitempty"`
}

// Theme is an installed storefront theme with its templates.
type Theme struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Role      string   `json:"role"` // main (published) or unpublished
	Templates []string `json:"templates"`
}

// Zone is a delivery zone with its shipping rates.
type Zone struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Countries []string   `json:"countries"`
	Rates     []ZoneRate `json:"rates"`
	// LiftRates: the zone offers Lift's carrier service ("Lift rates"), so
	// the platform asks Lift for its rates. A shipping test changes what
	// buyers see only in such a zone.
	LiftRates bool `json:"lift_rates"`
	// RestOfWorld: the zone ships to every country no other zone lists
	// (the platform's "rest of world"); it lists none itself.
	RestOfWorld bool `json:"rest_of_world"`
}

// ZoneRate is an existing shipping rate of a zone.
type ZoneRate struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Price string `json:"price"` // in the shop's currency
	// The cart the platform offers the rate to (its method conditions):
	// a subtotal from MinSubtotal to MaxSubtotal in the shop's currency
	// and a weight from MinGrams to MaxGrams, bounds included; "" and 0
	// are no bound. "Free shipping from 75" is Price 0, MinSubtotal 75.
	MinSubtotal string `json:"min_subtotal,omitempty"`
	MaxSubtotal string `json:"max_subtotal,omitempty"`
	MinGrams    int64  `json:"min_grams,omitempty"`
	MaxGrams    int64  `json:"max_grams,omitempty"`
}

// Offered reports whether the platform offers r to a cart of subtotal
// (a decimal in the shop's currency; "" when unknown, whose price bounds
// are then not judged) weighing grams.
func (r ZoneRate) Offered(subtotal string, grams int64) bool {
	if subtotal != "" && (r.MinSubtotal != "" && decLess(subtotal, r.MinSubtotal) ||
		r.MaxSubtotal != "" && decLess(r.MaxSubtotal, subtotal)) {
		return false
	}
	return (r.MinGrams == 0 || grams >= r.MinGrams) && (r.MaxGrams == 0 || grams <= r.MaxGrams)
}

// Market is a selling market: countries priced in one currency.
type Market struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Currency  string   `json:"currency"`
	Countries []string `json:"countries"`
}
