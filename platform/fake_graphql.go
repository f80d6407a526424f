package platform

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/liftab/lift/experiment"
)

// operation answers one GraphQL operation of the fake: the data, or a
// top-level error message.
func (f *Fake) operation(s *fakeShop, req gqlRequest) (any, string) {
	in := s.install
	v := req.Variables
	if data, ok := f.launchOperation(s, req.OperationName, v); ok {
		return data, ""
	}
	if data, ok := s.stockOperation(req.OperationName, v); ok {
		return data, ""
	}
	if data, ok := f.scriptOperation(in, req.OperationName, v); ok {
		return data, ""
	}
	if data, ok := f.deliveryOperation(in, req.OperationName, v); ok {
		return data, ""
	}
	str := func(k string) string { x, _ := v[k].(string); return x }
	switch req.OperationName {
	case "Shop":
		return map[string]any{"shop": map[string]string{"name": in.Info.Name, "currencyCode": in.Info.Currency,
			"ianaTimezone": in.Info.Timezone}}, ""
	case "WebhookSubscriptionCreate":
		return f.subscribe(in, str("topic"), v["sub"]), ""
	case "WebhookSubscriptions":
		nodes := []any{}
		if t, _ := v["topic"].(string); in.Webhooks[t].URL == str("url") && in.Webhooks[t].ID != "" {
			nodes = append(nodes, map[string]string{"id": in.Webhooks[t].ID})
		}
		return map[string]any{"webhookSubscriptions": map[string]any{"nodes": nodes}}, ""
	case "WebhookSubscriptionDelete":
		for t, sub := range in.Webhooks {
			if sub.ID == str("id") {
				delete(in.Webhooks, t)
			}
		}
		return map[string]any{"webhookSubscriptionDelete": map[string]any{"deletedWebhookSubscriptionId": str("id"), "userErrors": []any{}}}, ""
	case "ProductsCount", "BulkOperationRunQuery", "CurrentBulkOperation":
		return f.bulkOperation(s, req), ""
	case "Products":
		in.products = append(in.products, time.Now())
		return productsPage(s, str("after")), ""
	case "Collections":
		return collectionsPage(in, str("after")), ""
	case "CollectionProducts":
		for _, c := range in.Catalog.Collections {
			if c.ID == str("id") {
				return map[string]any{"collection": map[string]any{"products": idPage(c.ProductIDs, str("after"))}}, ""
			}
		}
		return map[string]any{"collection": nil}, ""
	case "Themes":
		return themesOf(in), ""
	case OpMarkets:
		return marketsPage(in, str("after")), ""
	case OpThemeTemplates:
		return themeFilesPage(in, str("id"), str("after")), ""
	case "LiftResources":
		return liftResourcesOf(s, v), ""
	case "ScriptTagDelete":
		in.ScriptTags = slices.DeleteFunc(in.ScriptTags, func(id string) bool { return id == str("id") })
	case "MetafieldsDelete":
		ids, _ := v["metafields"].([]any)
		for _, id := range ids {
			m, _ := id.(map[string]any)
			in.Metafields = slices.DeleteFunc(in.Metafields, func(k string) bool { return m["key"] == k })
		}
	case "ProductVariantsBulkDelete":
		ids, _ := v["variantsIds"].([]any)
		for exp, dup := range s.DuplicateVariants {
			s.DuplicateVariants[exp] = slices.DeleteFunc(dup, func(id string) bool { return slices.Contains(ids, any(id)) })
			if len(s.DuplicateVariants[exp]) == 0 {
				delete(s.DuplicateVariants, exp)
			}
		}
	case "CartTransformDelete":
		delete(s.CartTransforms, str("id"))
	case "DiscountAutomaticDelete":
		delete(s.DiscountFunctions, str("id"))
	case "DeliveryCustomizationDelete":
		delete(in.Delivery, str("id"))
	case "PaymentCustomizationDelete":
		delete(in.Payment, str("id"))
	default:
		return nil, "unknown operation " + strconv.Quote(req.OperationName)
	}
	return map[string]any{}, "" // deletions: Client reads nothing back
}

