package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// NoProductsError is RemoveProducts' refusal of a test that cannot carry
// products: it has no price part (shared.price.product_ids), no offer part
// (offers scoped by conditions.product_ids) and no visual_editor part
// (shared.visual_editor.product_ids). It unwraps to the
// domain's 422; Types are the test's change types, so a surface with its
// own names for them (the session API's experimentType) can say which test
// it refused.
type NoProductsError struct {
	Types []Type
	err   *Error
}

func (e *NoProductsError) Error() string { return e.err.Error() }
func (e *NoProductsError) Unwrap() error { return e.err }

// removeProducts takes the products ids out of t in place and reports
// whether anything changed: out of its price part (shared.price.product_ids
// and the priced variants of those products), out of its offer part (every
// offer's conditions.product_ids) and out of its visual_editor part
// (shared.visual_editor.product_ids). Ids t does not have change nothing.
func removeProducts(ctx context.Context, cat Catalog, t *Test, ids []string) (bool, error) {
	bundled := t.BundledTypes()
	hasPrice, hasOffer := slices.Contains(bundled, TypePrice), slices.Contains(bundled, TypeOffer)
	hasVisual := slices.Contains(bundled, TypeVisualEditor)
	if !hasPrice && !hasOffer && !hasVisual {
		return false, &NoProductsError{Types: bundled, err: Refuse("invalid_request", "productIds",
			"Only a test with a price, an offer or a visual_editor part has products to remove; this is a %s test.", t.Type)}
	}
	drop := map[string]bool{}
	for _, id := range ids {
		drop[id] = true
	}
	changed := false
	if hasPrice {
		c, err := removePriceProducts(ctx, cat, t, drop)
		if err != nil {
			return false, err
		}
		changed = c
	}
	if hasOffer {
		c, err := removeOfferProducts(t, drop)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	if hasVisual {
		c, err := removeVisualProducts(t, drop)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

// removeVisualProducts takes drop out of shared.visual_editor.product_ids.
// Unlike a price test or an offer, a content test may lose its last product:
// its edit never depended on them, so what is left is still a valid test.
func removeVisualProducts(t *Test, drop map[string]bool) (bool, error) {
	if isEmptyJSON(t.Shared[string(TypeVisualEditor)]) {
		return false, nil
	}
	list, err := readSharedProducts(t, TypeVisualEditor)
	if err != nil {
		return false, err
	}
	keep := without(list.ids, drop)
	if len(keep) == len(list.ids) {
		return false, nil
	}
	return true, list.write(t, keep)
}

// removePriceProducts takes drop out of t's price part. Variants are matched
// to products through the catalog mirror; a priced variant the catalog no
// longer knows stays, since nothing says which product it belonged to.
func removePriceProducts(ctx context.Context, cat Catalog, t *Test, drop map[string]bool) (bool, error) {
	list, err := readSharedProducts(t, TypePrice)
	if err != nil {
		return false, err
	}
	keep := without(list.ids, drop)
	if len(keep) == len(list.ids) {
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
	if err := list.write(t, keep); err != nil {
		return false, err
	}
	for i := range t.Groups {
		if t.Groups[i].Content, err = withoutVariants(t.Type, t.Groups[i].Content, gone); err != nil {
			return false, fmt.Errorf("experiment.RemoveProducts %d: group %d: %w", t.ID, t.Groups[i].Index, err)
		}
	}
	return true, nil
}

// sharedProducts is a part's shared.<part>.product_ids as stored, with the
// part's other fields, which a write keeps as they are.
type sharedProducts struct {
	part   Type
	fields map[string]json.RawMessage
	ids    []string
}

func readSharedProducts(t *Test, part Type) (sharedProducts, error) {
	l := sharedProducts{part: part}
	if err := json.Unmarshal(t.Shared[string(part)], &l.fields); err != nil {
		return l, fmt.Errorf("experiment.RemoveProducts %d: shared.%s: %w", t.ID, part, err)
	}
	if raw := l.fields["product_ids"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &l.ids); err != nil {
			return l, fmt.Errorf("experiment.RemoveProducts %d: shared.%s.product_ids: %w", t.ID, part, err)
		}
	}
	return l, nil
}

// write stores ids as the part's product_ids in t.
func (l sharedProducts) write(t *Test, ids []string) error {
	var err error
	if l.fields["product_ids"], err = json.Marshal(ids); err != nil {
		return err
	}
	t.Shared[string(l.part)], err = json.Marshal(l.fields)
	return err
}

// removeOfferProducts takes drop out of every offer's product condition in
// every group. An offer left without products would apply to the whole
// cart, so that is refused as a price test left without products is.
// Fields Lift does not read are kept as stored.
func removeOfferProducts(t *Test, drop map[string]bool) (bool, error) {
	changed := false
	for i := range t.Groups {
		g := &t.Groups[i]
		part, err := partContent(t.Type, TypeOffer, g.Content)
		if err != nil {
			return false, fmt.Errorf("experiment.RemoveProducts %d: group %d: %w", t.ID, g.Index, err)
		}
		if len(part["offers"]) == 0 {
			continue
		}
		var offers []map[string]json.RawMessage
		if err := json.Unmarshal(part["offers"], &offers); err != nil {
			return false, fmt.Errorf("experiment.RemoveProducts %d: group %d: offers: %w", t.ID, g.Index, err)
		}
		groupChanged := false
		for j, o := range offers {
			if isEmptyJSON(o["conditions"]) {
				continue
			}
			var cond map[string]json.RawMessage
			if err := json.Unmarshal(o["conditions"], &cond); err != nil {
				return false, fmt.Errorf("experiment.RemoveProducts %d: group %d: offer %d: %w", t.ID, g.Index, j, err)
			}
			var current []string
			if err := json.Unmarshal(cond["product_ids"], &current); err != nil && len(cond["product_ids"]) > 0 {
				return false, fmt.Errorf("experiment.RemoveProducts %d: group %d: offer %d: product_ids: %w", t.ID, g.Index, j, err)
			}
			keep := without(current, drop)
			if len(keep) == len(current) {
				continue
			}
			if len(keep) == 0 {
				return false, Refuse("invalid_request", "productIds",
					"Every offer of test group %q applies to at least one product; end the test instead of removing all of them.", g.Name)
			}
			if cond["product_ids"], err = json.Marshal(keep); err != nil {
				return false, err
			}
			if o["conditions"], err = json.Marshal(cond); err != nil {
				return false, err
			}
			groupChanged = true
		}
		if !groupChanged {
			continue
		}
		if part["offers"], err = json.Marshal(offers); err != nil {
			return false, err
		}
		if g.Content, err = withPart(t.Type, TypeOffer, g.Content, part); err != nil {
			return false, fmt.Errorf("experiment.RemoveProducts %d: group %d: %w", t.ID, g.Index, err)
		}
		changed = true
	}
	return changed, nil
}

// without is ids less those in drop, in their order.
func without(ids []string, drop map[string]bool) []string {
	keep := []string{}
	for _, id := range ids {
		if !drop[id] {
			keep = append(keep, id)
		}
	}
	return keep
}

// priceEntry is what removeProducts reads of a group's price entry.
type priceEntry struct {
	ProductVariantID string `json:"product_variant_id"`
}

// partContent is one change type's part of a group's content: the content
// itself, or its key of that type in a combined test; nil when absent.
func partContent(typ, part Type, content json.RawMessage) (map[string]json.RawMessage, error) {
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
	if isEmptyJSON(m[string(part)]) {
		return nil, nil
	}
	var p map[string]json.RawMessage
	err := json.Unmarshal(m[string(part)], &p)
	return p, err
}

// withPart returns content with its part of type part replaced by p.
func withPart(typ, part Type, content json.RawMessage, p map[string]json.RawMessage) (json.RawMessage, error) {
	b, err := json.Marshal(p)
	if err != nil || typ != TypeCombined {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(content, &m); err != nil {
		return nil, err
	}
	m[string(part)] = b
	return json.Marshal(m)
}

// variantsOf lists the priced variants of t that belong to the products in
// drop.
func variantsOf(ctx context.Context, cat Catalog, t *Test, drop map[string]bool) (map[string]bool, error) {
	var refs CatalogRefs
	for _, g := range t.Groups {
		p, err := partContent(t.Type, TypePrice, g.Content)
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
	p, err := partContent(typ, TypePrice, content)
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
	return withPart(typ, TypePrice, content, p)
}
