package session

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// The creation endpoints of part 4.2, one per type. Each decodes its
// family's body strictly, maps it onto the create body of the domain (the
// shape /v1 takes) and hands it to experiment.Service.Create, so both
// surfaces create under one set of rules. The type-specific fields the
// document leaves "not shown" are fixed in docs/session-api.md.

// family maps one creation body onto the domain's create body.
type family func(ctx context.Context, a *API, shop *experiment.Shop, in *createWire) (map[string]any, error)

func (a *API) createRoutes(g gin.IRouter) {
	routes := map[string]family{
		"/price-experiments/v1/create": priceV1,
		"/price-experiments/v2/create": priceV2,
		"/content-experiments/create":  content,
		"/shipping-experiments/create": shipping,
		"/redirect-experiments/create": redirect,
		"/template-experiments/create": template,
		"/theme-experiments/create":    theme,
		"/checkout-experiments/create": checkout,
	}
	for path, f := range routes {
		g.POST(path, handle(a.create(f)))
	}
}

// createWire is every creation body's fields; each family refuses those
// that are not its own.
type createWire struct {
	Name            string                     `json:"name"`
	Products        []productIn                `json:"products"`
	TestGroups      []groupWire                `json:"testGroups"`
	Settings        map[string]json.RawMessage `json:"settings"`
	PriceChangeType *string                    `json:"priceChangeType"`
	PriceChange     *float64                   `json:"priceChange"`
	ZoneIDs         []string                   `json:"zoneIds"`
	SourcePath      *string                    `json:"sourcePath"`
	MatchType       *string                    `json:"matchType"`
	ThemeID         *string                    `json:"themeId"`
}

type productIn struct {
	ProductID string        `json:"productId"`
	Variants  []variantWire `json:"variants"`
}

func (a *API) create(f family) api.HandlerFunc {
	return func(c *gin.Context) error {
		var in createWire
		if err := api.DecodeJSON(c, &in); err != nil {
			return err
		}
		ctx, shop := c.Request.Context(), shopOf(c)
		body, err := f(ctx, a, shop, &in)
		if err != nil {
			return err
		}
		if err := commonFields(&in, body, shop.Location()); err != nil {
			return err
		}
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		if _, err := a.Service.CreateFromAdminPanel(ctx, shop, raw); err != nil {
			return err
		}
		success(c)
		return nil
	}
}

// commonFields adds name and settings to a family's create body.
func commonFields(in *createWire, body map[string]any, loc *time.Location) error {
	body["name"] = in.Name
	return settingsPatch(in.Settings, body, loc)
}

// only refuses the top-level fields a family does not take.
func only(in *createWire, allowed ...string) error {
	set := map[string]bool{
		"products": in.Products != nil, "priceChangeType": in.PriceChangeType != nil, "priceChange": in.PriceChange != nil,
		"zoneIds": in.ZoneIDs != nil, "sourcePath": in.SourcePath != nil, "matchType": in.MatchType != nil, "themeId": in.ThemeID != nil,
	}
	for _, k := range allowed {
		delete(set, k)
	}
	for _, k := range []string{"products", "priceChangeType", "priceChange", "zoneIds", "sourcePath", "matchType", "themeId"} {
		if set[k] {
			return badRequest("This test type takes no %s.", k)
		}
	}
	return nil
}

// percent is a test group's weight. Part 2.2 types it as a JSON number,
// but splits are stored and bucketed as whole percents, so every number is
// decoded here (50, 50.0 and 5e1 alike, read as a JavaScript client reads
// it) and groups refuses one that is not a whole percent, in words about
// weights. Refusing in UnmarshalJSON instead would surface as the decoder's
// "must be a number", which is false for a number.
type percent float64

func (p *percent) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // as for any field: null leaves the zero value
	}
	if b[0] != '-' && (b[0] < '0' || b[0] > '9') {
		// Not a number: the decoder names the field and says it must be one.
		return errors.New("weight is not a JSON number")
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return err
	}
	*p = percent(f) // beyond float64 it is ±Inf, which whole refuses
	return nil
}

