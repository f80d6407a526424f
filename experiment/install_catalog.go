package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/liftab/lift/money"
)

// CatalogRefresh is what one catalog refresh did: the mirror it wrote,
// counted, and how that differs from the mirror it replaced.
type CatalogRefresh struct {
	// Skipped says why nothing was read or written; "" when the mirror
	// was replaced.
	Skipped string
	// What the mirror holds now.
	Products, Variants, Collections, Themes int
	// Ids in the new mirror and not the old one, and the reverse.
	ProductsAdded, ProductsRemoved       int
	VariantsAdded, VariantsRemoved       int
	CollectionsAdded, CollectionsRemoved int
	// Variants in both whose price, or unit cost, is another amount now.
	PricesChanged, CostsChanged int
	// Delivery zones in the mirror now, and how many offer Lift rates;
	// markets.
	Zones, ZonesWithLiftRates, Markets int
	// Shipping tests not ended one of whose zones does not offer Lift
	// rates (or is gone): each carries the standing zone_without_lift_rates.
	ShippingTestsFlagged int
}

// String is the outcome as one line, for the CLI and the job's log.
func (r CatalogRefresh) String() string {
	if r.Skipped != "" {
		return "catalog refresh skipped: " + r.Skipped
	}
	return fmt.Sprintf("catalog refreshed: %d products (+%d/-%d), %d variants (+%d/-%d; %d prices and %d unit costs changed), %d collections (+%d/-%d), %d themes, %d delivery zones (%d with Lift rates), %d markets",
		r.Products, r.ProductsAdded, r.ProductsRemoved, r.Variants, r.VariantsAdded, r.VariantsRemoved,
		r.PricesChanged, r.CostsChanged, r.Collections, r.CollectionsAdded, r.CollectionsRemoved, r.Themes,
		r.Zones, r.ZonesWithLiftRates, r.Markets) + flaggedLine(r.ShippingTestsFlagged)
}

// flaggedLine ends the outcome line when a refresh flagged live tests.
func flaggedLine(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d shipping tests on zones without Lift rates", n)
}

// LogValue makes a log record carry the counts as fields, not only the line.
func (r CatalogRefresh) LogValue() slog.Value {
	if r.Skipped != "" {
		return slog.GroupValue(slog.String("skipped", r.Skipped))
	}
	return slog.GroupValue(slog.Int("products", r.Products), slog.Int("variants", r.Variants),
		slog.Int("collections", r.Collections), slog.Int("themes", r.Themes),
		slog.Int("products_added", r.ProductsAdded), slog.Int("products_removed", r.ProductsRemoved),
		slog.Int("variants_added", r.VariantsAdded), slog.Int("variants_removed", r.VariantsRemoved),
		slog.Int("collections_added", r.CollectionsAdded), slog.Int("collections_removed", r.CollectionsRemoved),
		slog.Int("prices_changed", r.PricesChanged), slog.Int("costs_changed", r.CostsChanged),
		slog.Int("zones", r.Zones), slog.Int("zones_with_lift_rates", r.ZonesWithLiftRates), slog.Int("markets", r.Markets),
		slog.Int("shipping_tests_flagged", r.ShippingTestsFlagged))
}

// errUninstalledMeanwhile rolls back a refresh whose shop was uninstalled
// while the platform was read; it never leaves RefreshCatalog.
var errUninstalledMeanwhile = errors.New("the shop was uninstalled while its catalog was read")

