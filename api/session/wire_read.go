package session

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
)

// The read shapes of part 2: a test summary (2.1) and a full test (2.2).
// Ids are the platform's numbers without the gid:// prefix; statuses and
// types are upper case.

type summaryWire struct {
	ID             string `json:"_id"`
	Name           string `json:"name"`
	Status         string `json:"status"`
	ExperimentType string `json:"experimentType"`
	CreatedAt      string `json:"createdAt"`
	UpdatedAt      string `json:"updatedAt"`
}

type fullWire struct {
	summaryWire
	Products   []productWire `json:"products"`
	TestGroups []groupWire   `json:"testGroups"`
	Settings   settingsWire  `json:"settings"`
	// PauseReason says why Lift paused the test by itself; absent otherwise.
	PauseReason string `json:"pauseReason,omitempty"`
	// Warnings are what webhooks raised on the test until lifted (a
	// published theme that changes what the test shows); absent when none.
	Warnings []experiment.Finding `json:"warnings,omitempty"`
}

type productWire struct {
	ProductID string        `json:"productId"`
	Variants  []variantWire `json:"variants,omitempty"`
}

type variantWire struct {
	VariantID      string  `json:"variantId"`
	Price          string  `json:"price"`
	CompareAtPrice *string `json:"compareAtPrice,omitempty"`
}

// groupWire is a test group; the fields after weight carry the change of a
// variant group of the test's type (see docs/session-api.md).
type groupWire struct {
	Name        string     `json:"name"`
	Weight      *percent   `json:"weight"` // required on create; nil when not sent
	CustomCSS   string     `json:"customCss,omitempty"`
	CustomJS    string     `json:"customJs,omitempty"`
	Destination string     `json:"destination,omitempty"`
	Template    string     `json:"template,omitempty"`
	ThemeID     string     `json:"themeId,omitempty"`
	Rates       []rateWire `json:"rates,omitempty"`
	// Images are an image (content) test's product images.
	Images []imageWire `json:"images,omitempty"`
	// DOMChanges are the visual editor's changes, in GrowthBook's
	// domMutations shape (docs/dom-changes.md).
	DOMChanges []domChangeWire `json:"domChanges,omitempty"`
	// Checkout is a checkout test's block settings, free JSON.
	Checkout json.RawMessage `json:"checkout,omitempty"`
}

// imageWire is what a content test's group shows for one product: its
// images in place of the product's own, in order.
type imageWire struct {
	ProductID string   `json:"productId"`
	ImageURLs []string `json:"imageUrls"`
}

// domChangeWire is one DOM change (experiment.DOMChange), named as the
// admin panel's other fields are.
type domChangeWire struct {
	Selector             string `json:"selector"`
	Action               string `json:"action"`
	Attribute            string `json:"attribute"`
	Value                string `json:"value,omitempty"`
	ParentSelector       string `json:"parentSelector,omitempty"`
	InsertBeforeSelector string `json:"insertBeforeSelector,omitempty"`
}

type rateWire struct {
	ZoneID string `json:"zoneId"`
	RateID string `json:"rateId,omitempty"`
	Name   string `json:"name"`
	Price  string `json:"price"`
}

type settingsWire struct {
	StartDate      *string         `json:"startDate"`
	EndDate        *string         `json:"endDate"`
	TargetingRules json.RawMessage `json:"targetingRules"`
	// Analysis and Guardrails are v1's fields of the same names.
	Analysis   experiment.AnalysisOptions `json:"analysis"`
	Guardrails []experiment.Guardrail     `json:"guardrails"`
}