// whole is the weight as the domain's split: a whole percent from 0 to 100.
// Part 4.2 gives every group a weight: a missing one is not read as 0%.
func (p *percent) whole(i int) (int, error) {
	if p == nil {
		return 0, badRequest("testGroups[%d].weight is required: a whole percent of traffic; the weights sum to 100.", i)
	}
	f := float64(*p)
	if !(f >= 0 && f <= 100) || f != math.Trunc(f) {
		return 0, badRequest("testGroups[%d].weight is %s; weights are whole percents of traffic, from 0 to 100, that sum to 100.",
			i, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return int(f), nil
}

// groups maps testGroups in order (the first is the control) with content
// made by fn for each variant group, and for the control when it sets a
// change field. A group field the family does not take is refused.
func groups(in *createWire, allowed map[string]bool, fn func(g groupWire) (map[string]any, error)) ([]any, error) {
	out := make([]any, 0, len(in.TestGroups))
	for i, g := range in.TestGroups {
		split, err := g.Weight.whole(i)
		if err != nil {
			return nil, err
		}
		changes := false
		for k, set := range map[string]bool{"customCss": g.CustomCSS != "", "customJs": g.CustomJS != "",
			"destination": g.Destination != "", "template": g.Template != "", "themeId": g.ThemeID != "", "rates": g.Rates != nil,
			"images": g.Images != nil, "domChanges": g.DOMChanges != nil, "checkout": len(g.Checkout) > 0} {
			if set && !allowed[k] {
				return nil, badRequest("testGroups[%d].%s is not a field of this test type.", i, k)
			}
			changes = changes || set
		}
		content := map[string]any{}
		// The control's fields are mapped too when it has any, so the
		// domain judges them (it refuses a change on the control) instead of
		// their being dropped unseen (session audit 2, S2-6).
		if fn != nil && (i > 0 || changes) {
			if content, err = fn(g); err != nil {
				return nil, inGroup(i, err)
			}
		}
		out = append(out, map[string]any{"index": i, "name": g.Name, "split": split, "content": content})
	}
	return out, nil
}

// relativeField is a message that starts with a group's field
// ("images[0].productId must be …").
var relativeField = regexp.MustCompile(`^[a-z][A-Za-z]*(\[[0-9]+\])?[. ]`)

// inGroup makes a refusal of group i's fields say whose they are: the
// envelope has no param, and "rates[0].zoneId" alone does not say which
// group's rates.
func inGroup(i int, err error) error {
	e, ok := experiment.AsError(err)
	if !ok || e.Kind != experiment.KindInvalidRequest {
		return err
	}
	if relativeField.MatchString(e.Message) {
		return badRequest("testGroups[%d].%s", i, e.Message)
	}
	return badRequest("testGroups[%d]: %s", i, e.Message)
}

func money(shop *experiment.Shop, amount string) map[string]any {
	cur := shop.Currency
	if cur == "" {
		cur = "USD"
	}
	return map[string]any{"amount": amount, "currency": cur}
}

// priceV1 tests variant prices (duplicate-variant strategy): every variant
// group shows the listed prices, the control the current ones.
func priceV1(_ context.Context, _ *API, shop *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in, "products"); err != nil {
		return nil, err
	}
	ids := []string{}
	prices := []any{}
	for i, p := range in.Products {
		id, err := gid("Product", p.ProductID, "products["+strconv.Itoa(i)+"].productId")
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		for j, v := range p.Variants {
			vid, err := gid("ProductVariant", v.VariantID, "products["+strconv.Itoa(i)+"].variants["+strconv.Itoa(j)+"].variantId")
			if err != nil {
				return nil, err
			}
			vp := map[string]any{"product_variant_id": vid, "price": money(shop, v.Price)}
			if v.CompareAtPrice != nil {
				vp["compare_at_price"] = money(shop, *v.CompareAtPrice)
			}
			prices = append(prices, vp)
		}
	}
	gs, err := groups(in, nil, func(groupWire) (map[string]any, error) { return map[string]any{"prices": prices}, nil })
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "price", "shared": map[string]any{"price": map[string]any{"product_ids": ids}}, "test_groups": gs}, nil
}

