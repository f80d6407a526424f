package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/experiment/experimenttest"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// TestServiceSuite runs experiment.Service's use-case suite on Postgres, the
// same cases experiment's tests run on the in-memory fake.
func TestServiceSuite(t *testing.T) {
	t.Parallel()
	experimenttest.Run(t, postgresBackend)
}

var suiteShops atomic.Int64

func postgresBackend(t *testing.T, now experiment.Clock) experimenttest.Backend {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: lifttest.PostgresURL(t), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	setPlan := func(t *testing.T, shop *experiment.Shop, p experimenttest.Plan) {
		t.Helper()
		yes := true
		features := append([]string{}, p.Features...)
		if _, err := db.UpdateShop(ctx, shop.ID, store.ShopUpdate{APIEnabled: &yes, Features: &features,
			SubscriptionActive: &p.SubscriptionActive, CarrierService: &p.CarrierService}); err != nil {
			t.Fatal(err)
		}
	}
	return experimenttest.Backend{
		Repo: store.Experiments{DB: db},
		NewShop: func(t *testing.T, p experimenttest.Plan) *experiment.Shop {
			t.Helper()
			s, err := db.CreateShop(ctx, experiment.Shop{Domain: fmt.Sprintf("suite-%d.myshopify.com", suiteShops.Add(1)), Name: "Suite"})
			if err != nil {
				t.Fatal(err)
			}
			setPlan(t, s, p)
			f, err := store.ParseCatalog(catalogdata.Demo)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.ImportCatalog(ctx, s.ID, f); err != nil {
				t.Fatal(err)
			}
			if s, err = db.FindShopByID(ctx, s.ID); err != nil {
				t.Fatal(err)
			}
			return s
		},
		SetPlan: setPlan,
		Uninstall: func(t *testing.T, shop *experiment.Shop) {
			t.Helper()
			if _, err := db.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "shop.uninstall", ResourceType: "shop"},
				func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
					return experiment.WriteResult{}, tx.UninstallShop(ctx, shop.ID)
				}); err != nil {
				t.Fatal(err)
			}
		},
		Audit: func(t *testing.T, shopID int64) []experimenttest.AuditRecord {
			t.Helper()
			entries, err := db.FindAuditEntries(ctx, shopID, 1000)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]experimenttest.AuditRecord, len(entries))
			for i, e := range entries {
				out[i] = experimenttest.AuditRecord{ShopID: e.ShopID, Action: e.Action, Actor: e.Actor, ResourceID: e.ResourceID, Reason: e.Reason}
			}
			return out
		},
		SetLiftRates: func(t *testing.T, shop *experiment.Shop, zoneID string, on bool) {
			t.Helper()
			if _, err := db.Pool().Exec(ctx, `UPDATE catalog_delivery_zones SET lift_rates = $3 WHERE shop_id = $1 AND id = $2`,
				shop.ID, zoneID, on); err != nil {
				t.Fatal(err)
			}
		},
		Warnings: db,
	}
}
