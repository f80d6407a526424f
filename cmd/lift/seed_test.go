package main

import (
	"context"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/store"
)

func TestSeedShop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testDB(t)
	demo, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	shop, created, err := seedShop(ctx, db, "seeded.myshopify.com", demo)
	if err != nil || !created || !shop.APIEnabled || !shop.HasFeature("price") {
		t.Fatalf("seed = %+v, %v, %v", shop, created, err)
	}
	// A merchant's own catalog replaces the demo one, currency included.
	own, err := store.ParseCatalog([]byte(`{"currency":"EUR","products":[{"id":"gid://shopify/Product/1","title":"Mug",
		"variants":[{"id":"gid://shopify/ProductVariant/2","title":"Blue","price":"12.50","cost":"3.10"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	shop, created, err = seedShop(ctx, db, "seeded.myshopify.com", own)
	if err != nil || created || shop.Currency != "EUR" {
		t.Fatalf("reseed = %+v, %v, %v", shop, created, err)
	}
	v, err := db.Catalog().Lookup(ctx, shop.ID, experiment.CatalogRefs{
		Products: []string{"gid://shopify/Product/1", "gid://shopify/Product/8101"},
		Variants: []string{"gid://shopify/ProductVariant/2"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Products) != 1 || v.Variants["gid://shopify/ProductVariant/2"].Cost != "3.10" {
		t.Fatalf("catalog after reseed = %+v", v)
	}
	if s, err := db.FindShopByDomain(ctx, "seeded.myshopify.com"); err != nil || s.Currency != "EUR" {
		t.Fatalf("shop = %+v, %v; want currency EUR", s, err)
	}
}
