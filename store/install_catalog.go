package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
)

// The catalog refresh's side of the install repository
// (experiment.InstallService.RefreshCatalog).

// FindInstalledShopIDs lists the shops Lift can read the platform for:
// installed, with a stored platform token. The catalog refresh's schedule
// asks once a slot; every shop is listed, none left for a later tick.
func (db *DB) FindInstalledShopIDs(ctx context.Context) ([]int64, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM shops
		WHERE uninstalled_at IS NULL AND access_token_sealed IS NOT NULL ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store.FindInstalledShopIDs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store.FindInstalledShopIDs: %w", err)
	}
	return ids, nil
}

// LockShop locks the shop's row for the rest of the transaction: an
// install (its upsert), an uninstall's ClearInstall and UninstallShop all
// write that row, so they wait for a refresh that holds it, and it for them.
func (tx installTx) LockShop(ctx context.Context, shopID int64) (*experiment.Shop, bool, error) {
	var hasToken bool
	err := tx.tx.QueryRow(ctx, `SELECT access_token_sealed IS NOT NULL FROM shops WHERE id = $1 FOR UPDATE`, shopID).Scan(&hasToken)
	if err != nil {
		return nil, false, fmt.Errorf("store.LockShop %d: %w", shopID, notFound(err, "shop_not_found", "no shop %d", shopID))
	}
	s, err := scanShop(tx.tx.QueryRow(ctx, `SELECT `+shopColumns+` FROM shops WHERE id = $1`, shopID))
	if err != nil {
		return nil, false, fmt.Errorf("store.LockShop %d: %w", shopID, err)
	}
	return s, hasToken, nil
}

// ReadCatalog reads the shop's whole catalog mirror, ordered by id.
func (tx installTx) ReadCatalog(ctx context.Context, shopID int64) (*experiment.CatalogSnapshot, error) {
	wrap := func(err error) error { return fmt.Errorf("store.ReadCatalog %d: %w", shopID, err) }
	c := &experiment.CatalogSnapshot{}
	if err := tx.tx.QueryRow(ctx, `SELECT currency FROM shops WHERE id = $1`, shopID).Scan(&c.Currency); err != nil {
		return nil, wrap(notFound(err, "shop_not_found", "no shop %d", shopID))
	}
	index := map[string]int{} // product id → its place in c.Products
	const all = ` ORDER BY id`
	err := each(ctx, tx.tx, selectProducts+all, shopID, into(scanProduct, func(p experiment.Product) {
		index[p.ID] = len(c.Products)
		c.Products = append(c.Products, experiment.CatalogProduct{Product: p})
	}))
	if err == nil {
		err = each(ctx, tx.tx, selectVariants+` ORDER BY product_id, id`, shopID, func(row pgx.Rows) error {
			v, err := scanVariant(row)
			if err != nil {
				return err
			}
			i, ok := index[v.ProductID]
			if !ok { // the foreign key forbids it; never file it under another product
				return fmt.Errorf("variant %s names product %s, which the mirror lacks", v.ID, v.ProductID)
			}
			c.Products[i].Variants = append(c.Products[i].Variants, v)
			return nil
		})
	}
	if err == nil {
		err = each(ctx, tx.tx, selectCollection+all, shopID, into(scanCollection, func(x experiment.Collection) { c.Collections = append(c.Collections, x) }))
	}
	if err == nil {
		err = each(ctx, tx.tx, selectThemes+all, shopID, into(scanTheme, func(x experiment.Theme) { c.Themes = append(c.Themes, x) }))
	}
	if err == nil {
		err = readZones(ctx, tx.tx, shopID, c)
	}
	if err == nil {
		err = each(ctx, tx.tx, selectMarkets+all, shopID, into(scanMarket, func(x experiment.Market) { c.Markets = append(c.Markets, x) }))
	}
	if err != nil {
		return nil, wrap(err)
	}
	return c, nil
}

// readZones reads the delivery zones with their rates into c: one row per
// rate, a zone without rates once with NULLs.
func readZones(ctx context.Context, q querier, shopID int64, c *experiment.CatalogSnapshot) error {
	return each(ctx, q, selectZoneRates+` ORDER BY z.id, r.id`, shopID, func(row pgx.Rows) error {
		z, rate, err := scanZoneRate(row)
		if err != nil {
			return err
		}
		if n := len(c.DeliveryZones); n == 0 || c.DeliveryZones[n-1].ID != z.ID {
			c.DeliveryZones = append(c.DeliveryZones, z)
		}
		if rate != nil {
			last := &c.DeliveryZones[len(c.DeliveryZones)-1]
			last.Rates = append(last.Rates, *rate)
		}
		return nil
	})
}

// each runs a query of one shop's rows and hands each row to scan.
func each(ctx context.Context, q querier, sql string, shopID int64, scan func(pgx.Rows) error) error {
	return scanEach(ctx, q, sql, scan, shopID)
}
