package platform

import (
	"maps"
	"slices"
	"strings"
)

// The fake's launch operations (launch.go): duplicate variants, cart
// transforms, carrier services, theme files, automatic app discounts. A
// test's resources are found by the experiment_id metafield the client
// sends.

func experimentOf(v any) string { return liftMark(v, "experiment_id") }

// liftMark is the value of the metafield key of Lift's namespace among
// the metafields of a create's input.
func liftMark(v any, key string) string {
	list, _ := v.([]any)
	for _, m := range list {
		mf, _ := m.(map[string]any)
		if mf["namespace"] == "$app:lift" && mf["key"] == key {
			s, _ := mf["value"].(string)
			return s
		}
	}
	return ""
}

// createCartTransform registers a function's cart transform; the
// platform keeps one a function and refuses another.
func (s *fakeShop) createCartTransform(newID func(string) string, v map[string]any) any {
	fn, _ := v["functionId"].(string)
	for _, x := range s.CartTransforms {
		if x.Function == fn {
			return map[string]any{"cartTransformCreate": map[string]any{"cartTransform": nil, "userErrors": []any{map[string]any{
				"code": "FUNCTION_ALREADY_REGISTERED", "field": []string{"functionId"},
				"message": "Could not enable cart transform because it is already registered"}}}}
		}
	}
	id := newID("CartTransform")
	s.CartTransforms[id] = fakeTransform{Function: fn, Mark: liftMark(v["metafields"], "function")}
	return map[string]any{"cartTransformCreate": map[string]any{"cartTransform": map[string]string{"id": id}, "userErrors": []any{}}}
}

func refused(field, msg string) []any {
	return []any{map[string]any{"field": []string{field}, "message": msg}}
}

