package platform

import "strings"

// The fake's inventory (stock.go): every variant's inventory item has the
// variant's number (gid://shopify/ProductVariant/N has
// gid://shopify/InventoryItem/N), and quantities are kept per variant and
// location.

type fakeStock struct {
	source    map[string]string           // duplicate variant → the variant it duplicates
	available map[string]map[string]int64 // variant → location → available
}

func newFakeStock() *fakeStock {
	return &fakeStock{source: map[string]string{}, available: map[string]map[string]int64{}}
}

// Duplicates returns the live duplicates Lift made of a variant.
func (f *Fake) Duplicates(domain, variantID string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shop(domain)
	var out []string
	for _, dup := range s.DuplicateVariants {
		for _, id := range dup {
			if s.stock.source[id] == variantID {
				out = append(out, id)
			}
		}
	}
	return out
}

// Stock is a variant's available quantity at a location; ok false when
// none was ever set.
func (f *Fake) Stock(domain, variantID, locationID string) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.shop(domain).stock.available[variantID][locationID]
	return n, ok
}

// InventoryItemOf is the inventory item of a variant, by the fake's rule.
func InventoryItemOf(variantID string) string {
	return "gid://shopify/InventoryItem/" + variantID[strings.LastIndex(variantID, "/")+1:]
}

// variantOfItem is the live variant (catalog or duplicate) whose inventory
// item is item; "" when none.
func (s *fakeShop) variantOfItem(item string) string {
	for _, p := range s.install.Catalog.Products {
		for _, v := range p.Variants {
			if InventoryItemOf(v.ID) == item {
				return v.ID
			}
		}
	}
	for _, dup := range s.DuplicateVariants {
		for _, id := range dup {
			if InventoryItemOf(id) == item {
				return id
			}
		}
	}
	return ""
}

// stockOperation answers a stock operation; ok false when op is not one.
func (s *fakeShop) stockOperation(op string, v map[string]any) (any, bool) {
	switch op {
	case OpDuplicateStock:
		item, _ := v["item"].(string)
		var inv any
		if id := s.variantOfItem(item); id != "" {
			inv = map[string]any{"variant": map[string]string{"id": id}}
		}
		all := s.duplicates()
		after, _ := v["after"].(string)
		start, end, info := fakePage(len(all), after)
		nodes := []any{}
		for _, id := range all[start:end] {
			nodes = append(nodes, map[string]any{"id": id, "inventoryItem": map[string]string{"id": InventoryItemOf(id)},
				"source": map[string]string{"value": s.stock.source[id]}})
		}
		return map[string]any{"inventoryItem": inv, "productVariants": map[string]any{"nodes": nodes, "pageInfo": info}}, true
	case OpSetStock:
		in, _ := v["input"].(map[string]any)
		qs, _ := in["quantities"].([]any)
		for _, x := range qs {
			q, _ := x.(map[string]any)
			item, _ := q["inventoryItemId"].(string)
			loc, _ := q["locationId"].(string)
			n, _ := q["quantity"].(float64)
			id := s.variantOfItem(item)
			if id == "" || loc == "" {
				return map[string]any{"inventorySetQuantities": map[string]any{
					"userErrors": refused("inventoryItemId", "the inventory item or location does not exist")}}, true
			}
			if s.stock.available[id] == nil {
				s.stock.available[id] = map[string]int64{}
			}
			s.stock.available[id][loc] = int64(n)
		}
		return map[string]any{"inventorySetQuantities": map[string]any{
			"inventoryAdjustmentGroup": map[string]string{"id": "gid://shopify/InventoryAdjustmentGroup/1"}, "userErrors": []any{}}}, true
	}
	return nil, false
}
