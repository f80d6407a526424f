package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

// floorCatalog's collections tell a cheapest item apart from a first, a
// tie broken in numeric order from one broken in byte order, and a
// listed product the catalog lacks; its dearest price is a tie too.
const floorCatalog = `{"currency":"USD",
 "products":[
  {"id":"gid://shopify/Product/1","title":"Beanie","variants":[
   {"id":"gid://shopify/ProductVariant/9","title":"Oat","price":"12.00"},
   {"id":"gid://shopify/ProductVariant/10","title":"Charcoal","price":"12.0"},
   {"id":"gid://shopify/ProductVariant/11","title":"Red","price":"15.00"}]},
  {"id":"gid://shopify/Product/2","title":"Weekender","variants":[
   {"id":"gid://shopify/ProductVariant/3","title":"Large","price":"145.0"},
   {"id":"gid://shopify/ProductVariant/20","title":"One size","price":"145.00"}]},
  {"id":"gid://shopify/Product/3","title":"Sock","variants":[
   {"id":"gid://shopify/ProductVariant/30","title":"S/M","price":"22.00"}]}],
 "collections":[
  {"id":"gid://shopify/Collection/1","title":"Accessories","product_ids":["gid://shopify/Product/2","gid://shopify/Product/1","gid://shopify/Product/3"]},
  {"id":"gid://shopify/Collection/2","title":"Bags","product_ids":["gid://shopify/Product/2","gid://shopify/Product/404"]},
  {"id":"gid://shopify/Collection/3","title":"Empty"},
  {"id":"gid://shopify/Collection/4","title":"Gone","product_ids":["gid://shopify/Product/404"]}]}`

// floorShop is a shop whose catalog mirror holds floorCatalog.
func floorShop(t *testing.T) (*pgxpool.Pool, int64, *store.CatalogFile) {
	t.Helper()
	pool, shopID := testPool(t)
	f, err := store.ParseCatalog([]byte(floorCatalog))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ImportCatalog(context.Background(), pool, shopID, f); err != nil {
		t.Fatal(err)
	}
	return pool, shopID, f
}

// TestCatalogCollectionFloors: Postgres finds each collection's cheapest
// item itself, and finds what the domain's own reading of the same
// catalog (CatalogView.Cheapest, which the fakes answer with) finds.
func TestCatalogCollectionFloors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, shopID, f := floorShop(t)
	ids := []string{"gid://shopify/Collection/1", "gid://shopify/Collection/2", "gid://shopify/Collection/3",
		"gid://shopify/Collection/4", "gid://shopify/Collection/5"}
	got, err := store.Catalog{Q: pool}.Lookup(ctx, shopID, experiment.CatalogRefs{CollectionFloors: ids})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]experiment.Item{
		// 12.00 and 12.0 tie; "…/10" sorts before "…/9" byte by byte.
		"gid://shopify/Collection/1": {Product: experiment.Product{ID: "gid://shopify/Product/1", Title: "Beanie"},
			Variant: experiment.Variant{ID: "gid://shopify/ProductVariant/10", ProductID: "gid://shopify/Product/1", Title: "Charcoal", Price: "12.0"}},
		"gid://shopify/Collection/2": {Product: experiment.Product{ID: "gid://shopify/Product/2", Title: "Weekender"},
			Variant: experiment.Variant{ID: "gid://shopify/ProductVariant/20", ProductID: "gid://shopify/Product/2", Title: "One size", Price: "145.00"}},
	}
	if diff := cmp.Diff(want, got.Floors); diff != "" {
		t.Fatalf("floors mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(domainFloors(f, ids), got.Floors); diff != "" {
		t.Fatalf("Postgres and the domain disagree (-domain +postgres):\n%s", diff)
	}
}