func (f *Fake) subscribe(in *fakeInstall, topic string, sub any) any {
	m, _ := sub.(map[string]any)
	cb, _ := m["callbackUrl"].(string)
	payload := func(id string, errs []any) any {
		return map[string]any{"webhookSubscriptionCreate": map[string]any{
			"webhookSubscription": map[string]string{"id": id}, "userErrors": errs}}
	}
	if topic == "" || cb == "" {
		return payload("", []any{map[string]any{"field": []string{"callbackUrl"}, "message": "topic and callbackUrl are required"}})
	}
	if cur, ok := in.Webhooks[topic]; ok && cur.URL == cb {
		return map[string]any{"webhookSubscriptionCreate": map[string]any{"webhookSubscription": nil,
			"userErrors": []any{map[string]any{"field": []string{"webhookSubscription", "callbackUrl"}, "message": "Address for this topic has already been taken"}}}}
	}
	id := f.id("WebhookSubscription")
	in.Webhooks[topic] = fakeSub{ID: id, URL: cb}
	return payload(id, []any{})
}

// fakePage is the part of n items a page starting at cursor after holds,
// FakePageSize at most, and the next page's cursor.
func fakePage(n int, after string) (start, end int, info map[string]any) {
	start, _ = strconv.Atoi(after)
	end = min(start+FakePageSize, n)
	start = min(start, end)
	return start, end, map[string]any{"hasNextPage": end < n, "endCursor": strconv.Itoa(end)}
}

// duplicates lists Lift's duplicate variants in a stable order (by test,
// then as made), so pages of them do not overlap.
func (s *fakeShop) duplicates() []string {
	var out []string
	for _, exp := range slices.Sorted(maps.Keys(s.DuplicateVariants)) {
		out = append(out, s.DuplicateVariants[exp]...)
	}
	return out
}

// shopVariant is a variant as the platform holds it: the catalog's, and
// the duplicates Lift made for price tests, which are variants of their
// original's product like any other and carry Lift's source_variant_id.
type shopVariant struct {
	experiment.Variant
	product experiment.Product
	source  string // the original's id, for Lift's duplicates
}

// variantsOf lists every variant of the shop, each product's catalog
// variants then its duplicates, in a stable order.
func (s *fakeShop) variantsOf() []shopVariant {
	dups := s.duplicates()
	var out []shopVariant
	for _, p := range s.install.Catalog.Products {
		for _, v := range p.Variants {
			out = append(out, shopVariant{Variant: v, product: p.Product})
		}
		for _, id := range dups {
			for _, v := range p.Variants {
				if s.stock.source[id] == v.ID {
					out = append(out, shopVariant{Variant: experiment.Variant{ID: id, ProductID: p.ID, Title: v.Title, Price: v.Price},
						product: p.Product, source: v.ID})
				}
			}
		}
	}
	return out
}

// json is the variant as a query's node or a bulk file's line reads it.
func (v shopVariant) json() map[string]any {
	var cost, source any
	if v.Cost != "" {
		cost = map[string]string{"amount": v.Cost}
	}
	if v.source != "" {
		source = map[string]string{"value": v.source}
	}
	return map[string]any{"id": v.ID, "title": v.Title, "sku": v.SKU, "price": v.Price,
		"inventoryItem": map[string]any{"unitCost": cost}, "source": source}
}

// productsPage answers productVariants: every variant of the shop, each
// with its product.
func productsPage(s *fakeShop, after string) any {
	all := s.variantsOf()
	start, end, info := fakePage(len(all), after)
	nodes := []any{}
	for _, v := range all[start:end] {
		n := v.json()
		n["product"] = map[string]string{"id": v.product.ID, "title": v.product.Title, "handle": v.product.Handle}
		nodes = append(nodes, n)
	}
	return map[string]any{"productVariants": map[string]any{"nodes": nodes, "pageInfo": info}}
}

func idPage(ids []string, after string) any {
	start, end, info := fakePage(len(ids), after)
	nodes := []any{}
	for _, id := range ids[start:end] {
		nodes = append(nodes, map[string]string{"id": id})
	}
	return map[string]any{"nodes": nodes, "pageInfo": info}
}

func collectionsPage(in *fakeInstall, after string) any {
	start, end, info := fakePage(len(in.Catalog.Collections), after)
	cols := []any{}
	for _, c := range in.Catalog.Collections[start:end] {
		cols = append(cols, map[string]any{"id": c.ID, "title": c.Title, "products": idPage(c.ProductIDs, "")})
	}
	return map[string]any{"collections": map[string]any{"nodes": cols, "pageInfo": info}}
}

