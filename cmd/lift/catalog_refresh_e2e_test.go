package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// refreshedCatalog is the harness shop's catalog after the merchant added
// product 104, repriced 102 (price and unit cost) and dropped collection 9.
func refreshedCatalog() experiment.CatalogSnapshot {
	var products []experiment.CatalogProduct
	for _, p := range []struct{ id, price, cost string }{{"101", "19.90", "7.50"}, {"102", "27.50", "11.00"},
		{"103", "40.00", "16.25"}, {"104", "55.00", "20.00"}} {
		products = append(products, experiment.CatalogProduct{
			Product: experiment.Product{ID: "gid://shopify/Product/" + p.id, Title: "Product " + p.id, Handle: "p-" + p.id},
			Variants: []experiment.Variant{{ID: "gid://shopify/ProductVariant/" + p.id, Title: "Default", SKU: "SKU-" + p.id,
				Price: p.price, Cost: p.cost}}})
	}
	return experiment.CatalogSnapshot{Products: products,
		Themes: []experiment.Theme{{ID: "gid://shopify/OnlineStoreTheme/5", Name: "Dawn", Role: "main"}}}
}

// priceTestOf104 is a price test of the product the merchant added after
// the install.
const priceTestOf104 = `{"type":"price","name":"New product","shared":{"price":{"product_ids":["gid://shopify/Product/104"]}},
	"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,
	"content":{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/104","price":{"amount":"49.00","currency":"EUR"}}]}}]}`

// TestCatalogRefresh runs InstallService.RefreshCatalog over real HTTP,
// Postgres and the fake platform: a refused catalog read leaves the
// install's mirror whole; a refresh brings in the product added since the
// install (a price test of it is then accepted where it was
// product_not_found), the new price and unit cost, drops the collection
// the platform no longer has, keeps the shop's currency and is audited;
// a shop uninstalled while its catalog is read, or before, is skipped.
func TestCatalogRefresh(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})
	shop, token := h.installForPriceTests(ctx)
	wantError(t, h.do("POST", "/v1/experiments", token, priceTestOf104, "Content-Type", "application/json"),
		422, "validation_error", "product_not_found", "shared.price.product_ids[0]")
	audited := func() int {
		return h.countWhere("SELECT count(*) FROM audit_log WHERE shop_id = $1 AND action = 'shop.catalog_refresh'", shop.ID)
	}
	svc := h.app.installService()
	h.fake.SetShop(h.domain, experiment.ShopInfo{Name: "Installed Shop", Currency: "EUR", Timezone: "Europe/Berlin"}, refreshedCatalog())

	// A refused read changes nothing, and says why, for the job to retry.
	h.fake.Fail(h.domain, "Products", 503)
	r, err := svc.RefreshCatalog(ctx, shop)
	var pe *experiment.PlatformError
	if !errors.As(err, &pe) || pe.Status != 503 || !strings.Contains(err.Error(), "the mirror is unchanged") {
		t.Fatalf("refresh with the catalog read refused = %+v, %v; want the platform's 503", r, err)
	}
	h.wantCatalog(shop.ID, 3)
	if n := audited(); n != 0 {
		t.Fatalf("a refused refresh was audited %d times", n)
	}
	h.fake.Heal(h.domain)

	r, err = svc.RefreshCatalog(ctx, shop)
	want := experiment.CatalogRefresh{Products: 4, Variants: 4, Themes: 1, ProductsAdded: 1, VariantsAdded: 1,
		CollectionsRemoved: 1, PricesChanged: 1, CostsChanged: 1}
	if err != nil || r != want {
		t.Fatalf("refresh = %+v, %v; want %+v", r, err, want)
	}
	for _, c := range []struct {
		name, sql string
		want      int
	}{
		{"new product", "SELECT count(*) FROM catalog_products WHERE shop_id = $1 AND id = 'gid://shopify/Product/104'", 1},
		{"repriced variant", "SELECT count(*) FROM catalog_variants WHERE shop_id = $1 AND id = 'gid://shopify/ProductVariant/102' AND price = 27.50 AND cost = 11.00", 1},
		{"variants", "SELECT count(*) FROM catalog_variants WHERE shop_id = $1", 4},
		{"collections", "SELECT count(*) FROM catalog_collections WHERE shop_id = $1", 0},
		{"main theme", "SELECT count(*) FROM catalog_themes WHERE shop_id = $1 AND role = 'main'", 1},
		{"currency kept", "SELECT count(*) FROM shops WHERE id = $1 AND currency = 'EUR'", 1},
		{"audit", "SELECT count(*) FROM audit_log WHERE shop_id = $1 AND action = 'shop.catalog_refresh' AND actor = 'test'", 1},
	} {
		if got := h.countWhere(c.sql, shop.ID); got != c.want {
			t.Errorf("%s: %d rows, want %d", c.name, got, c.want)
		}
	}
	if r := h.do("POST", "/v1/experiments", token, priceTestOf104, "Content-Type", "application/json"); r.status != 201 {
		t.Fatalf("price test of the new product after the refresh = %d %s", r.status, r.raw)
	}

	// The uninstall's cleanup clears the token while the catalog is read:
	// the write must not fill the mirror again.
	next := refreshedCatalog()
	next.Products = next.Products[:1]
	h.fake.SetShop(h.domain, experiment.ShopInfo{Name: "Installed Shop", Currency: "EUR"}, next)
	racing := *svc
	racing.Platform = uninstallDuringRead{InstallPlatform: svc.Platform, during: func() {
		h.exec(fmt.Sprintf("UPDATE shops SET access_token_sealed = NULL WHERE id = %d", shop.ID))
	}}
	if r, err := racing.RefreshCatalog(ctx, shop); err != nil || !strings.Contains(r.Skipped, "uninstalled while its catalog was read") {
		t.Fatalf("refresh raced by an uninstall = %+v, %v; want it skipped", r, err)
	}
	if n := h.countWhere("SELECT count(*) FROM catalog_variants WHERE shop_id = $1", shop.ID); n != 4 || audited() != 1 {
		t.Fatalf("the raced refresh wrote: %d variants, %d audit records", n, audited())
	}

	h.uninstall(shop, "uninstall-1")
	gone, err := h.app.DB.FindShopByID(ctx, shop.ID)
	if err != nil {
		t.Fatal(err)
	}
	reads := h.fake.Attempts(h.domain, "Products")
	if r, err := svc.RefreshCatalog(ctx, gone); err != nil || r.Skipped != "the shop has uninstalled Lift" || r.String() != "catalog refresh skipped: the shop has uninstalled Lift" {
		t.Fatalf("refresh of an uninstalled shop = %+v, %v", r, err)
	}
	if got := h.fake.Attempts(h.domain, "Products"); got != reads {
		t.Fatalf("the refresh of an uninstalled shop read the platform (%d product queries, %d before)", got, reads)
	}
	if audited() != 1 {
		t.Fatalf("%d refresh audit records, want the one of the refresh that ran", audited())
	}
}