// experimentTypes names each domain type as part 2.1 does. Price v2 tests
// (a discount applied by the cart transform) are the domain's offer tests;
// storefront edits are content tests.
var experimentTypes = map[experiment.Type]string{
	experiment.TypePrice:        "PRICE_TEST",
	experiment.TypeShipping:     "SHIPPING_TEST",
	experiment.TypeTheme:        "THEME_TEST",
	experiment.TypeTemplate:     "TEMPLATE_TEST",
	experiment.TypeURLRedirect:  "URL_REDIRECT_TEST",
	experiment.TypeCheckout:     "CHECKOUT_UI_TEST",
	experiment.TypeOffer:        "PRICE_CART_TRANSFORM_TEST",
	experiment.TypeVisualEditor: "CONTENT_TEST",
}

// experimentType of a combined test is its first bundled change's.
func experimentType(t *experiment.Test) string { return typeName(t.BundledTypes()) }

// typeName names the change types a test bundles as part 2.1 does.
func typeName(bundled []experiment.Type) string {
	for _, k := range bundled {
		if s, ok := experimentTypes[k]; ok {
			return s
		}
	}
	return "CONTENT_TEST"
}

// statusOf maps the domain's lifecycle onto part 2.1's five statuses: a
// preview is still a draft; ended and archived tests are stopped.
func statusOf(s experiment.Status) string {
	switch s {
	case experiment.StatusPreview:
		return "DRAFT"
	case experiment.StatusEnded, experiment.StatusArchived:
		return "STOPPED"
	}
	return strings.ToUpper(string(s))
}

func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func summaryOf(t *experiment.Test) summaryWire {
	return summaryWire{ID: idString(t.ID), Name: t.Name, Status: statusOf(t.Status), ExperimentType: experimentType(t),
		CreatedAt: isoTime(t.CreatedAt), UpdatedAt: isoTime(t.UpdatedAt)}
}

// fullOf renders a full test. Price variants are grouped under their
// products with the catalog mirror, which knows each variant's product.
func fullOf(ctx context.Context, svc *experiment.Service, shop *experiment.Shop, t *experiment.Test) (fullWire, error) {
	w := fullWire{summaryWire: summaryOf(t), Products: []productWire{}, TestGroups: []groupWire{}}
	for _, g := range t.Groups {
		w.TestGroups = append(w.TestGroups, groupOf(t, g))
	}
	if sc := t.Schedule; sc != nil {
		w.Settings.StartDate, w.Settings.EndDate = isoPtr(sc.StartAt), isoPtr(sc.EndAt)
	}
	w.Settings.TargetingRules = t.Audience
	w.Settings.Analysis, w.Settings.Guardrails, w.PauseReason = t.Analysis.Normalized(), t.Guardrails, t.PauseReason
	if w.Settings.Guardrails == nil {
		w.Settings.Guardrails = []experiment.Guardrail{}
	}
	if len(w.Settings.TargetingRules) == 0 {
		w.Settings.TargetingRules = json.RawMessage("{}")
	}
	products, err := productsOf(ctx, svc, shop, t)
	if err != nil {
		return w, err
	}
	w.Products = products
	return w, nil
}

func isoPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := isoTime(*t)
	return &s
}

// groupOf renders a group with the change its content carries.
func groupOf(t *experiment.Test, g experiment.Group) groupWire {
	split := percent(g.Split)
	w := groupWire{Name: g.Name, Weight: &split}
	if t.Type == experiment.TypeCheckout {
		// The checkout editor's block settings, shown as it stored them.
		if s := string(g.Content); s != "" && s != "{}" && s != "null" {
			w.Checkout = g.Content
		}
		return w
	}
	var c struct {
		CustomCSS   string `json:"custom_css"`
		CustomJS    string `json:"custom_js"`
		Destination string `json:"destination"`
		Template    string `json:"template"`
		ThemeID     string `json:"theme_id"`
		Rates       []struct {
			ZoneID string           `json:"zone_id"`
			RateID string           `json:"rate_id"`
			Name   string           `json:"name"`
			Price  experiment.Money `json:"price"`
		} `json:"rates"`
		Images     []experiment.ProductImages `json:"images"`
		DOMChanges []experiment.DOMChange     `json:"dom_changes"`
	}
	if t.Type == experiment.TypeCombined || json.Unmarshal(g.Content, &c) != nil {
		return w
	}
	w.CustomCSS, w.CustomJS, w.Destination, w.Template = c.CustomCSS, c.CustomJS, c.Destination, c.Template
	w.ThemeID = numericID(c.ThemeID)
	for _, d := range c.DOMChanges {
		w.DOMChanges = append(w.DOMChanges, domChangeWire(d))
	}
	for _, im := range c.Images {
		w.Images = append(w.Images, imageWire{ProductID: numericID(im.ProductID), ImageURLs: im.URLs})
	}
	for _, r := range c.Rates {
		w.Rates = append(w.Rates, rateWire{ZoneID: numericID(r.ZoneID), RateID: numericID(r.RateID), Name: r.Name, Price: r.Price.Amount})
	}
	return w
}