// launchOperation answers a launch operation; ok false when op is not one.
func (f *Fake) launchOperation(s *fakeShop, op string, v map[string]any) (any, bool) {
	switch op {
	case OpDuplicateVariants:
		list, _ := v["variants"].([]any)
		if len(list) == 0 {
			return map[string]any{"productVariantsBulkCreate": map[string]any{"productVariants": nil,
				"userErrors": refused("variants", "at least one variant is required")}}, true
		}
		out := []any{}
		for _, x := range list {
			m, _ := x.(map[string]any)
			exp := experimentOf(m["metafields"])
			nid := f.id("ProductVariant")
			s.DuplicateVariants[exp] = append(s.DuplicateVariants[exp], nid)
			s.stock.source[nid], _ = m["sourceVariantId"].(string)
			out = append(out, map[string]string{"id": nid})
		}
		return map[string]any{"productVariantsBulkCreate": map[string]any{"productVariants": out, "userErrors": []any{}}}, true
	case OpTestDuplicates:
		return s.testDuplicates(v), true
	case OpCartTransform:
		return s.createCartTransform(f.id, v), true
	case OpCarrierServices:
		nodes := []any{}
		for _, id := range slices.Sorted(maps.Keys(s.CarrierServices)) {
			x := s.CarrierServices[id]
			nodes = append(nodes, map[string]any{"id": id, "active": x.Active, "callbackUrl": x.CallbackURL})
		}
		return map[string]any{"carrierServices": map[string]any{"nodes": nodes}}, true
	case "CarrierServiceCreate":
		in, _ := v["input"].(map[string]any)
		x := fakeCarrier{}
		x.CallbackURL, _ = in["callbackUrl"].(string)
		x.Active, _ = in["active"].(bool)
		if name, _ := in["name"].(string); name == "" || x.CallbackURL == "" { // both URL! and String! in the input type
			return map[string]any{"carrierServiceCreate": map[string]any{"carrierService": nil,
				"userErrors": refused("input", "name and callbackUrl are required")}}, true
		}
		id := f.id("DeliveryCarrierService")
		s.CarrierServices[id] = x
		return map[string]any{"carrierServiceCreate": map[string]any{"carrierService": map[string]string{"id": id}, "userErrors": []any{}}}, true
	case "CarrierServiceUpdate":
		in, _ := v["input"].(map[string]any)
		id, _ := in["id"].(string)
		x, ok := s.CarrierServices[id]
		if !ok {
			return map[string]any{"carrierServiceUpdate": map[string]any{"carrierService": nil, "userErrors": refused("id", "Carrier service not found")}}, true
		}
		if a, ok := in["active"].(bool); ok {
			x.Active = a
		}
		s.CarrierServices[id] = x
		return map[string]any{"carrierServiceUpdate": map[string]any{"carrierService": map[string]string{"id": id}, "userErrors": []any{}}}, true
	case OpAppBlocks:
		theme, _ := v["themeId"].(string)
		if !strings.HasPrefix(theme, "gid://") { // an ID, not a role such as "main"
			return map[string]any{"themeFilesUpsert": map[string]any{"userErrors": refused("themeId", "Theme does not exist")}}, true
		}
		files, _ := v["files"].([]any)
		for _, f := range files {
			m, _ := f.(map[string]any)
			body, _ := m["body"].(map[string]any)
			if m["filename"] == "snippets/lift-experiment.liquid" {
				s.AppBlocks[theme], _ = body["value"].(string)
			}
		}
		return map[string]any{"themeFilesUpsert": map[string]any{"upsertedThemeFiles": []any{}, "userErrors": []any{}}}, true
	case OpPublishedTheme:
		return map[string]any{"themes": map[string]any{"nodes": []any{map[string]string{"id": s.publishedTheme()}}}}, true
	case OpOfferDiscounts:
		ids := slices.Sorted(maps.Keys(s.DiscountFunctions))
		after, _ := v["after"].(string)
		start, end, info := fakePage(len(ids), after)
		nodes := []any{}
		for _, id := range ids[start:end] {
			nodes = append(nodes, map[string]any{"id": id, "experiment": map[string]string{"value": s.DiscountFunctions[id]}})
		}
		return map[string]any{"automaticDiscountNodes": map[string]any{"nodes": nodes, "pageInfo": info}}, true
	case OpDiscountFunctions:
		d, _ := v["discount"].(map[string]any)
		id := f.id("DiscountAutomaticNode")
		s.DiscountFunctions[id] = experimentOf(d["metafields"]) // a second create is a second discount
		return map[string]any{"discountAutomaticAppCreate": map[string]any{"automaticAppDiscount": map[string]string{"discountId": id}, "userErrors": []any{}}}, true
	}
	return nil, false
}

// testDuplicates answers OpTestDuplicates: the shop's duplicate variants
// with their source variant and test, a page in a stable order, as the
// platform pages a connection.
func (s *fakeShop) testDuplicates(v map[string]any) any {
	type dup struct{ id, exp string }
	var all []dup
	for exp, ids := range s.DuplicateVariants {
		for _, id := range ids {
			all = append(all, dup{id, exp})
		}
	}
	slices.SortFunc(all, func(a, b dup) int { return strings.Compare(a.id, b.id) })
	start := 0
	if after, _ := v["after"].(string); after != "" {
		start = slices.IndexFunc(all, func(d dup) bool { return d.id == after }) + 1
	}
	end := min(start+duplicatesPage, len(all))
	nodes := []any{}
	for _, d := range all[start:end] {
		nodes = append(nodes, map[string]any{"id": d.id, "product": map[string]string{"id": "gid://shopify/Product/0"}, "source": map[string]string{"value": s.stock.source[d.id]},
			"experiment": map[string]string{"value": d.exp}})
	}
	cursor := ""
	if end > start {
		cursor = all[end-1].id
	}
	return map[string]any{"productVariants": map[string]any{"nodes": nodes,
		"pageInfo": map[string]any{"hasNextPage": end < len(all), "endCursor": cursor}}}
}

// publishedTheme is the catalog's main theme; a shop always has one, so
// without a catalog that names it the fake's is OnlineStoreTheme/1.
func (s *fakeShop) publishedTheme() string {
	for _, t := range s.install.Catalog.Themes {
		if t.Role == "main" {
			return t.ID
		}
	}
	return "gid://shopify/OnlineStoreTheme/1"
}
