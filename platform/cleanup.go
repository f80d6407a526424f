package platform

import (
	"context"
	"fmt"

	"github.com/liftab/lift/experiment"
)

// liftResources is what Lift put on a shop, as one query reads it: script
// tags, webhook subscriptions and metafields in Lift's app namespace (all
// the app's own), and the variants it duplicated for price tests and the
// functions it deployed. Those last lists may hold the merchant's too (a
// search filter the platform does not know is ignored, and then every
// variant or discount of the shop matches), so Cleanup deletes only the
// ones that carry Lift's metafield (mark): never the merchant's.
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
	Variants struct {
		Nodes []struct {
			ID      string `json:"id"`
			Product struct {
				ID string `json:"id"`
			} `json:"product"`
			Mark *mark `json:"mark"`
		} `json:"nodes"`
	} `json:"productVariants"`
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

type markedNodes struct {
	Nodes []struct {
		ID   string `json:"id"`
		Mark *mark  `json:"mark"`
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

// liftResourcesQuery reads a page of each kind: 717 points, under the
// platform's 1,000 a query (a page of 250 of each would ask over 2,000).
// Cleanup reads again after deleting until a read finds nothing of Lift's.
const liftResourcesQuery = `query LiftResources {
  scriptTags(first: 50) { nodes { id } }
  webhookSubscriptions(first: 50) { nodes { id } }
  appInstallation { id metafields(namespace: "$app:lift", first: 50) { nodes { namespace key } } }
  productVariants(first: 100, query: "tag:lift-duplicate") { nodes { id product { id }
    mark: metafield(namespace: "$app:lift", key: "source_variant_id") { value } } }
  cartTransforms(first: 25) { nodes { id mark: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
  deliveryCustomizations(first: 25) { nodes { id mark: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
  paymentCustomizations(first: 25) { nodes { id mark: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
  automaticDiscountNodes(first: 50) { nodes { id mark: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
}`

// cleanupRounds bounds Cleanup's read-then-delete rounds: a deletion the
// platform ignores must not loop for ever.
const cleanupRounds = 20

// none: nothing of Lift's is left on the pages read.
func (r liftResources) none() bool {
	n := len(r.ScriptTags.Nodes) + len(r.Webhooks.Nodes) + len(r.App.Metafields.Nodes) +
		len(r.CartTransforms.lift()) + len(r.DeliveryCustomizations.lift()) + len(r.PaymentCustomizations.lift()) +
		len(r.AutomaticDiscountsOfApp.lift())
	for _, v := range r.Variants.Nodes {
		if v.Mark.set() {
			n++
		}
	}
	return n == 0
}

// Cleanup implements experiment.InstallPlatform: it reads what Lift put on
// the shop (the webhook subscriptions too: the platform drops them at
// uninstall, but a reinstall starts from none either way) a page of each
// kind at a time and deletes each, one mutation per kind (or per resource
// where the API deletes one at a time), until a read finds nothing. The
// first refusal stops it; running it again deletes what is left.
func (c *Client) Cleanup(ctx context.Context, domain, token string) (experiment.CleanupReport, error) {
	var rep experiment.CleanupReport
	for range cleanupRounds {
		var res liftResources
		if err := c.graphQL(ctx, domain, token, "LiftResources", liftResourcesQuery, nil, &res); err != nil {
			return rep, err
		}
		if res.none() {
			return rep, nil
		}
		if err := c.deleteResources(ctx, domain, token, res, &rep); err != nil {
			return rep, err
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