// priceV2 lowers the price of the listed products at the cart (the cart
// transform strategy): each variant group carries a product discount, which
// the domain keeps as an offer test.
func priceV2(_ context.Context, _ *API, _ *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in, "products", "priceChangeType", "priceChange"); err != nil {
		return nil, err
	}
	ids, err := productIDs(in)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		// Without products the offer would discount the whole store.
		return nil, badRequest("products is required: a price test changes the price of at least one product.")
	}
	if in.PriceChangeType == nil || in.PriceChange == nil {
		return nil, badRequest("priceChangeType (PERCENTAGE or FIXED) and priceChange (a number) are required.")
	}
	kind := map[string]string{"PERCENTAGE": "percentage", "FIXED": "fixed_amount"}[*in.PriceChangeType]
	if kind == "" {
		return nil, badRequest("priceChangeType is PERCENTAGE or FIXED; got %q.", *in.PriceChangeType)
	}
	value := strconv.FormatFloat(*in.PriceChange, 'f', -1, 64)
	gs, err := groups(in, nil, func(g groupWire) (map[string]any, error) {
		return map[string]any{"offers": []any{map[string]any{"key": "price-change", "title": g.Name,
			"discount": map[string]any{"type": kind, "value": value}, "conditions": map[string]any{"product_ids": ids}}}}, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": "offer", "test_groups": gs}, nil
}

// productIDs are the global ids of products without variant pricing.
func productIDs(in *createWire) ([]string, error) {
	ids := []string{}
	for i, p := range in.Products {
		if p.Variants != nil {
			return nil, badRequest("products[%d].variants is taken by price v1 tests only.", i)
		}
		id, err := gid("Product", p.ProductID, "products["+strconv.Itoa(i)+"].productId")
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// content edits the storefront with CSS, JS and the visual editor's DOM
// changes, or shows other images of products (the domain's visual editor
// test). Its products are kept in
// shared.visual_editor.product_ids, where the domain checks them as it
// checks a price test's, with every product a group has images of added;
// a CSS or JS edit applies wherever it matches, so a content test may name
// none.
func content(_ context.Context, _ *API, _ *experiment.Shop, in *createWire) (map[string]any, error) {
	if err := only(in, "products"); err != nil {
		return nil, err
	}
	ids, err := productIDs(in)
	if err != nil {
		return nil, err
	}
	gs, err := groups(in, map[string]bool{"customCss": true, "customJs": true, "images": true, "domChanges": true}, func(g groupWire) (map[string]any, error) {
		c := map[string]any{}
		if g.CustomCSS != "" {
			c["custom_css"] = g.CustomCSS
		}
		if g.CustomJS != "" {
			c["custom_js"] = g.CustomJS
		}
		if g.DOMChanges != nil {
			changes := make([]experiment.DOMChange, len(g.DOMChanges))
			for i, d := range g.DOMChanges {
				changes[i] = experiment.DOMChange(d)
			}
			c["dom_changes"] = changes
		}
		if g.Images == nil {
			return c, nil
		}
		images := make([]any, 0, len(g.Images))
		for j, im := range g.Images {
			id, err := gid("Product", im.ProductID, "images["+strconv.Itoa(j)+"].productId")
			if err != nil {
				return nil, err
			}
			images = append(images, map[string]any{"product_id": id, "urls": im.ImageURLs})
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		c["images"] = images
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	body := map[string]any{"type": "visual_editor", "test_groups": gs}
	if len(ids) > 0 {
		body["shared"] = map[string]any{"visual_editor": map[string]any{"product_ids": ids}}
	}
	return body, nil
}
