package platform

import (
	"context"
	"slices"

	"github.com/liftab/lift/experiment"
)

// Operation names of a release, for Fake.Fail.
const (
	OpDeleteDuplicates = "ProductVariantsBulkDelete"
	OpDeleteDiscount   = "DiscountAutomaticDelete"
)

// ReleaseTest implements experiment.Platform: it deletes t's duplicate
// variants and its offer discounts, found by the marks the launch gave
// them. What is already gone is not listed, so a release run again
// deletes nothing.
func (c *Client) ReleaseTest(ctx context.Context, shop *experiment.Shop, t *experiment.Test) (experiment.ReleaseReport, error) {
	var rep experiment.ReleaseReport
	token, err := c.tokenFor(ctx, shop)
	if err != nil {
		return rep, err
	}
	kinds := t.BundledTypes()
	if slices.Contains(kinds, experiment.TypePrice) {
		if rep.DuplicateVariants, err = c.deleteDuplicates(ctx, shop.Domain, token, t); err != nil {
			return rep, err
		}
	}
	if slices.Contains(kinds, experiment.TypeOffer) {
		if rep.Discounts, err = c.deleteDiscounts(ctx, shop.Domain, token, t); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// deleteDuplicates deletes t's duplicate variants, a call per product (the
// mutation takes one product's), and counts them.
func (c *Client) deleteDuplicates(ctx context.Context, domain, token string, t *experiment.Test) (int, error) {
	dups, err := c.testDuplicates(ctx, domain, token, t)
	if err != nil {
		return 0, err
	}
	n := 0
	byProduct := map[string][]string{}
	var products []string
	for _, d := range dups {
		if len(byProduct[d.Product]) == 0 {
			products = append(products, d.Product)
		}
		byProduct[d.Product] = append(byProduct[d.Product], d.ID)
	}
	for _, p := range products {
		if err := c.mutate(ctx, domain, token, "delete duplicate variants", OpDeleteDuplicates,
			`mutation ProductVariantsBulkDelete($productId: ID!, $variantsIds: [ID!]!) {
  productVariantsBulkDelete(productId: $productId, variantsIds: $variantsIds) { product { id } userErrors { field message } } }`,
			map[string]any{"productId": p, "variantsIds": byProduct[p]}, "productVariantsBulkDelete"); err != nil {
			return n, err
		}
		n += len(byProduct[p])
	}
	return n, nil
}

// deleteDiscounts deletes t's offer discounts and counts them.
func (c *Client) deleteDiscounts(ctx context.Context, domain, token string, t *experiment.Test) (int, error) {
	ids, err := c.offerDiscounts(ctx, domain, token, t)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if err := c.mutate(ctx, domain, token, "delete offer discount", OpDeleteDiscount,
			`mutation DiscountAutomaticDelete($id: ID!) {
  discountAutomaticDelete(id: $id) { deletedAutomaticDiscountId userErrors { field message } } }`,
			map[string]any{"id": id}, "discountAutomaticDelete"); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
