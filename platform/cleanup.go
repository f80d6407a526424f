package platform

import (
	"context"
	"fmt"

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

// liftResourcesQuery reads a page of each kind: 492 points, under the
// platform's 1,000 a query (a page of 250 of each would ask 2,117). Cleanup
// reads again after deleting until nothing is left.
const liftResourcesQuery = `query LiftResources {
  scriptTags(first: 50) { nodes { id } }
  webhookSubscriptions(first: 50) { nodes { id } }
  appInstallation { metafields(namespace: "$app:lift", first: 50) { nodes { ownerId namespace key } } }
  productVariants(first: 100, query: "tag:lift-duplicate") { nodes { id product { id } } }
  cartTransforms(first: 25) { nodes { id } }
  deliveryCustomizations(first: 25) { nodes { id } }
  paymentCustomizations(first: 25) { nodes { id } }
  automaticDiscountNodes(first: 50, query: "app:lift") { nodes { id } }
}`

// cleanupRounds bounds Cleanup's read-then-delete rounds: a deletion the
// platform ignores must not loop for ever.
const cleanupRounds = 20

func (r liftResources) empty() bool {
	return len(r.ScriptTags.Nodes)+len(r.Webhooks.Nodes)+len(r.App.Metafields.Nodes)+len(r.Variants.Nodes)+
		len(r.CartTransforms.Nodes)+len(r.DeliveryCustomizations.Nodes)+len(r.PaymentCustomizations.Nodes)+
		len(r.AutomaticDiscountsOfApp.Nodes) == 0
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
		if res.empty() {
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
			ids = append(ids, map[string]string{"ownerId": m.OwnerID, "namespace": m.Namespace, "key": m.Key})
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
		byProduct[v.Product.ID] = append(byProduct[v.Product.ID], v.ID)
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
		list         nodes
	}{
		{"CartTransformDelete", `mutation CartTransformDelete($id: ID!) { cartTransformDelete(id: $id) { deletedId userErrors { message } } }`, res.CartTransforms},
		{"DeliveryCustomizationDelete", `mutation DeliveryCustomizationDelete($id: ID!) { deliveryCustomizationDelete(id: $id) { deletedId userErrors { message } } }`, res.DeliveryCustomizations},
		{"PaymentCustomizationDelete", `mutation PaymentCustomizationDelete($id: ID!) { paymentCustomizationDelete(id: $id) { deletedId userErrors { message } } }`, res.PaymentCustomizations},
		{"DiscountAutomaticDelete", `mutation DiscountAutomaticDelete($id: ID!) { discountAutomaticDelete(id: $id) { deletedAutomaticDiscountId userErrors { message } } }`, res.AutomaticDiscountsOfApp},
	} {
		for _, n := range f.list.Nodes {
			if err := del(f.op, f.mutation, map[string]any{"id": n.ID}); err != nil {
				return err
			}
			rep.Functions++
		}
	}
	return nil
}
