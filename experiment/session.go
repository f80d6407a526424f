package experiment

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// What the admin panel's session API needs beyond the public API's use
// cases: a read of the catalog mirror (its wire shapes group variants under
// their product, and a content test names products the domain keeps no
// field for) and a port to read an order's attribution from the warehouse
// for the internal admin tools.

// LookupCatalog returns the catalog objects of shop named in refs; objects
// the shop does not have are absent from the view. Only a failure to read
// is an error.
func (s *Service) LookupCatalog(ctx context.Context, shop *Shop, refs CatalogRefs) (*CatalogView, error) {
	return s.repo.Catalog().Lookup(ctx, shop.ID, refs)
}

// OrderLookup reads how an order was attributed. The warehouse implements
// it.
type OrderLookup interface {
	// FindOrder returns every stored version of order orderID of shop, per
	// test, oldest version first. An order the warehouse never attributed
	// is KindNotFound order_not_found.
	FindOrder(ctx context.Context, shopID int64, orderID string) ([]OrderVersion, error)
}

// OrderVersion is one stored version of an order's attribution to a test:
// edits and refunds add versions, the highest stands.
type OrderVersion struct {
	ExperimentID string
	Version      uint64
	TestGroup    int16
	Revenue      decimal.Decimal // exact, in Currency
	Currency     string
	Source       string // webhook (signed) or legacy
	CreatedAt    time.Time
	LineItems    int
}
