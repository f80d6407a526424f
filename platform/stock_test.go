package platform_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
)

// TestSyncDuplicateStock: a launched price test's duplicate follows its
// original's stock at the reported location; levels of other items, or
// without a quantity, set nothing; a refusal is a PlatformError.
func TestSyncDuplicateStock(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	const domain = "stock.myshopify.com"
	ctx := context.Background()
	fake.SetShop(domain, experiment.ShopInfo{}, experiment.CatalogSnapshot{Products: []experiment.CatalogProduct{{
		Product: experiment.Product{ID: "gid://shopify/Product/1"},
		Variants: []experiment.Variant{{ID: "gid://shopify/ProductVariant/11"}, {ID: "gid://shopify/ProductVariant/12"},
			{ID: "gid://shopify/ProductVariant/13"}, {ID: "gid://shopify/ProductVariant/14"}, {ID: "gid://shopify/ProductVariant/15"}}}}})
	// Duplicates of 13, 14 and 11, in that order: 11's is on the second
	// page of the fake's (pages of 2), so the sync must read past the first.
	test := &experiment.Test{ID: 5, Type: experiment.TypePrice, Groups: []experiment.Group{{Index: 1,
		Content: json.RawMessage(`{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/13"},
			{"product_variant_id":"gid://shopify/ProductVariant/14"},{"product_variant_id":"gid://shopify/ProductVariant/11"}]}`)}}}
	if err := c.PrepareLaunch(ctx, &experiment.Shop{ID: 1, Domain: domain}, test); err != nil {
		t.Fatal(err)
	}
	dups := fake.Duplicates(domain, "gid://shopify/ProductVariant/11")
	if len(dups) != 1 {
		t.Fatalf("duplicates %v", dups)
	}
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name  string
		level experiment.InventoryLevel
		set   int
	}{
		{"original's level, numeric ids", experiment.InventoryLevel{InventoryItemID: "11", LocationID: "3", Available: n(4)}, 1},
		{"global ids", experiment.InventoryLevel{InventoryItemID: "gid://shopify/InventoryItem/11", LocationID: "gid://shopify/Location/3", Available: n(9)}, 1},
		{"variant without duplicates", experiment.InventoryLevel{InventoryItemID: "12", LocationID: "3", Available: n(1)}, 0},
		{"unknown item", experiment.InventoryLevel{InventoryItemID: "999", LocationID: "3", Available: n(1)}, 0},
		{"no quantity", experiment.InventoryLevel{InventoryItemID: "11", LocationID: "3"}, 0},
	} {
		got, err := c.SyncDuplicateStock(ctx, domain, "", tc.level)
		if err != nil || got != tc.set {
			t.Fatalf("%s: set %d (%v), want %d", tc.name, got, err, tc.set)
		}
	}
	if q, ok := fake.Stock(domain, dups[0], "gid://shopify/Location/3"); !ok || q != 9 {
		t.Fatalf("duplicate stock %d %v, want the last level 9", q, ok)
	}
	fake.Fail(domain, platform.OpSetStock, http.StatusForbidden)
	_, err := c.SyncDuplicateStock(ctx, domain, "", experiment.InventoryLevel{InventoryItemID: "11", LocationID: "3", Available: n(2)})
	var pe *experiment.PlatformError
	if !errors.As(err, &pe) || pe.Status != http.StatusForbidden {
		t.Fatalf("refused sync = %v", err)
	}
}
