package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Product caps per price test (part 2.5).
const (
	ProductLimit       = 100
	RaisedProductLimit = 500
	maxGroups          = 10
	maxNameLen         = 255
)

var (
	gidPattern    = regexp.MustCompile(`^gid://[a-z0-9_-]+/[A-Za-z]+/[0-9]+$`)
	amountPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,4})?$`)
	countryCode   = regexp.MustCompile(`^[A-Z]{2}$`)
)

// Refuse is a 422 with one blocking finding, so the top-level code and param
// repeat it as part 7 requires.
func Refuse(code, param, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Kind: KindValidation, Code: code, Message: msg, Param: param,
		Findings: []Finding{{Severity: SeverityError, Code: code, Message: msg, Param: param}}}
}

// ValidateMode says how much of a test is checked.
type ValidateMode int

const (
	// ValidateFull runs every rule, reading the catalog: create, PATCH of a
	// draft, start.
	ValidateFull ValidateMode = iota
	// ValidateOpenFields checks only what stays editable after launch (names,
	// splits, schedule): a launched test is not refused because its catalog
	// has since changed.
	ValidateOpenFields
)

// Validate runs the per-type rules of part 7 on t. It returns the warnings of
// a valid test, or a KindValidation *Error whose Code and Param repeat the
// first blocking finding and whose Findings hold all of them. now is the
// injected clock's time; cat may be nil in ValidateOpenFields mode.
func Validate(ctx context.Context, shop *Shop, t *Test, cat Catalog, mode ValidateMode, now time.Time) ([]Finding, error) {
	v := &validator{shop: shop, t: t, now: now, groups: make([]groupContent, len(t.Groups))}
	v.top()
	v.groupStructure()
	if mode == ValidateFull {
		v.decodeShared()
		v.decodeGroups()
		v.collectRefs()
		if !v.refs.empty() {
			view, err := cat.Lookup(ctx, t.ShopID, v.refs)
			if err != nil {
				return nil, fmt.Errorf("experiment.Validate: %w", err)
			}
			v.cat = view
		}
		if v.cat == nil {
			v.cat = &CatalogView{}
		}
		v.checkShared()
		v.checkGroups()
	}
	// Findings read in the body's order: the test's own fields, then shared,
	// then the groups.
	sort.SliceStable(v.findings, func(i, j int) bool { return section(v.findings[i].Param) < section(v.findings[j].Param) })
	return v.result()
}

func section(param string) int {
	switch {
	case strings.HasPrefix(param, "shared"):
		return 1
	case strings.HasPrefix(param, "test_groups"):
		return 2
	}
	return 0
}

type groupContent struct {
	prefix   map[Type]string // param prefix of each type's content
	price    *PriceContent
	shipping *ShippingContent
	theme    *ThemeContent
	template *TemplateContent
	redirect *URLRedirectContent
	offer    *OfferContent
	visual   *VisualEditorContent
}

type validator struct {
	shop     *Shop
	t        *Test
	now      time.Time
	findings []Finding
	refs     CatalogRefs
	cat      *CatalogView

	price    *PriceShared
	shipping *ShippingShared
	theme    *ThemeShared
	template *TemplateShared
	redirect *URLRedirectShared
	groups   []groupContent
}

func (v *validator) fail(code, param, format string, args ...any) {
	v.findings = append(v.findings, Finding{Severity: SeverityError, Code: code, Param: param,
		Message: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(code, param, format string, args ...any) {
	v.findings = append(v.findings, Finding{Severity: SeverityWarning, Code: code, Param: param,
		Message: fmt.Sprintf(format, args...)})
}

func (v *validator) result() ([]Finding, error) {
	var warnings []Finding
	var first *Finding
	for i, f := range v.findings {
		if f.Severity == SeverityError && first == nil {
			first = &v.findings[i]
		}
		if f.Severity == SeverityWarning {
			warnings = append(warnings, f)
		}
	}
	if first == nil {
		return warnings, nil
	}
	return nil, &Error{Kind: KindValidation, Code: first.Code, Message: first.Message,
		Param: first.Param, Findings: v.findings}
}

// top checks the test's own fields.
func (v *validator) top() {
	t := v.t
	if strings.TrimSpace(t.Name) == "" {
		v.fail("invalid_request", "name", "A test needs a name.")
	} else if len(t.Name) > maxNameLen {
		v.fail("invalid_request", "name", "name is at most %d characters.", maxNameLen)
	}
	if t.PrimaryMetric != nil && !t.PrimaryMetric.Known() {
		v.fail("invalid_request", "primary_metric", "primary_metric %q is not one of %v.", *t.PrimaryMetric, Metrics)
	}
	if t.TrafficAllocation < 1 || t.TrafficAllocation > 100 {
		v.fail("invalid_request", "traffic_allocation",
			"traffic_allocation is a whole percentage from 1 to 100; got %d.", t.TrafficAllocation)
	}
	if len(t.Audience) > 0 && string(t.Audience) != "null" && !bytes.HasPrefix(bytes.TrimSpace(t.Audience), []byte("{")) {
		v.fail("invalid_request", "audience", "audience is an object or null.")
	}
	if s := t.Schedule; s != nil {
		if s.StartAt != nil && s.EndAt != nil && !s.EndAt.After(*s.StartAt) {
			v.fail("invalid_request", "schedule.end_at", "schedule.end_at must be after schedule.start_at.")
		}
		// A running test whose end_at has passed is simply due to end; only a
		// test that has not launched cannot be given a window already over.
		if s.EndAt != nil && !s.EndAt.After(v.now) && !t.Launched() && t.Status != StatusArchived {
			v.fail("invalid_request", "schedule.end_at", "schedule.end_at is in the past.")
		}
		if s.StartAt != nil && !s.StartAt.After(v.now) && !t.Launched() {
			v.warn("schedule_start_passed", "schedule.start_at",
				"schedule.start_at has passed; the scheduler starts the test at its next pass.")
		}
	}
}

// groupStructure checks indexes, names and splits: the rules that stay in force
// after launch.
func (v *validator) groupStructure() {
	gs := v.t.Groups
	if len(gs) < 2 || len(gs) > maxGroups {
		v.fail("invalid_request", "test_groups", "A test has from 2 to %d test groups; got %d.", maxGroups, len(gs))
		if len(gs) == 0 {
			return
		}
	}
	seenIndex := map[int]bool{}
	seenName := map[string]int{}
	sum := 0
	hasControl := false
	for i, g := range gs {
		p := fmt.Sprintf("test_groups[%d]", i)
		if g.Index < 0 {
			v.fail("invalid_request", p+".index", "A test group index is a whole number from 0.")
		}
		if seenIndex[g.Index] {
			v.fail("invalid_request", p+".index", "Test group index %d appears twice.", g.Index)
		}
		seenIndex[g.Index] = true
		hasControl = hasControl || g.Index == 0
		name := strings.ToLower(strings.TrimSpace(g.Name))
		switch {
		case name == "":
			v.fail("invalid_request", p+".name", "Every test group needs a name.")
		case len(g.Name) > maxNameLen:
			v.fail("invalid_request", p+".name", "A group name is at most %d characters.", maxNameLen)
		default:
			if j, dup := seenName[name]; dup {
				v.fail("duplicate_group_name", p+".name", "Test groups %d and %d are both named %q.", j, i, g.Name)
			}
			seenName[name] = i
		}
		if g.Split < 0 || g.Split > 100 {
			v.fail("invalid_request", p+".split", "split is a whole percentage from 0 to 100; got %d.", g.Split)
		}
		sum += g.Split
	}
	if !hasControl {
		v.fail("control_group_invalid", "test_groups", "The control is the test group with index 0; none was sent.")
	}
	if sum != 100 {
		v.fail("split_sum_invalid", "test_groups", "The splits of the test groups add up to %d; they must add up to 100.", sum)
	}
}

// decodeInto decodes raw strictly into dst; an unusable value becomes an
// invalid_request finding at param.
func (v *validator) decodeInto(raw json.RawMessage, dst any, param string) bool {
	if isEmptyJSON(raw) {
		return true
	}
	if err := strictUnmarshal(raw, dst); err != nil {
		p, msg := jsonErrorParam(err)
		v.fail("invalid_request", joinParam(param, p), "%s", msg)
		return false
	}
	return true
}

func (v *validator) decodeShared() {
	t := v.t
	bundled := map[Type]bool{}
	if t.Type == TypeCombined {
		for k := range t.Shared {
			kt := Type(k)
			if !kt.Known() || kt == TypeCombined || kt == TypeCheckout {
				v.fail("invalid_request", "shared."+k, "A combined test cannot bundle %q.", k)
				continue
			}
			bundled[kt] = true
		}
		if len(bundled) < 2 {
			v.fail("invalid_request", "shared",
				"A combined test carries one shared key per bundled change type, at least two.")
		}
	} else {
		for k := range sortedKeys(t.Shared) {
			if Type(k) != t.Type {
				v.fail("invalid_request", "shared."+k, "A %s test carries only the shared key %q.", t.Type, t.Type)
			}
		}
		required, allowed := sharedRule(t.Type)
		_, has := t.Shared[string(t.Type)]
		if required && !has {
			v.fail("invalid_request", "shared."+string(t.Type), "A %s test needs shared.%s.", t.Type, t.Type)
		}
		if !allowed && has && !isEmptyJSON(t.Shared[string(t.Type)]) {
			v.fail("invalid_request", "shared."+string(t.Type), "A %s test carries no shared configuration.", t.Type)
		}
		bundled[t.Type] = true
	}
	for _, k := range Types {
		if !bundled[k] {
			continue
		}
		raw := t.Shared[string(k)]
		p := "shared." + string(k)
		switch k {
		case TypePrice:
			v.price = &PriceShared{}
			v.decodeInto(raw, v.price, p)
		case TypeShipping:
			v.shipping = &ShippingShared{}
			v.decodeInto(raw, v.shipping, p)
		case TypeTheme:
			v.theme = &ThemeShared{}
			v.decodeInto(raw, v.theme, p)
		case TypeTemplate:
			v.template = &TemplateShared{}
			v.decodeInto(raw, v.template, p)
		case TypeURLRedirect:
			v.redirect = &URLRedirectShared{}
			v.decodeInto(raw, v.redirect, p)
		}
	}
}

func (v *validator) decodeGroups() {
	bundled := v.t.BundledTypes()
	for i, g := range v.t.Groups {
		base := fmt.Sprintf("test_groups[%d].content", i)
		gc := &v.groups[i]
		gc.prefix = map[Type]string{}
		parts := map[Type]json.RawMessage{}
		if v.t.Type == TypeCombined {
			var m map[string]json.RawMessage
			if !v.decodeInto(g.Content, &m, base) {
				continue
			}
			for k := range sortedKeys(m) {
				if !containsType(bundled, Type(k)) {
					v.fail("invalid_request", base+"."+k, "%q is not a change type this test bundles (see shared).", k)
					continue
				}
				parts[Type(k)] = m[k]
			}
			for _, k := range bundled {
				gc.prefix[k] = base + "." + string(k)
			}
		} else {
			parts[v.t.Type] = g.Content
			gc.prefix[v.t.Type] = base
		}
		for _, k := range bundled {
			raw, ok := parts[k]
			if !ok {
				continue
			}
			p := gc.prefix[k]
			switch k {
			case TypePrice:
				gc.price = &PriceContent{}
				v.decodeInto(raw, gc.price, p)
			case TypeShipping:
				gc.shipping = &ShippingContent{}
				v.decodeInto(raw, gc.shipping, p)
			case TypeTheme:
				gc.theme = &ThemeContent{}
				v.decodeInto(raw, gc.theme, p)
			case TypeTemplate:
				gc.template = &TemplateContent{}
				v.decodeInto(raw, gc.template, p)
			case TypeURLRedirect:
				gc.redirect = &URLRedirectContent{}
				v.decodeInto(raw, gc.redirect, p)
			case TypeOffer:
				gc.offer = &OfferContent{}
				v.decodeInto(raw, gc.offer, p)
			case TypeVisualEditor:
				gc.visual = &VisualEditorContent{}
				v.decodeInto(raw, gc.visual, p)
			}
		}
	}
}

func (v *validator) collectRefs() {
	r := &v.refs
	if v.price != nil {
		r.Products = append(r.Products, v.price.ProductIDs...)
		for _, m := range v.price.Markets {
			r.Markets = append(r.Markets, m.ID)
		}
	}
	if v.shipping != nil {
		r.Zones = append(r.Zones, v.shipping.ZoneIDs...)
	}
	if v.template != nil && v.template.ThemeID != "" {
		r.Themes = append(r.Themes, v.template.ThemeID)
	}
	for _, gc := range v.groups {
		if gc.price != nil {
			for _, p := range gc.price.Prices {
				r.Variants = append(r.Variants, p.ProductVariantID)
			}
		}
		if gc.theme != nil && gc.theme.ThemeID != "" {
			r.Themes = append(r.Themes, gc.theme.ThemeID)
		}
		if gc.offer != nil {
			for _, o := range gc.offer.Offers {
				if c := o.Conditions; c != nil {
					r.Products = append(r.Products, c.ProductIDs...)
					r.Collections = append(r.Collections, c.CollectionIDs...)
				}
			}
		}
	}
}

func (v *validator) checkShared() {
	if p := v.price; p != nil {
		v.checkPriceShared(p)
	}
	if s := v.shipping; s != nil {
		if len(s.ZoneIDs) == 0 {
			v.fail("invalid_request", "shared.shipping.zone_ids", "shared.shipping.zone_ids needs at least one delivery zone.")
		}
		seen := map[string]bool{}
		for i, z := range s.ZoneIDs {
			p := fmt.Sprintf("shared.shipping.zone_ids[%d]", i)
			switch {
			case !gidPattern.MatchString(z) || !strings.Contains(z, "/DeliveryZone/"):
				v.fail("invalid_request", p, "%q is not a delivery zone id (gid://<platform>/DeliveryZone/<number>).", z)
			case seen[z]:
				v.fail("duplicate_change", p, "Zone %s is listed twice.", z)
			default:
				if _, ok := v.cat.Zones[z]; !ok {
					v.fail("zone_not_found", p, "This shop has no delivery zone %s.", z)
				}
			}
			seen[z] = true
		}
	}
	if th := v.theme; th != nil {
		for i, r := range th.PathRules {
			v.checkMatch(r.Path, r.MatchType, fmt.Sprintf("shared.theme.path_rules[%d]", i))
		}
	}
	if tp := v.template; tp != nil {
		if tp.ThemeID == "" {
			v.fail("invalid_request", "shared.template.theme_id", "A template test needs shared.template.theme_id.")
		} else if _, ok := v.cat.Themes[tp.ThemeID]; !ok {
			v.fail("theme_not_found", "shared.template.theme_id", "This shop has no theme %s.", tp.ThemeID)
		}
	}
	if r := v.redirect; r != nil {
		v.checkMatch(r.SourcePath, r.MatchType, "shared.url_redirect")
	}
}

func (v *validator) checkMatch(path, matchType, p string) {
	if !strings.HasPrefix(path, "/") {
		field := ".path"
		if strings.HasPrefix(p, "shared.url_redirect") {
			field = ".source_path"
		}
		v.fail("invalid_request", p+field, "A path starts with \"/\"; got %q.", path)
	}
	if matchType != "" && matchType != "exact" && matchType != "prefix" {
		v.fail("match_type_unsupported", p+".match_type",
			"match_type %q is authored in the admin panel; the API writes exact and prefix.", matchType)
	}
}

func (v *validator) productCap() int {
	if v.shop != nil && v.shop.RaisedProductLimit {
		return RaisedProductLimit
	}
	return ProductLimit
}

func (v *validator) checkPriceShared(p *PriceShared) {
	n := len(p.ProductIDs)
	if n == 0 {
		v.fail("invalid_request", "shared.price.product_ids", "shared.price.product_ids needs at least one product.")
	}
	if limit := v.productCap(); n > limit {
		v.fail("product_limit_exceeded", "shared.price.product_ids",
			"A price test on this shop carries at most %d products; %d were sent.", limit, n)
		return
	}
	seen := map[string]bool{}
	for i, id := range p.ProductIDs {
		param := fmt.Sprintf("shared.price.product_ids[%d]", i)
		switch {
		case !gidPattern.MatchString(id):
			v.fail("invalid_request", param, "%q is not a platform global id.", id)
		case seen[id]:
			v.fail("duplicate_change", param, "Product %s is listed twice.", id)
		default:
			if _, ok := v.cat.Products[id]; !ok {
				v.fail("product_not_found", param, "This shop has no product %s.", id)
			}
		}
		seen[id] = true
	}
	for i, m := range p.Markets {
		param := fmt.Sprintf("shared.price.markets[%d]", i)
		cm, ok := v.cat.Markets[m.ID]
		if !ok {
			v.fail("market_pricing_incomplete", param+".id", "This shop has no market %q.", m.ID)
			continue
		}
		for j, c := range m.Countries {
			if !containsString(cm.Countries, c) {
				v.fail("market_pricing_incomplete", fmt.Sprintf("%s.countries[%d]", param, j),
					"Market %s does not sell to %q.", cm.Name, c)
			}
		}
	}
}

// marketCountries maps each priceable country to its market's currency.
func (v *validator) marketCountries() map[string]string {
	out := map[string]string{}
	if v.price == nil {
		return out
	}
	for _, m := range v.price.Markets {
		cm, ok := v.cat.Markets[m.ID]
		if !ok {
			continue
		}
		countries := m.Countries
		if len(countries) == 0 {
			countries = cm.Countries
		}
		for _, c := range countries {
			out[c] = cm.Currency
		}
	}
	return out
}

func (v *validator) checkGroups() {
	bundled := v.t.BundledTypes()
	for i := range v.t.Groups {
		g := &v.t.Groups[i]
		gc := &v.groups[i]
		control := g.Index == 0
		changes := 0
		for _, k := range bundled {
			p := gc.prefix[k]
			var n int
			switch k {
			case TypePrice:
				n = v.checkPrices(gc.price, p, control)
			case TypeShipping:
				n = v.checkRates(gc.shipping, p, control)
			case TypeTheme:
				if gc.theme != nil && gc.theme.ThemeID != "" {
					n = 1
					if _, ok := v.cat.Themes[gc.theme.ThemeID]; !ok {
						v.fail("theme_not_found", p+".theme_id", "This shop has no theme %s.", gc.theme.ThemeID)
					}
				}
			case TypeTemplate:
				if gc.template != nil && gc.template.Template != "" {
					n = 1
					th, ok := v.cat.Themes[v.template.ThemeID]
					if ok && !containsString(th.Templates, gc.template.Template) {
						v.fail("template_not_found", p+".template", "Theme %s has no template %q.", th.Name, gc.template.Template)
					}
				}
			case TypeURLRedirect:
				if gc.redirect != nil && gc.redirect.Destination != "" {
					n = 1
					d := gc.redirect.Destination
					if !strings.HasPrefix(d, "/") && !strings.HasPrefix(d, "https://") {
						v.fail("invalid_request", p+".destination", "A destination is a path (\"/…\") or an https URL; got %q.", d)
					}
				}
			case TypeOffer:
				n = v.checkOffers(gc.offer, p, control)
			case TypeVisualEditor:
				if c := gc.visual; c != nil {
					if c.CustomCSS != "" || c.CustomJS != "" {
						n = 1
					}
					if !isEmptyJSON(c.DOMChanges) {
						n = 1
					}
				}
			}
			if control && n > 0 && k != TypeShipping && k != TypeOffer {
				v.fail("control_group_invalid", p, "The control group (index 0) shows the store as it is; it carries no changes.")
			}
			changes += n
			if !control && n == 0 && v.t.Type != TypeCombined {
				v.failNothingToTest(k, p)
			}
		}
		if !control && changes == 0 && v.t.Type == TypeCombined {
			v.fail("change_required", fmt.Sprintf("test_groups[%d].content", i),
				"Test group %q changes nothing; give it at least one change.", g.Name)
		}
	}
}

func (v *validator) failNothingToTest(k Type, p string) {
	switch k {
	case TypeTemplate:
		v.fail("template_required", p+".template", "Every variant group of a template test names a template.")
	case TypeURLRedirect:
		v.fail("destination_required", p+".destination", "Every variant group of a url_redirect test needs a destination.")
	case TypeShipping:
		v.fail("rate_required", p+".rates", "Every variant group of a shipping test needs at least one rate.")
	case TypeOffer:
		v.fail("offer_required", p+".offers", "Every variant group of an offer test needs at least one offer.")
	case TypePrice:
		v.fail("change_required", p+".prices", "Every variant group of a price test changes at least one price.")
	case TypeTheme:
		v.fail("change_required", p+".theme_id", "Every variant group of a theme test names a theme.")
	default:
		v.fail("change_required", p, "This test group changes nothing.")
	}
}

func (v *validator) checkMoney(m Money, p, currency string) bool {
	if !amountPattern.MatchString(m.Amount) {
		v.fail("invalid_request", p+".amount", "An amount is a decimal string such as \"19.99\"; got %q.", m.Amount)
		return false
	}
	if currency != "" && m.Currency != currency {
		v.fail("currency_mismatch", p+".currency", "This amount must be in %s; got %q.", currency, m.Currency)
		return false
	}
	return true
}

func (v *validator) shopCurrency() string {
	if v.shop == nil {
		return ""
	}
	return v.shop.Currency
}

// checkPrices validates a price group's content and returns how many changes it makes.
func (v *validator) checkPrices(c *PriceContent, p string, control bool) int {
	if c == nil {
		return 0
	}
	if control {
		return len(c.Prices)
	}
	products := map[string]bool{}
	if v.price != nil {
		for _, id := range v.price.ProductIDs {
			products[id] = true
		}
	}
	markets := v.marketCountries()
	seen := map[string]bool{}
	for j, vp := range c.Prices {
		ep := fmt.Sprintf("%s.prices[%d]", p, j)
		id := vp.ProductVariantID
		if seen[id] {
			v.fail("duplicate_change", ep+".product_variant_id", "Variant %s is priced twice in this group.", id)
			continue
		}
		seen[id] = true
		variant, ok := v.cat.Variants[id]
		switch {
		case !gidPattern.MatchString(id):
			v.fail("invalid_request", ep+".product_variant_id", "%q is not a platform global id.", id)
			continue
		case !ok:
			v.fail("product_not_found", ep+".product_variant_id", "This shop has no product variant %s.", id)
			continue
		case !products[variant.ProductID]:
			v.fail("product_not_found", ep+".product_variant_id",
				"Variant %s belongs to product %s, which is not in shared.price.product_ids.", id, variant.ProductID)
			continue
		}
		if v.checkMoney(vp.Price, ep+".price", v.shopCurrency()) {
			if variant.Cost != "" && decLess(vp.Price.Amount, variant.Cost) {
				v.warn("price_below_cost", ep+".price.amount",
					"%s is below the variant's unit cost %s; every sale of it loses money.", vp.Price.Amount, variant.Cost)
			}
		}
		if vp.CompareAtPrice != nil && v.checkMoney(*vp.CompareAtPrice, ep+".compare_at_price", v.shopCurrency()) &&
			decLess(vp.CompareAtPrice.Amount, vp.Price.Amount) {
			v.warn("compare_at_below_price", ep+".compare_at_price.amount",
				"compare_at_price is below price; the storefront shows no saving.")
		}
		priced := map[string]bool{}
		for k, cp := range vp.CountryPrices {
			cpp := fmt.Sprintf("%s.country_prices[%d]", ep, k)
			cur, covered := markets[cp.Country]
			switch {
			case !countryCode.MatchString(cp.Country):
				v.fail("invalid_request", cpp+".country", "A country is a two-letter code; got %q.", cp.Country)
			case !covered:
				v.fail("market_pricing_incomplete", cpp+".country",
					"Country %s is not covered by a market in shared.price.markets; list its market to price it.", cp.Country)
			case priced[cp.Country]:
				v.fail("duplicate_change", cpp+".country", "Country %s is priced twice for this variant.", cp.Country)
			default:
				v.checkMoney(cp.Price, cpp+".price", cur)
			}
			priced[cp.Country] = true
		}
		var missing []string
		for c := range markets {
			if !priced[c] {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			v.fail("market_pricing_incomplete", ep+".country_prices",
				"The listed markets make %s priceable; price this variant there too (countries are never dropped silently).",
				strings.Join(missing, ", "))
		}
	}
	return len(c.Prices)
}

func (v *validator) checkRates(c *ShippingContent, p string, control bool) int {
	if c == nil || len(c.Rates) == 0 {
		return 0
	}
	if control {
		v.fail("control_offers_rates", p+".rates", "The control group keeps the store's own shipping rates; it carries none.")
		return len(c.Rates)
	}
	declared := map[string]bool{}
	if v.shipping != nil {
		for _, z := range v.shipping.ZoneIDs {
			declared[z] = true
		}
	}
	seen := map[string]bool{}
	for j, r := range c.Rates {
		rp := fmt.Sprintf("%s.rates[%d]", p, j)
		if !declared[r.ZoneID] {
			v.fail("zone_not_declared", rp+".zone_id", "Zone %q is not in shared.shipping.zone_ids.", r.ZoneID)
			continue
		}
		key := r.ZoneID + "|" + r.RateID
		if r.RateID == "" {
			key = r.ZoneID + "|name:" + strings.ToLower(r.Name)
		}
		if seen[key] {
			v.fail("duplicate_change", rp, "This group changes the same rate of zone %s twice.", r.ZoneID)
			continue
		}
		seen[key] = true
		if r.RateID != "" {
			if z, ok := v.cat.Zones[r.ZoneID]; ok && !hasRate(z, r.RateID) {
				v.fail("rate_not_found", rp+".rate_id", "Zone %s has no rate %s.", z.Name, r.RateID)
			}
		}
		if strings.TrimSpace(r.Name) == "" {
			v.fail("invalid_request", rp+".name", "A rate needs the name buyers see.")
		}
		v.checkMoney(r.Price, rp+".price", v.shopCurrency())
	}
	return len(c.Rates)
}

func hasRate(z Zone, id string) bool {
	for _, r := range z.Rates {
		if r.ID == id {
			return true
		}
	}
	return false
}

var combinable = map[string]bool{"order": true, "product": true, "shipping": true}

func (v *validator) checkOffers(c *OfferContent, p string, control bool) int {
	if c == nil || len(c.Offers) == 0 {
		return 0
	}
	if control {
		v.fail("control_offers_rates", p+".offers", "The control group shows no offer; it carries none.")
		return len(c.Offers)
	}
	keys := map[string]bool{}
	for j, o := range c.Offers {
		op := fmt.Sprintf("%s.offers[%d]", p, j)
		switch {
		case strings.TrimSpace(o.Key) == "":
			v.fail("invalid_request", op+".key", "Every offer needs a key.")
		case keys[o.Key]:
			v.fail("duplicate_rule_key", op+".key", "Offer key %q is used twice in this group.", o.Key)
		}
		keys[o.Key] = true
		if strings.TrimSpace(o.Title) == "" {
			v.fail("invalid_request", op+".title", "Every offer needs the title buyers see.")
		}
		v.checkDiscount(o.Discount, op+".discount")
		seen := map[string]bool{}
		for k, w := range o.CombinesWith {
			cp := fmt.Sprintf("%s.combines_with[%d]", op, k)
			switch {
			case !combinable[w]:
				v.fail("discount_combination_invalid", cp, "combines_with takes order, product or shipping; got %q.", w)
			case seen[w]:
				v.fail("discount_combination_invalid", cp, "%q is listed twice.", w)
			case w == "shipping" && o.Discount.Type == "free_shipping":
				v.fail("discount_combination_invalid", cp, "A free-shipping offer cannot combine with another shipping discount.")
			}
			seen[w] = true
		}
		if o.Conditions != nil {
			v.checkConditions(o.Conditions, op+".conditions")
		}
	}
	return len(c.Offers)
}

func (v *validator) checkDiscount(d Discount, p string) {
	if d.MaxDiscountAmount != nil {
		v.fail("max_discount_amount_not_allowed", p+".max_discount_amount",
			"A maximum discount amount is authored in the admin panel.")
	}
	switch d.Type {
	case "percentage":
		r, ok := new(big.Rat).SetString(d.Value)
		if !ok || !amountPattern.MatchString(d.Value) || r.Sign() <= 0 || r.Cmp(big.NewRat(100, 1)) > 0 {
			v.fail("invalid_request", p+".value", "A percentage is a number above 0 and at most 100; got %q.", d.Value)
		}
	case "fixed_amount":
		if !amountPattern.MatchString(d.Value) || decLess(d.Value, "0.0001") {
			v.fail("invalid_request", p+".value", "A fixed amount is a positive decimal string; got %q.", d.Value)
		}
	case "free_shipping":
		if d.Value != "" {
			v.fail("invalid_request", p+".value", "A free_shipping discount takes no value.")
		}
	default:
		v.fail("invalid_request", p+".type", "discount.type is percentage, fixed_amount or free_shipping; got %q.", d.Type)
	}
}

func (v *validator) checkConditions(c *OfferConditions, p string) {
	cur := v.shopCurrency()
	okMin := c.MinSubtotal == nil || v.checkMoney(*c.MinSubtotal, p+".min_subtotal", cur)
	okMax := c.MaxSubtotal == nil || v.checkMoney(*c.MaxSubtotal, p+".max_subtotal", cur)
	if okMin && okMax && c.MinSubtotal != nil && c.MaxSubtotal != nil && decLess(c.MaxSubtotal.Amount, c.MinSubtotal.Amount) {
		v.fail("condition_range_invalid", p+".max_subtotal", "max_subtotal is below min_subtotal.")
	}
	if c.MinQuantity != nil && *c.MinQuantity < 0 {
		v.fail("condition_range_invalid", p+".min_quantity", "min_quantity cannot be negative.")
	}
	if c.MaxQuantity != nil && *c.MaxQuantity < 1 {
		v.fail("condition_range_invalid", p+".max_quantity", "max_quantity is at least 1.")
	}
	if c.MinQuantity != nil && c.MaxQuantity != nil && *c.MaxQuantity < *c.MinQuantity {
		v.fail("condition_range_invalid", p+".max_quantity", "max_quantity is below min_quantity.")
	}
	for i, id := range c.ProductIDs {
		if _, ok := v.cat.Products[id]; !ok {
			v.fail("product_not_found", fmt.Sprintf("%s.product_ids[%d]", p, i), "This shop has no product %s.", id)
		}
	}
	for i, id := range c.CollectionIDs {
		if _, ok := v.cat.Collections[id]; !ok {
			v.fail("collection_not_found", fmt.Sprintf("%s.collection_ids[%d]", p, i), "This shop has no collection %s.", id)
		}
	}
}

// decLess reports a < b for decimal strings; unparsable values compare false.
func decLess(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) < 0
}

func strictUnmarshal(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// jsonErrorParam turns a decoding error into a relative param and a message.
func jsonErrorParam(err error) (string, string) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field, fmt.Sprintf("%s must be a JSON %s, not %s.", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
		return m[1], fmt.Sprintf("Unknown field %q.", m[1])
	}
	return "", "The value is not usable: " + strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "float64":
		return "number"
	case "slice":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	}
	return k
}

func joinParam(base, rel string) string {
	switch {
	case rel == "":
		return base
	case base == "":
		return rel
	}
	return base + "." + rel
}

func containsString(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func containsType(xs []Type, x Type) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// sortedKeys yields a map's keys in order, so findings come out deterministic.
func sortedKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !yield(k) {
				return
			}
		}
	}
}