// uninstallDuringRead runs during after the platform answered the catalog
// read, as an uninstall would between the read and the write.
type uninstallDuringRead struct {
	experiment.InstallPlatform
	during func()
}

func (u uninstallDuringRead) FetchCatalog(ctx context.Context, domain, token string) (*experiment.CatalogSnapshot, error) {
	c, err := u.InstallPlatform.FetchCatalog(ctx, domain, token)
	u.during()
	return c, err
}

// TestShopsRefreshCatalog: `lift shops refresh-catalog DOMAIN`, run as an
// operator would against the platform the shop is on, replaces the mirror
// and prints what changed, as the worker's handler does; a shop without a
// platform token is skipped, an unknown domain is an error naming it.
func TestShopsRefreshCatalog(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	shop := h.install()
	h.fake.SetShop(h.domain, experiment.ShopInfo{Name: "Installed Shop", Currency: "EUR"}, refreshedCatalog())
	// The command opens its own connections: point it at the harness's
	// platform, with the key that sealed the shop's token.
	platformFlags := []string{"--platform-url=" + h.app.PlatformClient.BaseURL,
		"--platform-token-key=" + base64.StdEncoding.EncodeToString(h.key)}
	run := func(domain string) (string, error) {
		t.Helper()
		out, _, err := h.command(newShopsCmd(), append([]string{"refresh-catalog", domain}, platformFlags...)...)
		return out, err
	}

	out, err := run(strings.ToUpper(h.domain))
	want := h.domain + ": catalog refreshed: 4 products (+1/-0), 4 variants (+1/-0; 1 prices and 1 unit costs changed), 0 collections (+0/-1), 1 themes, 0 delivery zones (0 with Lift rates), 0 markets\n"
	if err != nil || out != want {
		t.Fatalf("refresh-catalog = %q, %v; want %q", out, err, want)
	}
	if n := h.countWhere("SELECT count(*) FROM catalog_variants WHERE shop_id = $1 AND id = 'gid://shopify/ProductVariant/104' AND price = 55 AND cost = 20", shop.ID); n != 1 {
		t.Fatal("the new product's variant is not in the mirror")
	}
	if n := h.countWhere("SELECT count(*) FROM audit_log WHERE shop_id = $1 AND action = 'shop.catalog_refresh' AND actor = 'cli'", shop.ID); n != 1 {
		t.Fatalf("%d audit records of the CLI's refresh, want 1", n)
	}

	// The worker's handler runs the same refresh; a shop that is gone is
	// nothing to retry.
	if err := h.app.refreshCatalogJob(context.Background(), shop.ID); err != nil {
		t.Fatalf("the worker's refresh: %v", err)
	}
	if err := h.app.refreshCatalogJob(context.Background(), 1<<40); err != nil {
		t.Fatalf("the worker's refresh of no shop: %v", err)
	}
	if n := h.countWhere("SELECT count(*) FROM audit_log WHERE shop_id = $1 AND action = 'shop.catalog_refresh'", shop.ID); n != 2 {
		t.Fatalf("%d refresh audit records after the CLI's and the worker's, want 2", n)
	}

	tokenless, err := h.app.DB.CreateShop(context.Background(), experiment.Shop{Domain: lifttest.Name("cli-seeded-") + ".myshopify.com"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(tokenless.Domain); err != nil || out != tokenless.Domain+": catalog refresh skipped: no platform token to read the catalog with\n" {
		t.Fatalf("refresh-catalog of a shop without a token = %q, %v", out, err)
	}

	unknown := lifttest.Name("nobody-") + ".myshopify.com"
	if _, err := run(unknown); err == nil || err.Error() != "no shop "+unknown {
		t.Fatalf("refresh-catalog of an unknown shop = %v, want an error naming %s", err, unknown)
	}
}