// RefreshCatalog reads the shop's catalog from the platform again, with the
// shop's own token, and replaces the catalog mirror with it in one unit of
// work (audited shop.catalog_refresh): the platform sends no product
// webhooks, so without it a product added after the install could never be
// tested, validation's price floors and the orders' unit costs would stay
// as they were at install, and a zone the merchant has since handed to
// Lift's rates would still read as not offering them. The scheduler runs
// it every jobs.catalog_refresh_every, `lift shops refresh-catalog` on
// demand, and a save warned about a zone queues one (recheckZones).
//
// A shop that uninstalled Lift, or has no stored token, is skipped (the
// outcome says so; not an error). A failed read is returned (a refusal is
// a *PlatformError in the chain), so the job retries it, and nothing is
// written: the mirror is replaced whole or not at all. The shop's
// currency, which the catalog read does not carry, is kept, and so are its
// delivery zones and markets when the read has none (nil: a platform that
// could not say).
func (s *InstallService) RefreshCatalog(ctx context.Context, shop *Shop) (CatalogRefresh, error) {
	if !shop.Installed() {
		return CatalogRefresh{Skipped: "the shop has uninstalled Lift"}, nil
	}
	tok, ok, err := s.platformToken(ctx, shop)
	if err != nil {
		return CatalogRefresh{}, wrapInstall("RefreshCatalog", shop, err)
	}
	if !ok {
		return CatalogRefresh{Skipped: "no platform token to read the catalog with"}, nil
	}
	fresh, err := s.Platform.FetchCatalog(ctx, shop.Domain, tok)
	if err != nil {
		return CatalogRefresh{}, wrapInstall("RefreshCatalog", shop, fmt.Errorf("read the catalog (the mirror is unchanged): %w", err))
	}
	var out CatalogRefresh
	_, err = s.Repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "shop.catalog_refresh", ResourceType: "catalog"},
		func(ctx context.Context, tx InstallTx) (WriteResult, error) {
			// The read took a while: an uninstall in between cleared the
			// mirror, which this write must not fill again. The lock keeps
			// one from starting until the write is done.
			cur, hasToken, err := tx.LockShop(ctx, shop.ID)
			if err != nil {
				return WriteResult{}, err
			}
			if !cur.Installed() || !hasToken {
				return WriteResult{}, errUninstalledMeanwhile
			}
			old, err := tx.ReadCatalog(ctx, shop.ID)
			if err != nil {
				return WriteResult{}, err
			}
			next := *fresh
			// ImportCatalog sets the shop's currency from the snapshot, and
			// the catalog read has none: it would reset the shop to USD.
			next.Currency = cur.Currency
			if next.DeliveryZones == nil {
				next.DeliveryZones = old.DeliveryZones
			}
			if next.Markets == nil {
				next.Markets = old.Markets
			}
			if err := tx.ImportCatalog(ctx, shop.ID, &next); err != nil {
				return WriteResult{}, err
			}
			out = diffCatalog(old, &next)
			if out.ShippingTestsFlagged, err = flagZones(ctx, tx, shop.ID, &next); err != nil {
				return WriteResult{}, err
			}
			return WriteResult{ResourceID: fmt.Sprint(shop.ID)}, nil
		})
	if errors.Is(err, errUninstalledMeanwhile) {
		return CatalogRefresh{Skipped: err.Error()}, nil
	}
	if err != nil {
		return CatalogRefresh{}, wrapInstall("RefreshCatalog", shop, err)
	}
	return out, nil
}

// diffCatalog counts next and what changed since old.
func diffCatalog(old, next *CatalogSnapshot) CatalogRefresh {
	r := CatalogRefresh{Products: len(next.Products), Collections: len(next.Collections), Themes: len(next.Themes),
		Zones: len(next.DeliveryZones), Markets: len(next.Markets)}
	for _, z := range next.DeliveryZones {
		if z.LiftRates {
			r.ZonesWithLiftRates++
		}
	}
	before := map[string]Variant{}
	products := map[string]bool{}
	for _, p := range old.Products {
		products[p.ID] = true
		for _, v := range p.Variants {
			before[v.ID] = v
		}
	}
	seen := map[string]bool{}
	for _, p := range next.Products {
		if products[p.ID] {
			seen[p.ID] = true
		} else {
			r.ProductsAdded++
		}
		for _, v := range p.Variants {
			r.Variants++
			was, ok := before[v.ID]
			if !ok {
				r.VariantsAdded++
				continue
			}
			delete(before, v.ID)
			if !sameAmount(was.Price, v.Price) {
				r.PricesChanged++
			}
			if !sameAmount(was.Cost, v.Cost) {
				r.CostsChanged++
			}
		}
	}
	r.ProductsRemoved, r.VariantsRemoved = len(products)-len(seen), len(before)
	collections := map[string]bool{}
	for _, c := range old.Collections {
		collections[c.ID] = true
	}
	for _, c := range next.Collections {
		if collections[c.ID] {
			delete(collections, c.ID)
		} else {
			r.CollectionsAdded++
		}
	}
	r.CollectionsRemoved = len(collections)
	return r
}

// sameAmount compares decimal strings by value: the mirror gives back
// what was written, but "19.9" and "19.90" are one price. An unknown cost
// ("") equals only itself. Amounts are read as everywhere else
// (money.Parse: plain decimals, within what storage holds).
func sameAmount(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := money.Parse(a)
	y, errB := money.Parse(b)
	return errA == nil && errB == nil && x.Equal(y)
}
