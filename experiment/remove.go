package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// removeProducts takes the products ids out of t's price part in place and
// reports whether anything changed. Variants are matched to products through
// the catalog mirror; a priced variant the catalog no longer knows stays,
// since nothing says which product it belonged to.
func removeProducts(ctx context.Context, cat Catalog, t *Test, ids []string) (bool, error) {
	if !slices.Contains(t.BundledTypes(), TypePrice) {
		return false, Refuse("invalid_request", "productIds", "Only a price test has products to remove; this is a %s test.", t.Type)
	}
	var shared map[string]json.RawMessage
	if err := json.Unmarshal(t.Shared[string(TypePrice)], &shared); err != nil {
		return false, fmt.Errorf("experiment.RemoveProducts %d: shared.price: %w", t.ID, err)
	}
	var current []string
	if err := json.Unmarshal(shared["product_ids"], &current); err != nil && len(shared["product_ids"]) > 0 {
		return false, fmt.Errorf("experiment.RemoveProducts %d: product_ids: %w", t.ID, err)
	}
	drop := map[string]bool{}
	for _, id := range ids {
		drop[id] = true
	}
	keep := []string{}
	for _, id := range current {
		if !drop[id] {
			keep = append(keep, id)
		}
	}
	if len(keep) == len(current) {
		return false, nil
	}
	if len(keep) == 0 {
		return false, Refuse("invalid_request", "productIds",
			"A price test needs at least one product; end the test instead of removing all of them.")
	}
	gone, err := variantsOf(ctx, cat, t, drop)
	if err != nil {
		return false, err
	}
	if shared["product_ids"], err = json.Marshal(keep); err != nil {
		return false, err
	}
	if t.Shared[string(TypePrice)], err = json.Marshal(shared); err != nil {
		return false, err
	}
	for i := range t.Groups {
		if t.Groups[i].Content, err = withoutVariants(t.Type, t.Groups[i].Content, gone); err != nil {
			return false, fmt.Errorf("experiment.RemoveProducts %d: group %d: %w", t.ID, t.Groups[i].Index, err)
		}
	}
	return true, nil
}

// priceEntry is what removeProducts reads of a group's price entry.
type priceEntry struct {
	ProductVariantID string `json:"product_variant_id"`
}

// priceContent is the price part of a group's content: the content itself,
// or its "price" key in a combined test.
func priceContent(typ Type, content json.RawMessage) (map[string]json.RawMessage, error) {
	if isEmptyJSON(content) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(content, &m); err != nil {
		return nil, err
	}
	if typ != TypeCombined {
		return m, nil
	}
	if isEmptyJSON(m[string(TypePrice)]) {
		return nil, nil
	}
	var p map[string]json.RawMessage
	err := json.Unmarshal(m[string(TypePrice)], &p)
	return p, err
}

// variantsOf lists the priced variants of t that belong to the products in
// drop.
func variantsOf(ctx context.Context, cat Catalog, t *Test, drop map[string]bool) (map[string]bool, error) {
	var refs CatalogRefs
	for _, g := range t.Groups {
		p, err := priceContent(t.Type, g.Content)
		if err != nil {
			return nil, fmt.Errorf("experiment.RemoveProducts %d: group %d: %w", t.ID, g.Index, err)
		}
		var entries []priceEntry
		_ = json.Unmarshal(p["prices"], &entries)
		for _, e := range entries {
			refs.Variants = append(refs.Variants, e.ProductVariantID)
		}
	}
	gone := map[string]bool{}
	if refs.empty() {
		return gone, nil
	}
	view, err := cat.Lookup(ctx, t.ShopID, refs)
	if err != nil {
		return nil, fmt.Errorf("experiment.RemoveProducts %d: %w", t.ID, err)
	}
	for id, v := range view.Variants {
		if drop[v.ProductID] {
			gone[id] = true
		}
	}
	return gone, nil
}

// withoutVariants returns content without the price entries of gone.
func withoutVariants(typ Type, content json.RawMessage, gone map[string]bool) (json.RawMessage, error) {
	p, err := priceContent(typ, content)
	if err != nil || p == nil || len(p["prices"]) == 0 {
		return content, err
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(p["prices"], &entries); err != nil {
		return nil, err
	}
	kept := []json.RawMessage{}
	for _, raw := range entries {
		var e priceEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, err
		}
		if !gone[e.ProductVariantID] {
			kept = append(kept, raw)
		}
	}
	if len(kept) == len(entries) {
		return content, nil
	}
	if p["prices"], err = json.Marshal(kept); err != nil {
		return nil, err
	}
	b, err := json.Marshal(p)
	if err != nil || typ != TypeCombined {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(content, &m); err != nil {
		return nil, err
	}
	m[string(TypePrice)] = b
	return json.Marshal(m)
}
