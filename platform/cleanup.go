package platform

import (
	"context"
	"fmt"

	"github.com/liftab/lift/experiment"
)

// liftResources is what Lift put on a shop, as one query reads it: script
// tags, webhook subscriptions and metafields in Lift's app namespace (all
// the app's own, deleted whole), and the variants it duplicated for price
// tests and the functions it deployed. Those last lists may hold the
// merchant's too (a search filter the platform does not know is ignored,
// and then every variant or discount of the shop matches), so Cleanup
// deletes only the ones that carry Lift's metafield (mark), and pages past
// the merchant's to find the rest of Lift's.
type liftResources struct {
	ScriptTags nodes `json:"scriptTags"`
	Webhooks   nodes `json:"webhookSubscriptions"`
	App        struct {
		ID         string `json:"id"`
		Metafields struct {
			Nodes []struct {
				Namespace string `json:"namespace"`
				Key       string `json:"key"`
			} `json:"nodes"`
		} `json:"metafields"`
	} `json:"appInstallation"`
	Variants                markedNodes `json:"productVariants"`
	CartTransforms          markedNodes `json:"cartTransforms"`
	DeliveryCustomizations  markedNodes `json:"deliveryCustomizations"`
	PaymentCustomizations   markedNodes `json:"paymentCustomizations"`
	AutomaticDiscountsOfApp markedNodes `json:"automaticDiscountNodes"`
}

type nodes struct {
	Nodes []struct {
		ID string `json:"id"`
	} `json:"nodes"`
}

// markedNodes is a page of a list that may hold the merchant's too.
type markedNodes struct {
	PageInfo pageInfo `json:"pageInfo"`
	Nodes    []struct {
		ID      string `json:"id"`
		Product struct {
			ID string `json:"id"`
		} `json:"product"` // a duplicate's
		Mark *mark `json:"mark"`
	} `json:"nodes"`
}

// lift is the ids Lift made.
func (n markedNodes) lift() []string {
	var out []string
	for _, x := range n.Nodes {
		if x.Mark.set() {
			out = append(out, x.ID)
		}
	}
	return out
}

// liftResourcesQuery reads a page of each kind, each marked kind from its
// own cursor: 722 points, under the platform's 1,000 a query (a page of
// 250 of each would ask over 2,000).
const liftResourcesQuery = `query LiftResources($variants: String, $transforms: String, $delivery: String, $payment: String, $discounts: String) {
  scriptTags(first: 50) { nodes { id } }
  webhookSubscriptions(first: 50) { nodes { id } }
  appInstallation { id metafields(namespace: "$app:lift", first: 50) { nodes { namespace key } } }
  productVariants(first: 100, after: $variants, query: "tag:lift-duplicate") { pageInfo { hasNextPage endCursor }
    nodes { id product { id } mark: metafield(namespace: "$app:lift", key: "source_variant_id") { value } } }
  cartTransforms(first: 25, after: $transforms) { pageInfo { hasNextPage endCursor }
    nodes { id mark: metafield(namespace: "$app:lift", key: "function") { value } } }
  deliveryCustomizations(first: 25, after: $delivery) { pageInfo { hasNextPage endCursor }
    nodes { id mark: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
  paymentCustomizations(first: 25, after: $payment) { pageInfo { hasNextPage endCursor }
    nodes { id mark: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
  automaticDiscountNodes(first: 50, after: $discounts) { pageInfo { hasNextPage endCursor }
    nodes { id mark: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
}`

// cleanupRounds bounds Cleanup's rounds (each deletes something or moves a
// cursor past a page of the merchant's): a deletion the platform ignores
// must not loop for ever.
const cleanupRounds = 200

// marked is each marked kind's page, by its cursor's variable.
func (r *liftResources) marked() map[string]markedNodes {
	return map[string]markedNodes{"variants": r.Variants, "transforms": r.CartTransforms,
		"delivery": r.DeliveryCustomizations, "payment": r.PaymentCustomizations, "discounts": r.AutomaticDiscountsOfApp}
}

