package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

// installUnit runs each fn it is given in a unit of work of repo.
func installUnit(ctx context.Context, repo store.InstallRepo) func(fn func(tx experiment.InstallTx) error) error {
	return func(fn func(tx experiment.InstallTx) error) error {
		_, err := repo.Write(ctx, experiment.WriteMeta{Action: "test", ResourceType: "shop"},
			func(ctx context.Context, tx experiment.InstallTx) (experiment.WriteResult, error) {
				return experiment.WriteResult{}, fn(tx)
			})
		return err
	}
}

// TestInstallRepo: a state nonce is consumed once, only for its shop and
// before it expires; installing again reinstalls the same shop with the new
// token; clearing forgets the token and the mirror.
func TestInstallRepo(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	repo := store.InstallRepo{DB: db}
	ctx := context.Background()
	now := time.Now().UTC()
	write := installUnit(ctx, repo)
	for _, st := range []experiment.InstallState{{Nonce: "live", Domain: "a.myshopify.com", ExpiresAt: now.Add(time.Minute)},
		{Nonce: "old", Domain: "a.myshopify.com", ExpiresAt: now.Add(-time.Minute)}} {
		if err := write(func(tx experiment.InstallTx) error { return tx.SaveInstallState(ctx, st) }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, domain, nonce string
		found               bool
	}{
		{"OtherShop", "b.myshopify.com", "live", false},
		{"Expired", "a.myshopify.com", "old", false},
		{"Unknown", "a.myshopify.com", "nope", false},
		{"Live", "A.myshopify.com", "live", true},
		{"Reused", "a.myshopify.com", "live", false},
	} {
		err := write(func(tx experiment.InstallTx) error { return tx.ConsumeInstallState(ctx, tc.domain, tc.nonce, now) })
		if (err == nil) != tc.found || (err != nil && !experiment.IsNotFound(err)) {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}

	install := func(sealed string) *experiment.Shop {
		var s *experiment.Shop
		err := write(func(tx experiment.InstallTx) error {
			var err error
			s, err = tx.InstallShop(ctx, experiment.ShopInstall{Domain: "a.myshopify.com", Info: experiment.ShopInfo{Name: "A", Currency: "EUR"},
				SealedToken: []byte(sealed), Scopes: []string{"read_products"},
				Webhooks: []experiment.WebhookSubscription{{Topic: experiment.TopicOrdersCreate, ID: "w1"}}})
			if err != nil {
				return err
			}
			return tx.ImportCatalog(ctx, s.ID, &experiment.CatalogSnapshot{Currency: "EUR", Products: []experiment.CatalogProduct{{
				Product:  experiment.Product{ID: "gid://shopify/Product/1", Title: "P"},
				Variants: []experiment.Variant{{ID: "gid://shopify/ProductVariant/1", Price: "10.00", Cost: "4.00"}}}}})
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := install("sealed-1")
	if got, err := repo.FindAccessToken(ctx, first.ID); err != nil || string(got) != "sealed-1" {
		t.Fatalf("token %q %v", got, err)
	}
	if costs, _ := db.VariantCosts(ctx, first.ID, []string{"1"}); costs["1"] != 4 {
		t.Fatalf("mirror costs %v", costs)
	}
	if err := write(func(tx experiment.InstallTx) error { return tx.ClearInstall(ctx, first.ID) }); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.FindAccessToken(ctx, first.ID); !experiment.IsNotFound(err) {
		t.Fatalf("token after clear: %v", err)
	}
	if costs, _ := db.VariantCosts(ctx, first.ID, []string{"1"}); len(costs) != 0 {
		t.Fatalf("mirror after clear %v", costs)
	}
	uninstalled := true
	if _, err := db.UpdateShop(ctx, first.ID, store.ShopUpdate{Uninstalled: &uninstalled}); err != nil {
		t.Fatal(err)
	}
	again := install("sealed-2")
	if again.ID != first.ID || !again.Installed() || again.Name != "A" {
		t.Fatalf("reinstall %+v", again)
	}
	if got, _ := repo.FindAccessToken(ctx, first.ID); string(got) != "sealed-2" {
		t.Fatalf("token after reinstall %q", got)
	}
}
