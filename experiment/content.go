package experiment

import "encoding/json"

// This file is the documented schema of `shared` and of a test group's
// `content`, per type (docs/tests-api.md shows them with examples). A combined
// test carries one `shared` key per bundled type and, in each group's content,
// one key per bundled type holding that type's content.

// Money is the contract's money form: a decimal string and a currency code.
type Money struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

// PriceShared is `shared.price`.
type PriceShared struct {
	ProductIDs []string    `json:"product_ids"`
	Markets    []MarketRef `json:"markets,omitempty"`
}

// MarketRef lists a market of the shop in a price test. Countries omitted means
// all the market's countries; listed countries become priceable and must be
// priced for every variant a group changes.
type MarketRef struct {
	ID        string   `json:"id"`
	Countries []string `json:"countries,omitempty"`
}

// PriceContent is a price test group's content.
type PriceContent struct {
	Prices []VariantPrice `json:"prices"`
}

// VariantPrice is the price a group shows for one variant. Entries merge on
// product_variant_id in a PATCH.
type VariantPrice struct {
	ProductVariantID string         `json:"product_variant_id"`
	Price            Money          `json:"price"`
	CompareAtPrice   *Money         `json:"compare_at_price,omitempty"`
	CountryPrices    []CountryPrice `json:"country_prices,omitempty"`
}

// CountryPrice is a variant's price in one country of a listed market, in the
// market's currency.
type CountryPrice struct {
	Country string `json:"country"`
	Price   Money  `json:"price"`
}

// ShippingShared is `shared.shipping`.
type ShippingShared struct {
	ZoneIDs []string `json:"zone_ids"`
}

// ShippingContent is a shipping test group's content: rates per declared zone.
type ShippingContent struct {
	Rates []Rate `json:"rates"`
}

// Rate is a shipping rate a group shows in a zone. RateID names the zone's
// existing rate it replaces; without it the rate is added.
type Rate struct {
	ZoneID string `json:"zone_id"`
	RateID string `json:"rate_id,omitempty"`
	Name   string `json:"name"`
	Price  Money  `json:"price"`
}

// PathRule scopes a theme test to storefront paths.
type PathRule struct {
	Path      string `json:"path"`
	MatchType string `json:"match_type,omitempty"` // exact (default) or prefix
}

// ThemeShared is `shared.theme` (optional for a theme test).
type ThemeShared struct {
	PathRules []PathRule `json:"path_rules,omitempty"`
}

// ThemeContent is a theme test group's content: the theme its visitors see.
type ThemeContent struct {
	ThemeID string `json:"theme_id,omitempty"`
}

// TemplateShared is `shared.template`.
type TemplateShared struct {
	ThemeID string `json:"theme_id"`
}

// TemplateContent names the alternate template (e.g. "product.alternate") of
// the shared theme that a group's visitors see.
type TemplateContent struct {
	Template string `json:"template,omitempty"`
}

// URLRedirectShared is `shared.url_redirect`: which landing URLs redirect.
type URLRedirectShared struct {
	SourcePath string `json:"source_path"`
	MatchType  string `json:"match_type,omitempty"` // exact (default) or prefix
}

// URLRedirectContent is a url_redirect group's content.
type URLRedirectContent struct {
	Destination string `json:"destination,omitempty"`
}

// OfferContent is an offer test group's content: cart offers, merged on key.
type OfferContent struct {
	Offers []Offer `json:"offers"`
}

// Offer is one cart offer.
type Offer struct {
	Key          string           `json:"key"`
	Title        string           `json:"title"`
	Discount     Discount         `json:"discount"`
	Conditions   *OfferConditions `json:"conditions,omitempty"`
	CombinesWith []string         `json:"combines_with,omitempty"` // order, product, shipping
}

// Discount is what an offer takes off: `percentage` (value 0–100),
// `fixed_amount` (value in the shop's currency) or `free_shipping`.
type Discount struct {
	Type              string `json:"type"`
	Value             string `json:"value,omitempty"`
	MaxDiscountAmount *Money `json:"max_discount_amount,omitempty"` // admin panel only
}

// OfferConditions restricts when an offer applies.
type OfferConditions struct {
	MinSubtotal   *Money   `json:"min_subtotal,omitempty"`
	MaxSubtotal   *Money   `json:"max_subtotal,omitempty"`
	MinQuantity   *int     `json:"min_quantity,omitempty"`
	MaxQuantity   *int     `json:"max_quantity,omitempty"`
	ProductIDs    []string `json:"product_ids,omitempty"`
	CollectionIDs []string `json:"collection_ids,omitempty"`
}

// VisualEditorShared is `shared.visual_editor` (optional): the products a
// content test is about, as the admin panel's content creation names them.
// The edit is not limited to them; they scope the product-based analytics
// and are what remove-products takes out.
type VisualEditorShared struct {
	ProductIDs []string `json:"product_ids,omitempty"`
}

// VisualEditorContent is a storefront edit. DOM changes are authored in the
// admin panel and readable here; a group holding them refuses content writes.
type VisualEditorContent struct {
	CustomCSS string `json:"custom_css,omitempty"`
	CustomJS  string `json:"custom_js,omitempty"`
	// Images make an image test: the group sees these in place of the
	// products' own (docs/image-tests.md).
	Images     []ProductImages `json:"images,omitempty"`
	DOMChanges []DOMChange     `json:"dom_changes,omitempty"`
}