// productsOf lists a price test's products with the variant prices of its
// first variant group, or the product scope of an offer (price v2) test,
// then the products of a content (visual_editor) part not listed yet.
func productsOf(ctx context.Context, svc *experiment.Service, shop *experiment.Shop, t *experiment.Test) ([]productWire, error) {
	out := []productWire{}
	var price experiment.PriceShared
	if raw, ok := t.Shared[string(experiment.TypePrice)]; ok && json.Unmarshal(raw, &price) == nil {
		var prices []experiment.VariantPrice
		for _, g := range t.Groups {
			var pc experiment.PriceContent
			if g.Index > 0 && json.Unmarshal(g.Content, &pc) == nil && len(pc.Prices) > 0 {
				prices = pc.Prices
				break
			}
		}
		priced, err := pricedProducts(ctx, svc, shop, price.ProductIDs, prices)
		if err != nil {
			return nil, err
		}
		out = priced
	} else if t.Type == experiment.TypeOffer {
		for _, id := range offerProducts(t) {
			out = append(out, productWire{ProductID: numericID(id)})
		}
	}
	var visual experiment.VisualEditorShared
	if raw, ok := t.Shared[string(experiment.TypeVisualEditor)]; ok && json.Unmarshal(raw, &visual) == nil {
		for _, id := range visual.ProductIDs {
			if !slices.ContainsFunc(out, func(p productWire) bool { return p.ProductID == numericID(id) }) {
				out = append(out, productWire{ProductID: numericID(id)})
			}
		}
	}
	return out, nil
}

func pricedProducts(ctx context.Context, svc *experiment.Service, shop *experiment.Shop, ids []string, prices []experiment.VariantPrice) ([]productWire, error) {
	refs := experiment.CatalogRefs{}
	for _, p := range prices {
		refs.Variants = append(refs.Variants, p.ProductVariantID)
	}
	view, err := svc.LookupCatalog(ctx, shop, refs)
	if err != nil {
		return nil, err
	}
	out := make([]productWire, 0, len(ids))
	for _, id := range ids {
		pw := productWire{ProductID: numericID(id), Variants: []variantWire{}}
		for _, p := range prices {
			if view.Variants[p.ProductVariantID].ProductID != id {
				continue
			}
			vw := variantWire{VariantID: numericID(p.ProductVariantID), Price: p.Price.Amount}
			if p.CompareAtPrice != nil {
				vw.CompareAtPrice = &p.CompareAtPrice.Amount
			}
			pw.Variants = append(pw.Variants, vw)
		}
		out = append(out, pw)
	}
	return out, nil
}

// offerProducts are the products an offer test's first offer applies to.
func offerProducts(t *experiment.Test) []string {
	for _, g := range t.Groups {
		var oc experiment.OfferContent
		if g.Index > 0 && json.Unmarshal(g.Content, &oc) == nil && len(oc.Offers) > 0 && oc.Offers[0].Conditions != nil {
			return oc.Offers[0].Conditions.ProductIDs
		}
	}
	return nil
}
