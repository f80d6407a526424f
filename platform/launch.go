package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/web/tracker"
)

// A launch's platform side effects (experiment.Platform), as GraphQL Admin
// API operations with the shop's own access token: price tests get
// duplicate variants and a cart transform, theme and template tests the
// Lift app block in each theme they show, offer tests an automatic app
// discount, shipping tests a carrier service. Every failure is an *Error
// naming the failed step.

// Operation names of the launch, for Fake.Fail.
const (
	OpDuplicateVariants = "ProductVariantsBulkCreate"
	OpTestDuplicates    = "TestDuplicates"
	OpCartTransform     = "CartTransformCreate"
	OpCarrierServices   = "CarrierServices"
	OpAppBlocks         = "ThemeFilesUpsert"
	OpPublishedTheme    = "PublishedTheme"
	OpDiscountFunctions = "DiscountAutomaticAppCreate"
	OpOfferDiscounts    = "OfferDiscounts"
)

// PrepareLaunch implements Admin.
func (c *Client) PrepareLaunch(ctx context.Context, shop *experiment.Shop, t *experiment.Test) error {
	token, err := c.tokenFor(ctx, shop)
	if err != nil {
		return err
	}
	for _, k := range t.BundledTypes() {
		var err error
		switch k {
		case experiment.TypePrice:
			err = c.preparePrice(ctx, shop.Domain, token, t)
		case experiment.TypeShipping:
			err = c.checkCarrier(ctx, shop.Domain, token)
		case experiment.TypeTheme, experiment.TypeTemplate, experiment.TypeVisualEditor:
			err = c.installBlocks(ctx, shop.Domain, token, t, k)
		case experiment.TypeOffer:
			err = c.prepareOffer(ctx, shop.Domain, token, t)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// offerDiscountsQuery pages through Lift's automatic discounts with the
// test each serves (2 + 1 + 100 × 2 = 203 points).
const offerDiscountsQuery = `query OfferDiscounts($after: String) {
  automaticDiscountNodes(first: 100, after: $after, query: "app:lift") {
    pageInfo { hasNextPage endCursor }
    nodes { id experiment: metafield(namespace: "$app:lift", key: "experiment_id") { value } } }
}`

// prepareOffer creates the offer test's automatic discount unless an
// earlier launch of the test did: a start retried after a failed one, or
// a bundle's launch check, must not put a second discount on every order.
func (c *Client) prepareOffer(ctx context.Context, domain, token string, t *experiment.Test) error {
	made, err := c.offerDiscounts(ctx, domain, token, t)
	if err != nil || len(made) > 0 {
		return err
	}
	id := fmt.Sprint(t.ID)
	return c.mutate(ctx, domain, token, "create discount function", OpDiscountFunctions,
		`mutation DiscountAutomaticAppCreate($discount: DiscountAutomaticAppInput!) {
  discountAutomaticAppCreate(automaticAppDiscount: $discount) { automaticAppDiscount { discountId } userErrors { field message } } }`,
		map[string]any{"discount": map[string]any{"title": "Lift offer test " + id, "functionId": "lift-offer",
			"metafields": experimentMetafield(t)}}, "discountAutomaticAppCreate")
}

// offerDiscounts lists the ids of t's automatic discounts.
func (c *Client) offerDiscounts(ctx context.Context, domain, token string, t *experiment.Test) ([]string, error) {
	id := fmt.Sprint(t.ID)
	var ids []string
	var after any
	for {
		var out struct {
			Discounts struct {
				PageInfo pageInfo `json:"pageInfo"`
				Nodes    []struct {
					ID         string `json:"id"`
					Experiment *mark  `json:"experiment"`
				} `json:"nodes"`
			} `json:"automaticDiscountNodes"`
		}
		if err := c.graphQL(ctx, domain, token, OpOfferDiscounts, offerDiscountsQuery, map[string]any{"after": after}, &out); err != nil {
			return nil, renamed(err, "read offer discounts")
		}
		for _, n := range out.Discounts.Nodes {
			if n.Experiment != nil && n.Experiment.Value == id {
				ids = append(ids, n.ID)
			}
		}
		next, more := out.Discounts.PageInfo.next()
		if !more {
			return ids, nil
		}
		after = next
	}
}

// tokenFor is the shop's own token when the install stored one.
func (c *Client) tokenFor(ctx context.Context, shop *experiment.Shop) (string, error) {
	if c.Tokens == nil {
		return c.Token, nil
	}
	tok, err := c.Tokens(ctx, shop)
	if err != nil {
		return "", fmt.Errorf("platform: token of shop %d: %w", shop.ID, err)
	}
	if tok == "" {
		return c.Token, nil
	}
	return tok, nil
}

// experimentMetafield marks what a launch creates with the test's id, so
// it can be found again (and removed at uninstall).
func experimentMetafield(t *experiment.Test) []map[string]string {
	return []map[string]string{{"namespace": "$app:lift", "key": "experiment_id", "type": "single_line_text_field", "value": fmt.Sprint(t.ID)}}
}

// mutate runs a mutation whose payload (at field) carries userErrors;
// step names the failure.
func (c *Client) mutate(ctx context.Context, domain, token, step, op, mutation string, vars map[string]any, field string) error {
	var out map[string]struct {
		UserErrors userErrors `json:"userErrors"`
	}
	if err := c.graphQL(ctx, domain, token, op, mutation, vars, &out); err != nil {
		return renamed(err, step)
	}
	return out[field].UserErrors.err(step)
}

func (c *Client) preparePrice(ctx context.Context, domain, token string, t *experiment.Test) error {
	var variants []string
	seen := map[string]bool{}
	for _, g := range t.Groups {
		var content struct {
			Prices []experiment.VariantPrice `json:"prices"`
			Price  *struct {
				Prices []experiment.VariantPrice `json:"prices"`
			} `json:"price"`
		}
		_ = json.Unmarshal(g.Content, &content)
		prices := content.Prices
		if content.Price != nil {
			prices = content.Price.Prices
		}
		for _, p := range prices {
			if !seen[p.ProductVariantID] {
				seen[p.ProductVariantID] = true
				variants = append(variants, p.ProductVariantID)
			}
		}
	}
	// A launch refused or failed after this step (the cart transform)
	// leaves its duplicates; the next start reuses them rather than adding
	// a copy of each variant per attempt.
	made, err := c.testDuplicates(ctx, domain, token, t)
	if err != nil {
		return err
	}
	variants = slices.DeleteFunc(variants, func(v string) bool {
		return slices.ContainsFunc(made, func(d duplicate) bool { return d.Source == v })
	})
	if err := c.duplicateVariants(ctx, domain, token, t, variants); err != nil {
		return err
	}
	return c.registerPriceTransform(ctx, domain, token)
}

// PriceFunction is the id of Lift's cart transform function.
const PriceFunction = "lift-price"

// registerPriceTransform registers the price function's cart transform,
// the shop's one for every price test: the platform keeps a single cart
// transform per function and refuses a second with
// FUNCTION_ALREADY_REGISTERED, which here means the transform is in
// place (an earlier price test, or an earlier attempt of this one,
// registered it). It carries Lift's function mark, not a test's, so the
// uninstall finds it (cleanup.go) and no test's end can take it from
// the others.
func (c *Client) registerPriceTransform(ctx context.Context, domain, token string) error {
	const step = "register cart transform"
	var out struct {
		Create struct {
			UserErrors userErrors `json:"userErrors"`
		} `json:"cartTransformCreate"`
	}
	err := c.graphQL(ctx, domain, token, OpCartTransform, `mutation CartTransformCreate($functionId: String!, $metafields: [MetafieldInput!]) {
  cartTransformCreate(functionId: $functionId, blockOnFailure: false, metafields: $metafields) { cartTransform { id } userErrors { code field message } } }`,
		map[string]any{"functionId": PriceFunction, "metafields": []map[string]string{{"namespace": "$app:lift", "key": "function",
			"type": "single_line_text_field", "value": PriceFunction}}}, &out)
	if err != nil {
		return renamed(err, step)
	}
	errs := slices.DeleteFunc(out.Create.UserErrors, func(e userError) bool { return e.Code == "FUNCTION_ALREADY_REGISTERED" })
	return errs.err(step)
}

// duplicatesPage is a page of TestDuplicates: 200 × (the variant, its
// product, two metafields) + 3 = 803 points, under the platform's 1,000
// a query.
const duplicatesPage = 200

// testDuplicatesQuery pages through the shop's duplicate variants with
// their product, the test and the variant each copies.
var testDuplicatesQuery = `query TestDuplicates($after: String) {
  productVariants(first: ` + strconv.Itoa(duplicatesPage) + `, after: $after, query: "tag:lift-duplicate") {
    nodes { id product { id } source: metafield(namespace: "$app:lift", key: "source_variant_id") { value }
      experiment: metafield(namespace: "$app:lift", key: "experiment_id") { value } }
    pageInfo { hasNextPage endCursor } }
}`

// duplicate is a variant Lift copied for a test.
type duplicate struct {
	ID, Product, Source string
}

// testDuplicates lists t's duplicate variants.
func (c *Client) testDuplicates(ctx context.Context, domain, token string, t *experiment.Test) ([]duplicate, error) {
	var made []duplicate
	var after any
	for {
		var out struct {
			Variants struct {
				Nodes []struct {
					ID      string `json:"id"`
					Product struct {
						ID string `json:"id"`
					} `json:"product"`
					Source     *mark `json:"source"`
					Experiment *mark `json:"experiment"`
				} `json:"nodes"`
				PageInfo pageInfo `json:"pageInfo"`
			} `json:"productVariants"`
		}
		if err := c.graphQL(ctx, domain, token, OpTestDuplicates, testDuplicatesQuery, map[string]any{"after": after}, &out); err != nil {
			return nil, renamed(err, "read duplicate variants")
		}
		for _, n := range out.Variants.Nodes {
			if n.Source != nil && n.Experiment != nil && n.Experiment.Value == fmt.Sprint(t.ID) {
				made = append(made, duplicate{ID: n.ID, Product: n.Product.ID, Source: n.Source.Value})
			}
		}
		next, more := out.Variants.PageInfo.next()
		if !more {
			return made, nil
		}
		after = next
	}
}

// duplicateVariants makes t's duplicate of each variant, tagged and marked
// so that the stock sync and the uninstall find them, 250 a mutation: the
// platform refuses a longer array argument. A failure part way leaves the
// ones made, which the next start reuses (testDuplicates).
func (c *Client) duplicateVariants(ctx context.Context, domain, token string, t *experiment.Test, variants []string) error {
	for batch := range slices.Chunk(variants, maxInputArray) {
		dups := make([]map[string]any, 0, len(batch))
		for _, v := range batch {
			// source_variant_id lets the stock sync (stock.go) find the original.
			mfs := append(experimentMetafield(t), map[string]string{"namespace": "$app:lift", "key": "source_variant_id",
				"type": "single_line_text_field", "value": v})
			dups = append(dups, map[string]any{"sourceVariantId": v, "tags": []string{"lift-duplicate"}, "metafields": mfs})
		}
		if err := c.mutate(ctx, domain, token, "duplicate variants", OpDuplicateVariants,
			`mutation ProductVariantsBulkCreate($variants: [ProductVariantsBulkInput!]!) {
  productVariantsBulkCreate(variants: $variants) { productVariants { id } userErrors { field message } } }`,
			map[string]any{"variants": dups}, "productVariantsBulkCreate"); err != nil {
			return err
		}
	}
	return nil
}

// carrierServiceName is how merchants and shoppers see Lift's carrier.
const carrierServiceName = "Lift rates"

// RegisterCarrier implements experiment.InstallPlatform: the install's
// checkCarrier.
func (c *Client) RegisterCarrier(ctx context.Context, domain, token string) error {
	return c.checkCarrier(ctx, domain, token)
}

// checkCarrier makes sure the shop has Lift's carrier service, active and
// answering at RatesURL: the platform asks it for the rates of the zones
// the merchant serves through it (docs/install.md, "Shipping rates").
// Another app's carrier service does not count; Lift's, deactivated, is
// turned on again rather than registered twice.
func (c *Client) checkCarrier(ctx context.Context, domain, token string) error {
	var out struct {
		CarrierServices struct {
			Nodes []struct {
				ID          string `json:"id"`
				Active      bool   `json:"active"`
				CallbackURL string `json:"callbackUrl"`
			} `json:"nodes"`
		} `json:"carrierServices"`
	}
	if err := c.graphQL(ctx, domain, token, OpCarrierServices,
		`query CarrierServices { carrierServices(first: 50) { nodes { id active callbackUrl } } }`, nil, &out); err != nil {
		return renamed(err, "check carrier service")
	}
	if c.RatesURL == "" {
		return errors.New("platform: no RatesURL to register the carrier service with")
	}
	for _, s := range out.CarrierServices.Nodes {
		if s.CallbackURL != c.RatesURL {
			continue
		}
		if s.Active {
			return nil
		}
		return c.mutate(ctx, domain, token, "activate carrier service", "CarrierServiceUpdate",
			`mutation CarrierServiceUpdate($input: DeliveryCarrierServiceUpdateInput!) {
  carrierServiceUpdate(input: $input) { carrierService { id } userErrors { field message } } }`,
			map[string]any{"input": map[string]any{"id": s.ID, "active": true}}, "carrierServiceUpdate")
	}
	return c.mutate(ctx, domain, token, "register carrier service", "CarrierServiceCreate",
		`mutation CarrierServiceCreate($input: DeliveryCarrierServiceCreateInput!) {
  carrierServiceCreate(input: $input) { carrierService { id } userErrors { field message } } }`,
		map[string]any{"input": map[string]any{"name": carrierServiceName, "callbackUrl": c.RatesURL, "active": true,
			"supportsServiceDiscovery": true}}, "carrierServiceCreate")
}

func (c *Client) installBlocks(ctx context.Context, domain, token string, t *experiment.Test, k experiment.Type) error {
	themes := map[string]bool{}
	if k == experiment.TypeTemplate {
		var s experiment.TemplateShared
		_ = json.Unmarshal(t.Shared[string(k)], &s)
		themes[s.ThemeID] = true
	}
	for _, g := range t.Groups {
		var tc experiment.ThemeContent
		content := g.Content
		if t.Type == experiment.TypeCombined {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(g.Content, &m)
			content = m[string(k)]
		}
		if k == experiment.TypeTheme && json.Unmarshal(content, &tc) == nil && tc.ThemeID != "" {
			themes[tc.ThemeID] = true
		}
	}
	if len(themes) == 0 { // the published theme carries the block
		id, err := c.publishedTheme(ctx, domain, token)
		if err != nil {
			return err
		}
		themes[id] = true
	}
	for id := range themes {
		if err := c.InstallThemeBlock(ctx, domain, token, id); err != nil {
			return err
		}
	}
	return nil
}

// publishedTheme is the id of the shop's published theme (role MAIN): the
// theme files mutation takes a theme's id, not its role.
func (c *Client) publishedTheme(ctx context.Context, domain, token string) (string, error) {
	var out struct {
		Themes struct {
			Nodes []struct {
				ID string `json:"id"`
			} `json:"nodes"`
		} `json:"themes"`
	}
	const step = "find the published theme"
	if err := c.graphQL(ctx, domain, token, OpPublishedTheme,
		`query PublishedTheme { themes(first: 1, roles: [MAIN]) { nodes { id } } }`, nil, &out); err != nil {
		return "", renamed(err, step)
	}
	if len(out.Themes.Nodes) == 0 {
		return "", &Error{Op: step, Status: http.StatusUnprocessableEntity, Message: "the shop has no published theme"}
	}
	return out.Themes.Nodes[0].ID, nil
}

// themeSnippet is what Lift's block is in a theme
// (snippets/lift-experiment.liquid): the anti-flicker snippet, which the
// theme renders first in <head> with {% render 'lift-experiment' %}, so a
// theme change (THEMES_PUBLISH) keeps it; lift.js itself comes by the
// script tag /api/enable-script adds, or the theme's own. It used to hold
// that render tag, a snippet rendering itself, which fails at render
// ("nesting too deep").
var themeSnippet = tracker.AntiFlicker(2 * time.Second)

// InstallThemeBlock writes the app block's snippet into the theme (its
// global id); an upsert, so writing it again is harmless.
func (c *Client) InstallThemeBlock(ctx context.Context, domain, token, themeID string) error {
	return c.mutate(ctx, domain, token, "install theme app block", OpAppBlocks,
		`mutation ThemeFilesUpsert($themeId: ID!, $files: [OnlineStoreThemeFilesUpsertFileInput!]!) {
  themeFilesUpsert(themeId: $themeId, files: $files) { upsertedThemeFiles { filename } userErrors { field message } } }`,
		map[string]any{"themeId": themeID, "files": []map[string]any{{"filename": "snippets/lift-experiment.liquid",
			"body": map[string]string{"type": "TEXT", "value": themeSnippet}}}}, "themeFilesUpsert")
}

// renamed names the launch step in a platform error, as a failure reason
// reads it ("register cart transform: 500 …").
func renamed(err error, step string) error {
	var pe *Error
	if errors.As(err, &pe) {
		pe.Op = step
	}
	return err
}