// TestCatalogDearest: Postgres finds the shop's dearest item as the
// domain's CatalogView.FindDearest does, ties included, and none for a
// shop without a catalog.
func TestCatalogDearest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, shopID, f := floorShop(t)
	got, err := store.Catalog{Q: pool}.Lookup(ctx, shopID, experiment.CatalogRefs{Dearest: true})
	if err != nil {
		t.Fatal(err)
	}
	// 145.0 and 145.00 tie; "…/20" sorts before "…/3" byte by byte.
	want := experiment.Item{Product: experiment.Product{ID: "gid://shopify/Product/2", Title: "Weekender"},
		Variant: experiment.Variant{ID: "gid://shopify/ProductVariant/20", ProductID: "gid://shopify/Product/2", Title: "One size", Price: "145.00"}}
	if got.Dearest == nil {
		t.Fatal("no dearest item")
	}
	if diff := cmp.Diff(want, *got.Dearest); diff != "" {
		t.Fatalf("dearest mismatch (-want +got):\n%s", diff)
	}
	if x, _ := catalogView(f).FindDearest(); !cmp.Equal(x, *got.Dearest) {
		t.Fatalf("the domain finds %+v, Postgres %+v", x, *got.Dearest)
	}
	none, err := store.Catalog{Q: pool}.Lookup(ctx, shopID+1, experiment.CatalogRefs{Dearest: true})
	if err != nil || none.Dearest != nil {
		t.Fatalf("a shop without a catalog: %+v, %v", none.Dearest, err)
	}
}

// catalogView is the catalog file's products and variants as a view.
func catalogView(f *store.CatalogFile) *experiment.CatalogView {
	all := &experiment.CatalogView{Products: map[string]experiment.Product{}, Variants: map[string]experiment.Variant{},
		Collections: map[string]experiment.Collection{}}
	for _, c := range f.Collections {
		all.Collections[c.ID] = c
	}
	for _, p := range f.Products {
		all.Products[p.ID] = p.Product
		for _, v := range p.Variants {
			v.ProductID = p.ID
			all.Variants[v.ID] = v
		}
	}
	return all
}

// domainFloors is what CatalogView.Floor finds in the catalog file.
func domainFloors(f *store.CatalogFile, ids []string) map[string]experiment.Item {
	all := catalogView(f)
	out := map[string]experiment.Item{}
	for _, id := range ids {
		if x, ok := all.Floor(id); ok {
			out[id] = x
		}
	}
	return out
}

// TestImportCatalogKeepsEachVariant: the products and variants written in
// one statement a table read back as written, a variant without a unit
// cost without one, prices as the catalog spelt them; a price that is not
// a number fails the import, and the transaction it runs in (as every
// caller's does) keeps the mirror as it was.
func TestImportCatalogKeepsEachVariant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, shopID := testPool(t)
	f := &store.CatalogFile{Currency: "USD", Products: []store.CatalogProduct{
		{Product: experiment.Product{ID: "gid://shopify/Product/1", Title: "Tee", Handle: "tee"}, Variants: []experiment.Variant{
			{ID: "gid://shopify/ProductVariant/11", Title: "S", SKU: "TEE-S", Price: "28.00", Cost: "9.50"},
			{ID: "gid://shopify/ProductVariant/12", Title: "M", Price: "28.5"}}},
		{Product: experiment.Product{ID: "gid://shopify/Product/2", Title: "Cap"}}}}
	if err := store.ImportCatalog(ctx, pool, shopID, f); err != nil {
		t.Fatal(err)
	}
	got, err := store.Catalog{Q: pool}.Lookup(ctx, shopID, experiment.CatalogRefs{
		Products: []string{"gid://shopify/Product/1", "gid://shopify/Product/2"}, ProductVariants: []string{"gid://shopify/Product/1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]experiment.Variant{
		"gid://shopify/ProductVariant/11": {ID: "gid://shopify/ProductVariant/11", ProductID: "gid://shopify/Product/1", Title: "S", SKU: "TEE-S", Price: "28.00", Cost: "9.50"},
		"gid://shopify/ProductVariant/12": {ID: "gid://shopify/ProductVariant/12", ProductID: "gid://shopify/Product/1", Title: "M", Price: "28.5"},
	}
	if diff := cmp.Diff(want, got.Variants); diff != "" || len(got.Products) != 2 || got.Products["gid://shopify/Product/1"].Handle != "tee" {
		t.Fatalf("variants (-want +got):\n%s\nproducts %+v", diff, got.Products)
	}
	f.Products[1].Variants = []experiment.Variant{{ID: "gid://shopify/ProductVariant/21", Price: "twelve"}}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = store.ImportCatalog(ctx, tx, shopID, f)
	_ = tx.Rollback(ctx)
	if err == nil {
		t.Fatal("a price that is not a number was imported")
	}
	after, err := store.Catalog{Q: pool}.Lookup(ctx, shopID, experiment.CatalogRefs{ProductVariants: []string{"gid://shopify/Product/1"}})
	if err != nil || !cmp.Equal(want, after.Variants) {
		t.Fatalf("the mirror after a refused import: %+v (%v), want it as it was", after.Variants, err)
	}
}
