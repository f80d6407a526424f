package platform

// The fake's launch operations (launch.go): duplicate variants, cart
// transforms, carrier services, theme files, automatic app discounts. A
// test's resources are found by the experiment_id metafield the client
// sends.

func experimentOf(v any) string {
	list, _ := v.([]any)
	for _, m := range list {
		mf, _ := m.(map[string]any)
		if mf["key"] == "experiment_id" {
			s, _ := mf["value"].(string)
			return s
		}
	}
	return ""
}

func userError(field, msg string) []any {
	return []any{map[string]any{"field": []string{field}, "message": msg}}
}

// launchOperation answers a launch operation; ok false when op is not one.
func (f *Fake) launchOperation(s *fakeShop, op string, v map[string]any) (any, bool) {
	switch op {
	case OpDuplicateVariants:
		list, _ := v["variants"].([]any)
		if len(list) == 0 {
			return map[string]any{"productVariantsBulkCreate": map[string]any{"productVariants": nil,
				"userErrors": userError("variants", "at least one variant is required")}}, true
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
	case OpCartTransform:
		exp := experimentOf(v["metafields"])
		id, ok := s.CartTransforms[exp]
		if !ok { // registering again is harmless
			id = f.id("CartTransform")
			s.CartTransforms[exp] = id
		}
		return map[string]any{"cartTransformCreate": map[string]any{"cartTransform": map[string]string{"id": id}, "userErrors": []any{}}}, true
	case OpCarrierServices:
		nodes := []any{}
		for _, id := range s.CarrierServices {
			nodes = append(nodes, map[string]any{"id": id, "active": true})
		}
		return map[string]any{"carrierServices": map[string]any{"nodes": nodes}}, true
	case "CarrierServiceCreate":
		id := f.id("DeliveryCarrierService")
		s.CarrierServices = append(s.CarrierServices, id)
		return map[string]any{"carrierServiceCreate": map[string]any{"carrierService": map[string]string{"id": id}, "userErrors": []any{}}}, true
	case OpAppBlocks:
		theme, _ := v["themeId"].(string)
		if theme == "" {
			return map[string]any{"themeFilesUpsert": map[string]any{"userErrors": userError("themeId", "themeId is required")}}, true
		}
		s.AppBlocks[theme] = true
		return map[string]any{"themeFilesUpsert": map[string]any{"upsertedThemeFiles": []any{}, "userErrors": []any{}}}, true
	case OpDiscountFunctions:
		d, _ := v["discount"].(map[string]any)
		id := f.id("DiscountAutomaticNode")
		s.DiscountFunctions[experimentOf(d["metafields"])] = id
		return map[string]any{"discountAutomaticAppCreate": map[string]any{"automaticAppDiscount": map[string]string{"discountId": id}, "userErrors": []any{}}}, true
	}
	return nil, false
}