// DOMChange is one change the visual editor makes to the elements a
// selector matches, in the shape GrowthBook's visual editor writes (its
// domMutations), so a change authored there means the same here
// (docs/dom-changes.md). Attribute is html (the element's content), class,
// position (a move: set into ParentSelector, before InsertBeforeSelector)
// or an attribute's name; Action is set, append or remove.
type DOMChange struct {
	Selector             string `json:"selector"`
	Action               string `json:"action"`
	Attribute            string `json:"attribute"`
	Value                string `json:"value,omitempty"`
	ParentSelector       string `json:"parent_selector,omitempty"`
	InsertBeforeSelector string `json:"insert_before_selector,omitempty"`
}

// MaxDOMChanges is the most DOM changes a group makes.
const MaxDOMChanges = 100

// ProductImages are the images a group shows for one product, in the order
// of the product's images on the page (the first takes the hero's place);
// the product's further images stay its own.
type ProductImages struct {
	ProductID string   `json:"product_id"`
	URLs      []string `json:"urls"`
}

// MaxImageURLs is the most images a group shows for one product.
const MaxImageURLs = 20

// sharedRule reports whether a type must carry its `shared` key, and
// whether it may carry one at all.
func sharedRule(t Type) (required, allowed bool) {
	switch t {
	case TypePrice, TypeShipping, TypeTemplate, TypeURLRedirect:
		return true, true
	case TypeTheme, TypeVisualEditor:
		return false, true
	}
	return false, false
}

// editorOwned reports whether a group's content holds something the API can
// read but not rewrite: DOM changes of a visual edit, any checkout content.
func editorOwned(t Type, content json.RawMessage) bool {
	if isEmptyJSON(content) {
		return false
	}
	switch t {
	case TypeCheckout:
		return true
	case TypeVisualEditor:
		var c struct {
			DOMChanges json.RawMessage `json:"dom_changes"`
		}
		return json.Unmarshal(content, &c) == nil && !isEmptyJSON(c.DOMChanges)
	case TypeCombined:
		var m map[string]json.RawMessage
		if json.Unmarshal(content, &m) != nil {
			return false
		}
		for k, v := range m {
			if editorOwned(Type(k), v) {
				return true
			}
		}
	}
	return false
}

// holdsCheckout reports whether a group's content of a t test has
// checkout content (its own type's, or a combined test's checkout key),
// which only the checkout editor writes: a refusal names that editor, not
// the visual editor's DOM changes (v1 audit 2 V9).
func holdsCheckout(t Type, content json.RawMessage) bool {
	if t == TypeCheckout {
		return !isEmptyJSON(content)
	}
	var m map[string]json.RawMessage
	return t == TypeCombined && json.Unmarshal(content, &m) == nil && !isEmptyJSON(m[string(TypeCheckout)])
}

// EditorOwned reports whether group g of t holds admin-panel-only content.
func (t *Test) EditorOwned(g *Group) bool { return editorOwned(t.Type, g.Content) }

func isEmptyJSON(raw json.RawMessage) bool {
	s := string(raw)
	return s == "" || s == "null" || s == "{}" || s == "[]"
}

// CheckReadable answers 501 not_implemented for a price, shipping, offer or
// url_redirect test whose stored form (made in the admin panel) does not fit
// the API's schema of its type: the API cannot show or rewrite it faithfully,
// so it is read and run in the admin panel (part 7).
func CheckReadable(t *Test) error {
	if t.Type == TypeCheckout {
		// Only the admin panel's checkout editor reads a checkout test (contract: 501).
		return Errorf(KindNotImplemented, "not_implemented",
			"This checkout test was made in the admin panel in a form the API cannot read back; read and run it there.")
	}
	switch t.Type {
	case TypePrice, TypeShipping, TypeOffer, TypeURLRedirect:
	default:
		return nil
	}
	shared, group := schemaOf(t.Type)
	unreadable := Errorf(KindNotImplemented, "not_implemented",
		"This %s test was made in the admin panel in a form the API cannot read back; read and run it there.", t.Type)
	if raw, ok := t.Shared[string(t.Type)]; ok && shared != nil && !isEmptyJSON(raw) && strictUnmarshal(raw, shared()) != nil {
		return unreadable
	}
	for _, g := range t.Groups {
		if !isEmptyJSON(g.Content) && strictUnmarshal(g.Content, group()) != nil {
			return unreadable
		}
	}
	return nil
}

// schemaOf returns constructors of a type's shared and group content structs.
func schemaOf(t Type) (shared, group func() any) {
	switch t {
	case TypePrice:
		return func() any { return &PriceShared{} }, func() any { return &PriceContent{} }
	case TypeShipping:
		return func() any { return &ShippingShared{} }, func() any { return &ShippingContent{} }
	case TypeURLRedirect:
		return func() any { return &URLRedirectShared{} }, func() any { return &URLRedirectContent{} }
	case TypeOffer:
		return nil, func() any { return &OfferContent{} }
	}
	return nil, func() any { return &map[string]json.RawMessage{} }
}
