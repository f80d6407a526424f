package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/liftab/lift/experiment"
)

// InstallRepo is the install lifecycle's repository
// (experiment.InstallRepository): shops with their sealed platform token,
// scopes and webhook subscriptions, and the OAuth state nonces.
type InstallRepo struct{ *DB }

var _ experiment.InstallRepository = InstallRepo{}

// installTx is the unit of work seen as an experiment.InstallTx. Its
// ImportCatalog takes the platform's snapshot, not a catalog file.
type installTx struct{ *Tx }

var _ experiment.InstallTx = installTx{}

// Write is DB.Write with the transaction seen as an experiment.InstallTx.
func (r InstallRepo) Write(ctx context.Context, meta experiment.WriteMeta,
	fn func(ctx context.Context, tx experiment.InstallTx) (experiment.WriteResult, error)) (experiment.WriteResult, error) {
	return r.DB.Write(ctx, meta, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) { return fn(ctx, installTx{tx}) })
}

// FindAccessToken returns the shop's sealed platform access token, or
// KindNotFound access_token_not_found.
func (r InstallRepo) FindAccessToken(ctx context.Context, shopID int64) ([]byte, error) {
	var sealed []byte
	err := r.pool.QueryRow(ctx, `SELECT access_token_sealed FROM shops WHERE id = $1`, shopID).Scan(&sealed)
	if err == nil && sealed == nil {
		return nil, experiment.Errorf(experiment.KindNotFound, "access_token_not_found", "shop %d has no platform token", shopID)
	}
	if err != nil {
		return nil, fmt.Errorf("store.FindAccessToken %d: %w", shopID, notFound(err, "shop_not_found", "no shop %d", shopID))
	}
	return sealed, nil
}

// NewestSealedTokens returns up to limit shops' sealed platform tokens,
// the most recently installed first, keyed by shop id.
func (r InstallRepo) NewestSealedTokens(ctx context.Context, limit int) (map[int64][]byte, error) {
	rows, err := r.pool.Query(ctx, `SELECT id, access_token_sealed FROM shops WHERE access_token_sealed IS NOT NULL
		ORDER BY installed_at DESC NULLS LAST, id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("store.NewestSealedTokens: %w", err)
	}
	out := map[int64][]byte{}
	for rows.Next() {
		var id int64
		var sealed []byte
		if err := rows.Scan(&id, &sealed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store.NewestSealedTokens: %w", err)
		}
		out[id] = sealed
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store.NewestSealedTokens: %w", err)
	}
	return out, nil
}

// SaveInstallState keeps a nonce, and drops the expired ones.
func (tx installTx) SaveInstallState(ctx context.Context, s experiment.InstallState) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM install_states WHERE expires_at < $1`, tx.now); err != nil {
		return fmt.Errorf("store.SaveInstallState: %w", err)
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO install_states (nonce, domain, expires_at, created_at) VALUES ($1, $2, $3, $4)`,
		s.Nonce, experiment.NormalizeShopDomain(s.Domain), s.ExpiresAt, tx.now)
	if err != nil {
		return fmt.Errorf("store.SaveInstallState %s: %w", s.Domain, err)
	}
	return nil
}

// ConsumeInstallState deletes the nonce if it was issued for domain and
// has not expired; KindNotFound install_state_not_found otherwise.
func (tx installTx) ConsumeInstallState(ctx context.Context, domain, nonce string, now time.Time) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM install_states WHERE nonce = $1 AND domain = $2 AND expires_at >= $3`,
		nonce, experiment.NormalizeShopDomain(domain), now)
	if err != nil {
		return fmt.Errorf("store.ConsumeInstallState %s: %w", domain, err)
	}
	if tag.RowsAffected() == 0 {
		return experiment.Errorf(experiment.KindNotFound, "install_state_not_found", "no live install state for %s", domain)
	}
	return nil
}

// InstallShop creates the shop, or reinstalls it: uninstalled_at cleared
// (its API tokens work again), installed_at now, name, time zone, token,
// scopes and subscriptions refreshed; carrier_service set when this
// install's carrier service was taken (never cleared). Plan attributes are
// set only on a new shop.
func (tx installTx) InstallShop(ctx context.Context, in experiment.ShopInstall) (*experiment.Shop, error) {
	subs, err := json.Marshal(in.Webhooks)
	if err != nil {
		return nil, fmt.Errorf("store.InstallShop: %w", err)
	}
	features := in.Features
	if features == nil {
		features = []string{}
	}
	scopes := in.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	row := tx.tx.QueryRow(ctx, `INSERT INTO shops (domain, name, timezone, currency, features, raised_product_limit,
			api_enabled, access_token_sealed, access_scopes, webhook_subscriptions, carrier_service, installed_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12, $11, $11, $11)
		ON CONFLICT (domain) DO UPDATE SET name = COALESCE(NULLIF(EXCLUDED.name, ''), shops.name),
			carrier_service = shops.carrier_service OR EXCLUDED.carrier_service,
			timezone = EXCLUDED.timezone, access_token_sealed = EXCLUDED.access_token_sealed,
			access_scopes = EXCLUDED.access_scopes, webhook_subscriptions = EXCLUDED.webhook_subscriptions,
			installed_at = CASE WHEN shops.uninstalled_at IS NULL THEN shops.installed_at ELSE EXCLUDED.installed_at END,
			uninstalled_at = NULL, updated_at = EXCLUDED.updated_at
		RETURNING `+shopColumns,
		experiment.NormalizeShopDomain(in.Domain), in.Info.Name, cmp.Or(in.Info.Timezone, "UTC"), cmp.Or(in.Info.Currency, "USD"),
		features, in.RaisedProductLimit, in.APIEnabled, in.SealedToken, scopes, subs, tx.now, in.CarrierService)
	s, err := scanShop(row)
	if err != nil {
		return nil, fmt.Errorf("store.InstallShop %s: %w", in.Domain, err)
	}
	return s, nil
}

// ImportCatalog replaces the shop's catalog mirror with the platform's
// snapshot, as a catalog file import does.
func (tx installTx) ImportCatalog(ctx context.Context, shopID int64, c *experiment.CatalogSnapshot) error {
	f := &CatalogFile{Currency: cmp.Or(c.Currency, "USD"), Collections: c.Collections, Themes: c.Themes,
		DeliveryZones: c.DeliveryZones, Markets: c.Markets}
	for _, p := range c.Products {
		f.Products = append(f.Products, CatalogProduct{Product: p.Product, Variants: p.Variants})
	}
	return importCatalog(ctx, tx.tx, shopID, f)
}

// ClearInstall forgets the platform token, scopes and subscriptions and
// empties the catalog mirror (stale from now on; a reinstall syncs it).
func (tx installTx) ClearInstall(ctx context.Context, shopID int64) error {
	if _, err := tx.tx.Exec(ctx, `UPDATE shops SET access_token_sealed = NULL, access_scopes = '{}',
		webhook_subscriptions = '[]', analytics_measurement_id = '', updated_at = $2 WHERE id = $1`, shopID, tx.now); err != nil {
		return fmt.Errorf("store.ClearInstall %d: %w", shopID, err)
	}
	for _, table := range []string{"catalog_delivery_rates", "catalog_delivery_zones", "catalog_variants",
		"catalog_products", "catalog_collections", "catalog_themes", "catalog_markets"} {
		if _, err := tx.tx.Exec(ctx, "DELETE FROM "+table+" WHERE shop_id = $1", shopID); err != nil {
			return fmt.Errorf("store.ClearInstall %d: %w", shopID, err)
		}
	}
	return nil
}
