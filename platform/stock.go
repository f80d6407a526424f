package platform

import (
	"context"
	"strings"

	"github.com/liftab/lift/experiment"
)

// Keeping a price test's duplicate variants in stock with their originals
// (session document part 6.2, INVENTORY_LEVELS_UPDATE): a duplicate is a
// separate variant with its own inventory item, so a sale of the original
// (or a restock) would otherwise leave the duplicate's stock behind, and a
// visitor of the test group could buy what is sold out, or not buy what is
// back. Each duplicate carries a source_variant_id metafield (launch.go).

// Operation names of the stock sync, for Fake.Fail.
const (
	OpDuplicateStock = "DuplicateStock"
	OpSetStock       = "InventorySetQuantities"
)

// duplicateStockQuery reads the item's variant and a page of the shop's
// duplicates (2 + 3 + 250 × 3 = 755 points); SyncDuplicateStock pages on
// until it has seen every duplicate, so one past the first 250 is kept in
// stock too.
const duplicateStockQuery = `query DuplicateStock($item: ID!, $after: String) {
  inventoryItem(id: $item) { variant { id } }
  productVariants(first: 250, after: $after, query: "tag:lift-duplicate") {
    pageInfo { hasNextPage endCursor }
    nodes { id inventoryItem { id } source: metafield(namespace: "$app:lift", key: "source_variant_id") { value } } }
}`

type duplicateStock struct {
	InventoryItem *struct {
		Variant struct {
			ID string `json:"id"`
		} `json:"variant"`
	} `json:"inventoryItem"`
	Variants struct {
		PageInfo pageInfo `json:"pageInfo"`
		Nodes    []struct {
			ID            string `json:"id"`
			InventoryItem struct {
				ID string `json:"id"`
			} `json:"inventoryItem"`
			Source *mark `json:"source"`
		} `json:"nodes"`
	} `json:"productVariants"`
}

// SyncDuplicateStock implements experiment.InstallPlatform: it finds the
// variant of the level's inventory item and sets the available quantity of
// each of its duplicates at the same location to the reported one. Setting
// an absolute quantity makes a retried delivery harmless. Returns how many
// duplicates were set (0 when the variant has none).
func (c *Client) SyncDuplicateStock(ctx context.Context, domain, token string, l experiment.InventoryLevel) (int, error) {
	if l.Available == nil {
		return 0, nil
	}
	var quantities []map[string]any
	var after any
	for {
		var res duplicateStock
		if err := c.graphQL(ctx, domain, token, OpDuplicateStock, duplicateStockQuery,
			map[string]any{"item": gid("InventoryItem", l.InventoryItemID), "after": after}, &res); err != nil {
			return 0, renamed(err, "read duplicate variants")
		}
		if res.InventoryItem == nil || res.InventoryItem.Variant.ID == "" {
			return 0, nil // not a variant's item, or deleted meanwhile
		}
		for _, v := range res.Variants.Nodes {
			if v.Source != nil && v.Source.Value == res.InventoryItem.Variant.ID && v.InventoryItem.ID != "" {
				quantities = append(quantities, map[string]any{"inventoryItemId": v.InventoryItem.ID,
					"locationId": gid("Location", l.LocationID), "quantity": *l.Available})
			}
		}
		next, more := res.Variants.PageInfo.next()
		if !more {
			break
		}
		after = next
	}
	if len(quantities) == 0 {
		return 0, nil
	}
	err := c.mutate(ctx, domain, token, "copy stock to duplicate variants", OpSetStock,
		`mutation InventorySetQuantities($input: InventorySetQuantitiesInput!) {
  inventorySetQuantities(input: $input) { inventoryAdjustmentGroup { id } userErrors { field message } } }`,
		map[string]any{"input": map[string]any{"name": "available", "reason": "correction", "ignoreCompareQuantity": true,
			"quantities": quantities}}, "inventorySetQuantities")
	if err != nil {
		return 0, err
	}
	return len(quantities), nil
}

// gid is id as a global id of kind; webhooks carry numeric ids.
func gid(kind, id string) string {
	if strings.HasPrefix(id, "gid://") {
		return id
	}
	return "gid://shopify/" + kind + "/" + id
}