func themesOf(in *fakeInstall) any {
	themes := []any{}
	for _, t := range in.Catalog.Themes {
		role := "UNPUBLISHED"
		if t.Role == "main" {
			role = "MAIN"
		}
		themes = append(themes, map[string]string{"id": t.ID, "name": t.Name, "role": role})
	}
	return map[string]any{"themes": map[string]any{"nodes": themes}}
}

// themeFilesPage is a page of a theme's template files, each the
// catalog's template as a JSON template file; a theme the shop does not
// have is null.
func themeFilesPage(in *fakeInstall, id, after string) any {
	for _, t := range in.Catalog.Themes {
		if t.ID != id {
			continue
		}
		start, end, info := fakePage(len(t.Templates), after)
		nodes := []any{}
		for _, name := range t.Templates[start:end] {
			nodes = append(nodes, map[string]string{"filename": "templates/" + name + ".json"})
		}
		return map[string]any{"theme": map[string]any{"files": map[string]any{"nodes": nodes, "pageInfo": info}}}
	}
	return map[string]any{"theme": nil}
}

// marketsPage is a page of the shop's markets: the catalog's, enabled,
// then the ones PutDisabledMarket added.
func marketsPage(in *fakeInstall, after string) any {
	all := []any{}
	for i, list := range [][]experiment.Market{in.Catalog.Markets, in.disabledMarkets} {
		for _, m := range list {
			regions := []any{}
			for _, c := range m.Countries {
				regions = append(regions, map[string]string{"code": c})
			}
			all = append(all, map[string]any{"id": m.ID, "name": m.Name, "enabled": i == 0,
				"currencySettings": map[string]any{"baseCurrency": map[string]string{"currencyCode": m.Currency}},
				"regions":          map[string]any{"nodes": regions}})
		}
	}
	start, end, info := fakePage(len(all), after)
	return map[string]any{"markets": map[string]any{"nodes": all[start:end], "pageInfo": info}}
}

func liftResourcesOf(s *fakeShop, v map[string]any) any {
	// Each kind answers a page of FakePageSize, as a page of first: n would
	// hold n: Cleanup must read again after deleting, and page past the
	// merchant's functions (the variables name each one's cursor).
	page := func(xs []string) []string { return xs[:min(len(xs), FakePageSize)] }
	ids := func(xs []string) any {
		out := []any{}
		for _, x := range page(xs) {
			out = append(out, map[string]string{"id": x})
		}
		return map[string]any{"nodes": out}
	}
	// marked lists ids (sorted) from the kind's cursor, with Lift's
	// metafield where mark gives one, as the platform lists them all.
	marked := func(kind string, all []string, mark func(id string) string, product string) any {
		after, _ := v[kind].(string)
		start, end, info := fakePage(len(all), after)
		out := []any{}
		for _, id := range all[start:end] {
			var mk any
			if m := mark(id); m != "" {
				mk = map[string]string{"value": m}
			}
			out = append(out, map[string]any{"id": id, "mark": mk, "product": map[string]string{"id": product}})
		}
		return map[string]any{"nodes": out, "pageInfo": info}
	}
	transforms := map[string]string{}
	for id, x := range s.CartTransforms {
		transforms[id] = x.Mark
	}
	dups := s.duplicates()
	mfs := []any{}
	for _, k := range page(s.install.Metafields) {
		mfs = append(mfs, map[string]string{"namespace": "$app:lift", "key": k})
	}
	var subs []string
	for _, sub := range s.install.Webhooks {
		subs = append(subs, sub.ID)
	}
	list := func(kind string, m map[string]string) any {
		return marked(kind, slices.Sorted(maps.Keys(m)), func(id string) string { return m[id] }, "")
	}
	return map[string]any{
		"scriptTags":             ids(s.install.ScriptTags),
		"webhookSubscriptions":   ids(subs),
		"appInstallation":        map[string]any{"id": "gid://shopify/AppInstallation/1", "metafields": map[string]any{"nodes": mfs}},
		"productVariants":        marked("variants", dups, func(id string) string { return s.stock.source[id] }, "gid://shopify/Product/0"),
		"cartTransforms":         list("transforms", transforms),
		"deliveryCustomizations": list("delivery", s.install.Delivery),
		"paymentCustomizations":  list("payment", s.install.Payment),
		"automaticDiscountNodes": list("discounts", s.DiscountFunctions),
	}
}