// Cleanup implements experiment.InstallPlatform: it reads what Lift put on
// the shop (the webhook subscriptions too: the platform drops them at
// uninstall, but a reinstall starts from none either way) a page of each
// kind at a time and deletes what is Lift's, one mutation per kind (or per
// resource where the API deletes one at a time). A page left with none of
// Lift's is passed (its cursor moves on); a page it deleted from is read
// again. It ends when no page holds anything of Lift's and none follows.
// The first refusal stops it; running it again deletes what is left.
func (c *Client) Cleanup(ctx context.Context, domain, token string) (experiment.CleanupReport, error) {
	var rep experiment.CleanupReport
	cursors := map[string]any{}
	for range cleanupRounds {
		var res liftResources
		if err := c.graphQL(ctx, domain, token, "LiftResources", liftResourcesQuery, cursors, &res); err != nil {
			return rep, err
		}
		before := rep
		if err := c.deleteResources(ctx, domain, token, res, &rep); err != nil {
			return rep, err
		}
		moved := false
		for name, page := range res.marked() {
			if next, more := page.PageInfo.next(); len(page.lift()) == 0 && more {
				cursors[name], moved = next, true
			}
		}
		if rep == before && !moved {
			return rep, nil
		}
	}
	return rep, &Error{Op: "cleanup", Message: fmt.Sprintf("Lift's resources are still on the shop after %d rounds of deletes", cleanupRounds)}
}

func (c *Client) deleteResources(ctx context.Context, domain, token string, res liftResources, rep *experiment.CleanupReport) error {
	del := func(op, mutation string, vars map[string]any) error {
		return c.graphQL(ctx, domain, token, op, mutation, vars, nil)
	}
	for _, n := range res.ScriptTags.Nodes {
		if err := del("ScriptTagDelete", `mutation ScriptTagDelete($id: ID!) { scriptTagDelete(id: $id) { deletedScriptTagId userErrors { message } } }`,
			map[string]any{"id": n.ID}); err != nil {
			return err
		}
		rep.ScriptTags++
	}
	if len(res.App.Metafields.Nodes) > 0 {
		ids := make([]map[string]string, 0, len(res.App.Metafields.Nodes))
		for _, m := range res.App.Metafields.Nodes {
			ids = append(ids, map[string]string{"ownerId": res.App.ID, "namespace": m.Namespace, "key": m.Key})
		}
		if err := del("MetafieldsDelete", `mutation MetafieldsDelete($metafields: [MetafieldIdentifierInput!]!) { metafieldsDelete(metafields: $metafields) { deletedMetafields { key } userErrors { message } } }`,
			map[string]any{"metafields": ids}); err != nil {
			return err
		}
		rep.Metafields += len(ids)
	}
	for _, n := range res.Webhooks.Nodes {
		if err := del("WebhookSubscriptionDelete", `mutation WebhookSubscriptionDelete($id: ID!) { webhookSubscriptionDelete(id: $id) { deletedWebhookSubscriptionId userErrors { message } } }`,
			map[string]any{"id": n.ID}); err != nil {
			return err
		}
		rep.Webhooks++
	}
	byProduct := map[string][]string{}
	for _, v := range res.Variants.Nodes {
		if v.Mark.set() {
			byProduct[v.Product.ID] = append(byProduct[v.Product.ID], v.ID)
		}
	}
	for product, ids := range byProduct {
		if err := del("ProductVariantsBulkDelete", `mutation ProductVariantsBulkDelete($productId: ID!, $variantsIds: [ID!]!) { productVariantsBulkDelete(productId: $productId, variantsIds: $variantsIds) { userErrors { message } } }`,
			map[string]any{"productId": product, "variantsIds": ids}); err != nil {
			return err
		}
		rep.DuplicateVariants += len(ids)
	}
	for _, f := range []struct {
		op, mutation string
		list         markedNodes
	}{
		{"CartTransformDelete", `mutation CartTransformDelete($id: ID!) { cartTransformDelete(id: $id) { deletedId userErrors { message } } }`, res.CartTransforms},
		{"DeliveryCustomizationDelete", `mutation DeliveryCustomizationDelete($id: ID!) { deliveryCustomizationDelete(id: $id) { deletedId userErrors { message } } }`, res.DeliveryCustomizations},
		{"PaymentCustomizationDelete", `mutation PaymentCustomizationDelete($id: ID!) { paymentCustomizationDelete(id: $id) { deletedId userErrors { message } } }`, res.PaymentCustomizations},
		{"DiscountAutomaticDelete", `mutation DiscountAutomaticDelete($id: ID!) { discountAutomaticDelete(id: $id) { deletedAutomaticDiscountId userErrors { message } } }`, res.AutomaticDiscountsOfApp},
	} {
		for _, id := range f.list.lift() {
			if err := del(f.op, f.mutation, map[string]any{"id": id}); err != nil {
				return err
			}
			rep.Functions++
		}
	}
	return nil
}
