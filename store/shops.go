package store

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/liftab/lift/experiment"
)

const shopColumns = `id, domain, name, timezone, currency, api_enabled, plan, features, subscription_active,
	billing_cap_reached, allowance_exhausted, annual_billing, raised_product_limit, carrier_service,
	installed_at, uninstalled_at, analytics_measurement_id`

type scanner interface{ Scan(dest ...any) error }

func scanShop(row scanner) (*experiment.Shop, error) {
	var s experiment.Shop
	err := row.Scan(&s.ID, &s.Domain, &s.Name, &s.Timezone, &s.Currency, &s.APIEnabled, &s.Plan, &s.Features,
		&s.SubscriptionActive, &s.BillingCapReached, &s.AllowanceExhausted, &s.AnnualBilling,
		&s.RaisedProductLimit, &s.CarrierService, &s.InstalledAt, &s.UninstalledAt, &s.AnalyticsMeasurementID)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// CreateShop installs a shop under its normalised domain. Returns
// KindConflict shop_exists when the domain is taken, in any spelling.
func (db *DB) CreateShop(ctx context.Context, s experiment.Shop) (*experiment.Shop, error) {
	s.Domain = experiment.NormalizeShopDomain(s.Domain)
	s.Timezone, s.Currency, s.Plan = cmp.Or(s.Timezone, "UTC"), cmp.Or(s.Currency, "USD"), cmp.Or(s.Plan, "growth")
	if s.Features == nil {
		s.Features = []string{}
	}
	var out *experiment.Shop
	_, err := db.Write(ctx, experiment.WriteMeta{Action: "shop.create", ResourceType: "shop"}, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) {
		row := tx.tx.QueryRow(ctx, `INSERT INTO shops (domain, name, timezone, currency, plan, features,
			raised_product_limit, carrier_service, annual_billing, installed_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $10) RETURNING `+shopColumns,
			s.Domain, s.Name, s.Timezone, s.Currency, s.Plan, s.Features, s.RaisedProductLimit, s.CarrierService,
			s.AnnualBilling, tx.now)
		var err error
		if out, err = scanShop(row); err != nil {
			if isUniqueViolation(err) {
				return experiment.WriteResult{}, experiment.Errorf(experiment.KindConflict, "shop_exists", "a shop with domain %s exists", s.Domain)
			}
			return experiment.WriteResult{}, err
		}
		return experiment.WriteResult{ShopID: out.ID, ResourceID: strconv.FormatInt(out.ID, 10)}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store.CreateShop %s: %w", s.Domain, err)
	}
	return out, nil
}

// FindShopByDomain finds the shop of domain in any spelling (see
// experiment.NormalizeShopDomain). Returns KindNotFound shop_not_found when
// no shop has it.
func (db *DB) FindShopByDomain(ctx context.Context, domain string) (*experiment.Shop, error) {
	domain = experiment.NormalizeShopDomain(domain)
	s, err := scanShop(db.pool.QueryRow(ctx, `SELECT `+shopColumns+` FROM shops WHERE domain = $1`, domain))
	if err != nil {
		return nil, fmt.Errorf("store.FindShopByDomain %s: %w", domain, notFound(err, "shop_not_found", "no shop %s", domain))
	}
	return s, nil
}

// FindShopByID returns KindNotFound shop_not_found when absent.
func (db *DB) FindShopByID(ctx context.Context, id int64) (*experiment.Shop, error) {
	s, err := scanShop(db.pool.QueryRow(ctx, `SELECT `+shopColumns+` FROM shops WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("store.FindShopByID %d: %w", id, notFound(err, "shop_not_found", "no shop %d", id))
	}
	return s, nil
}

// ShopUpdate holds the shop fields to change; nil means unchanged.
type ShopUpdate struct {
	Name                   *string
	Timezone               *string
	Currency               *string
	APIEnabled             *bool
	Plan                   *string
	Features               *[]string
	SubscriptionActive     *bool
	BillingCapReached      *bool
	AllowanceExhausted     *bool
	AnnualBilling          *bool
	RaisedProductLimit     *bool
	CarrierService         *bool
	Uninstalled            *bool // true uninstalls (tokens stop working); false reinstalls
	AnalyticsMeasurementID *string
}

// UpdateShop applies upd to the shop and returns it.
func (db *DB) UpdateShop(ctx context.Context, id int64, upd ShopUpdate) (*experiment.Shop, error) {
	var out *experiment.Shop
	_, err := db.Write(ctx, experiment.WriteMeta{ShopID: id, Action: "shop.update", ResourceType: "shop"}, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) {
		var uninstalledAt any = nil
		keepUninstall := upd.Uninstalled == nil
		if upd.Uninstalled != nil && *upd.Uninstalled {
			uninstalledAt = tx.now
		}
		row := tx.tx.QueryRow(ctx, `UPDATE shops SET
			name = COALESCE($2, name), timezone = COALESCE($3, timezone), currency = COALESCE($4, currency),
			api_enabled = COALESCE($5, api_enabled), plan = COALESCE($6, plan), features = COALESCE($7, features),
			subscription_active = COALESCE($8, subscription_active), billing_cap_reached = COALESCE($9, billing_cap_reached),
			allowance_exhausted = COALESCE($10, allowance_exhausted), annual_billing = COALESCE($11, annual_billing),
			raised_product_limit = COALESCE($12, raised_product_limit), carrier_service = COALESCE($13, carrier_service),
			uninstalled_at = CASE WHEN $14 THEN uninstalled_at ELSE $15::timestamptz END,
			updated_at = $16, analytics_measurement_id = COALESCE($17, analytics_measurement_id)
			WHERE id = $1 RETURNING `+shopColumns,
			id, upd.Name, upd.Timezone, upd.Currency, upd.APIEnabled, upd.Plan, upd.Features, upd.SubscriptionActive,
			upd.BillingCapReached, upd.AllowanceExhausted, upd.AnnualBilling, upd.RaisedProductLimit, upd.CarrierService,
			keepUninstall, uninstalledAt, tx.now, upd.AnalyticsMeasurementID)
		var err error
		if out, err = scanShop(row); err != nil {
			return experiment.WriteResult{}, notFound(err, "shop_not_found", "no shop %d", id)
		}
		return experiment.WriteResult{ResourceID: strconv.FormatInt(id, 10)}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store.UpdateShop %d: %w", id, err)
	}
	return out, nil
}
