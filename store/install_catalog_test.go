package store_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// TestCatalogRefreshPorts: the mirror reads back whole (zones with their
// rates and markets too, so a refresh can carry them forward), importing
// what was read changes nothing, LockShop tells a shop with a platform
// token from one without, and the schedule lists only installed shops that
// have a token.
func TestCatalogRefreshPorts(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	repo := store.InstallRepo{DB: db}
	ctx := context.Background()
	write := installUnit(ctx, repo)
	install := func(domain string) *experiment.Shop {
		return lifttest.InstallShop(t, db, experiment.ShopInstall{Domain: domain, Info: experiment.ShopInfo{Name: domain, Currency: "EUR"},
			SealedToken: []byte("sealed")})
	}
	installed, gone := install("refresh-a.myshopify.com"), install("refresh-b.myshopify.com")
	lifttest.UninstallShop(t, db, gone.ID)
	tokenless, err := db.CreateShop(ctx, experiment.Shop{Domain: "refresh-c.myshopify.com"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ImportCatalog(ctx, installed.ID, f); err != nil {
		t.Fatal(err)
	}

	read := func(shopID int64) (shop *experiment.Shop, hasToken bool, c *experiment.CatalogSnapshot) {
		t.Helper()
		if err := write(func(tx experiment.InstallTx) (err error) {
			if shop, hasToken, err = tx.LockShop(ctx, shopID); err != nil {
				return err
			}
			c, err = tx.ReadCatalog(ctx, shopID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return shop, hasToken, c
	}
	shop, hasToken, first := read(installed.ID)
	variants, rates := 0, 0
	for _, p := range first.Products {
		variants += len(p.Variants)
	}
	for _, z := range first.DeliveryZones {
		rates += len(z.Rates)
	}
	if shop.ID != installed.ID || !hasToken || first.Currency != f.Currency || len(first.Products) != len(f.Products) || variants != 21 ||
		len(first.Collections) != len(f.Collections) || len(first.Themes) != len(f.Themes) ||
		len(first.DeliveryZones) != len(f.DeliveryZones) || rates != 3 || len(first.Markets) != len(f.Markets) ||
		!first.DeliveryZones[0].LiftRates {
		t.Fatalf("read back %s (token %v): %+v", shop.Domain, hasToken, first)
	}
	i := slices.IndexFunc(first.Products, func(p experiment.CatalogProduct) bool {
		return slices.ContainsFunc(p.Variants, func(v experiment.Variant) bool { return v.ID == "gid://shopify/ProductVariant/44001" })
	})
	if i < 0 || first.Products[i].Variants[0].Price != "28.00" || first.Products[i].Variants[0].Cost != "9.50" {
		t.Fatalf("variant 44001 not read back with its price and cost: %+v", first.Products)
	}
	if err := write(func(tx experiment.InstallTx) error { return tx.ImportCatalog(ctx, installed.ID, first) }); err != nil {
		t.Fatal(err)
	}
	if _, _, again := read(installed.ID); !reflect.DeepEqual(again, first) {
		t.Fatalf("importing what was read changed the mirror:\n%+v\nwant\n%+v", again, first)
	}

	if _, hasToken, c := read(tokenless.ID); hasToken || len(c.Products) != 0 {
		t.Fatalf("tokenless shop: token %v, catalog %+v", hasToken, c)
	}
	if err := write(func(tx experiment.InstallTx) error { _, _, err := tx.LockShop(ctx, 1<<40); return err }); !experiment.IsNotFound(err) {
		t.Fatalf("LockShop of no shop = %v, want not found", err)
	}
	ids, err := db.FindInstalledShopIDs(ctx)
	if err != nil || !slices.Equal(ids, []int64{installed.ID}) {
		t.Fatalf("installed shops %v %v, want [%d] (not the uninstalled %d nor the tokenless %d)", ids, err, installed.ID, gone.ID, tokenless.ID)
	}
}
