package experiment

import "context"

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
	Collections     []string
	Themes          []string
	Zones           []string
	Markets         []string
}

func (r *CatalogRefs) empty() bool {
	return len(r.Products)+len(r.Variants)+len(r.ProductVariants)+len(r.Collections)+len(r.Themes)+len(r.Zones)+len(r.Markets) == 0
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
}

// ZoneRate is an existing shipping rate of a zone.
type ZoneRate struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Price string `json:"price"` // in the shop's currency
}

// Market is a selling market: countries priced in one currency.
type Market struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Currency  string   `json:"currency"`
	Countries []string `json:"countries"`
}
