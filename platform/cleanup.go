package platform

import (
	"context"

	"github.com/liftab/lift/experiment"
)

// liftResources is what Lift put on a shop, as one query reads it: script
// tags, webhook subscriptions, metafields in Lift's app namespace, variants Lift duplicated for
// price tests (tagged lift-duplicate), and the functions it deployed.
type liftResources struct {
	ScriptTags nodes `json:"scriptTags"`
	Webhooks   nodes `json:"webhookSubscriptions"`
	App        struct {
		Metafields struct {
			Nodes []struct {
				OwnerID   string `json:"ownerId"`
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
		} `json:"nodes"`
	} `json:"productVariants"`
	CartTransforms          nodes `json:"cartTransforms"`
	DeliveryCustomizations  nodes `json:"deliveryCustomizations"`
	PaymentCustomizations   nodes `json:"paymentCustomizations"`
	AutomaticDiscountsOfApp nodes `json:"automaticDiscountNodes"`
}

type nodes struct {
	Nodes []struct {
		ID string `json:"id"`
	} `json:"nodes"`
}

const liftResourcesQuery = `query LiftResources {
  scriptTags(first: 250) { nodes { id } }
  webhookSubscriptions(first: 100) { nodes { id } }
  appInstallation { metafields(namespace: "$app:lift", first: 250) { nodes { ownerId namespace key } } }
  productVariants(first: 250, query: "tag:lift-duplicate") { nodes { id product { id } } }
  cartTransforms(first: 250) { nodes { id } }
  deliveryCustomizations(first: 250) { nodes { id } }
  paymentCustomizations(first: 250) { nodes { id } }
  automaticDiscountNodes(first: 250, query: "app:lift") { nodes { id } }
}`

// Cleanup implements experiment.InstallPlatform: it reads what Lift put on
// the shop (the webhook subscriptions too: the platform drops them at
// uninstall, but a reinstall starts from none either way) and deletes each, one mutation per kind (or per resource where
// the API deletes one at a time). The first refusal stops it; running it
// again deletes what is left.
func (c *Client) Cleanup(ctx context.Context, domain, token string) (experiment.CleanupReport, error) {
	var rep experiment.CleanupReport
	var res liftResources
	if err := c.graphQL(ctx, domain, token, "LiftResources", liftResourcesQuery, nil, &res); err != nil {
		return rep, err
	}
	del := func(op, mutation string, vars map[string]any) error {
		return c.graphQL(ctx, domain, token, op, mutation, vars, nil)
	}
	for _, n := range res.ScriptTags.Nodes {
		if err := del("ScriptTagDelete", `mutation ScriptTagDelete($id: ID!) { scriptTagDelete(id: $id) { deletedScriptTagId userErrors { message } } }`,
			map[string]any{"id": n.ID}); err != nil {
			return rep, err
		}
		rep.ScriptTags++
	}
	if len(res.App.Metafields.Nodes) > 0 {
		ids := make([]map[string]string, 0, len(res.App.Metafields.Nodes))
		for _, m := range res.App.Metafields.Nodes {
			ids = append(ids, map[string]string{"ownerId": m.OwnerID, "namespace": m.Namespace, "key": m.Key})
		}
		if err := del("MetafieldsDelete", `mutation MetafieldsDelete($metafields: [MetafieldIdentifierInput!]!) { metafieldsDelete(metafields: $metafields) { deletedMetafields { key } userErrors { message } } }`,
			map[string]any{"metafields": ids}); err != nil {
			return rep, err
		}
		rep.Metafields = len(ids)
	}
	for _, n := range res.Webhooks.Nodes {
		if err := del("WebhookSubscriptionDelete", `mutation WebhookSubscriptionDelete($id: ID!) { webhookSubscriptionDelete(id: $id) { deletedWebhookSubscriptionId userErrors { message } } }`,
			map[string]any{"id": n.ID}); err != nil {
			return rep, err
		}
		rep.Webhooks++
	}
	byProduct := map[string][]string{}
	for _, v := range res.Variants.Nodes {
		byProduct[v.Product.ID] = append(byProduct[v.Product.ID], v.ID)
	}
	for product, ids := range byProduct {
		if err := del("ProductVariantsBulkDelete", `mutation ProductVariantsBulkDelete($productId: ID!, $variantsIds: [ID!]!) { productVariantsBulkDelete(productId: $productId, variantsIds: $variantsIds) { userErrors { message } } }`,
			map[string]any{"productId": product, "variantsIds": ids}); err != nil {
			return rep, err
		}
		rep.DuplicateVariants += len(ids)
	}
	for _, f := range []struct {
		op, mutation string
		list         nodes
	}{
		{"CartTransformDelete", `mutation CartTransformDelete($id: ID!) { cartTransformDelete(id: $id) { deletedId userErrors { message } } }`, res.CartTransforms},
		{"DeliveryCustomizationDelete", `mutation DeliveryCustomizationDelete($id: ID!) { deliveryCustomizationDelete(id: $id) { deletedId userErrors { message } } }`, res.DeliveryCustomizations},
		{"PaymentCustomizationDelete", `mutation PaymentCustomizationDelete($id: ID!) { paymentCustomizationDelete(id: $id) { deletedId userErrors { message } } }`, res.PaymentCustomizations},
		{"DiscountAutomaticDelete", `mutation DiscountAutomaticDelete($id: ID!) { discountAutomaticDelete(id: $id) { deletedAutomaticDiscountId userErrors { message } } }`, res.AutomaticDiscountsOfApp},
	} {
		for _, n := range f.list.Nodes {
			if err := del(f.op, f.mutation, map[string]any{"id": n.ID}); err != nil {
				return rep, err
			}
			rep.Functions++
		}
	}
	return rep, nil
}
