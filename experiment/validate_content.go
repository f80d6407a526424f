// The checks that dispatch over the change types: the shared configuration
// of theme, template, url_redirect and visual_editor tests, and each group's
// content (price, shipping and offer have files of their own).

package experiment

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

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
		// The one rule of zones.go; only a save that passes shows it.
		if w, ok := zoneWarning(s.ZoneIDs, v.cat.Zones); ok {
			v.findings = append(v.findings, w)
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
		} else if th, ok := v.cat.Themes[tp.ThemeID]; !ok {
			v.fail("theme_not_found", "shared.template.theme_id", "This shop has no theme %s.", tp.ThemeID)
		} else if th.Role != "main" {
			// The groups' templates are switched on the live store, which
			// shows the published theme: another theme's templates never show.
			v.fail("theme_not_published", "shared.template.theme_id",
				"Theme %s is not the published theme: a template test switches templates on the live store, which shows only the published one.", th.Name)
		}
	}
	if r := v.redirect; r != nil {
		v.checkMatch(r.SourcePath, r.MatchType, "shared.url_redirect")
	}
	if ve := v.visual; ve != nil {
		v.checkVisualShared(ve)
	}
}

// checkVisualShared holds a content test's products to a price test's rules
// (global ids, each once, in the shop's catalog, under the same cap), except
// that none at all is fine: the edit does not need products to apply.
func (v *validator) checkVisualShared(s *VisualEditorShared) {
	v.checkProductIDs(s.ProductIDs, "shared.visual_editor.product_ids", "visual_editor")
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
				n = v.checkPrices(gc.price, p, g.Name, control)
			case TypeShipping:
				n = v.checkRates(gc.shipping, p, g.Name, control)
			case TypeTheme:
				if gc.theme != nil && gc.theme.ThemeID != "" {
					n = 1
					th, ok := v.cat.Themes[gc.theme.ThemeID]
					switch {
					case !ok:
						v.fail("theme_not_found", p+".theme_id", "This shop has no theme %s.", gc.theme.ThemeID)
					case th.Role == "main" && !control:
						// The control already sees the published theme.
						v.fail("change_required", p+".theme_id",
							"Theme %s is the published theme, which the control shows: this group would test nothing.", th.Name)
					}
				}
			case TypeTemplate:
				if gc.template != nil && gc.template.Template != "" {
					n = 1
					th, ok := v.cat.Themes[v.template.ThemeID]
					switch {
					case ok && !slices.Contains(th.Templates, gc.template.Template):
						v.fail("template_not_found", p+".template", "Theme %s has no template %q.", th.Name, gc.template.Template)
					case !strings.Contains(gc.template.Template, ".") && !control:
						// The storefront switches a page to the group's
						// template with ?view=<suffix>; a page type's own
						// template has none, and is what the control shows.
						v.fail("change_required", p+".template",
							"%q is the default template of its page type, which the control shows: this group would test nothing. Name an alternate template such as %q.", gc.template.Template, gc.template.Template+".alternate")
					}
				}
			case TypeURLRedirect:
				if gc.redirect != nil && gc.redirect.Destination != "" {
					n = 1
					d := gc.redirect.Destination
					if !isShopPath(d) && !strings.HasPrefix(d, "https://") {
						v.fail("invalid_request", p+".destination", "A destination is a path (\"/…\") or an https URL; got %q.", d)
					} else if v.redirect != nil && redirectsToItself(v.redirect, d) {
						// The tracker does not send a visitor to the page
						// they are on, so this group would see the control.
						v.fail("change_required", p+".destination",
							"Destination %q is the source path itself: this group's visitors would stay where they are.", d)
					}
				}
			case TypeOffer:
				n = v.checkOffers(gc.offer, p, g.Name, control)
			case TypeVisualEditor:
				if c := gc.visual; c != nil {
					if c.CustomCSS != "" || c.CustomJS != "" {
						n = 1
					}
					if len(c.Images) > 0 {
						n = 1
						v.checkImages(c.Images, p+".images")
					}
					if len(c.DOMChanges) > 0 {
						n = 1
						v.checkDOMChanges(c.DOMChanges, p+".dom_changes")
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

// checkImages holds a group's images to what the storefront can show: each
// product once, one the test names in shared.visual_editor.product_ids (so
// its product analytics count the product's visitors), with 1 to
// MaxImageURLs images, each an https URL or a path on the shop's site.
func (v *validator) checkImages(images []ProductImages, param string) {
	var named []string
	if v.visual != nil {
		named = v.visual.ProductIDs
	}
	seen := map[string]bool{}
	for i, im := range images {
		p := fmt.Sprintf("%s[%d]", param, i)
		switch {
		case !gidPattern.MatchString(im.ProductID) || !strings.Contains(im.ProductID, "/Product/"):
			v.fail("invalid_request", p+".product_id", "%q is not a product id (gid://<platform>/Product/<number>).", im.ProductID)
		case seen[im.ProductID]:
			v.fail("duplicate_change", p+".product_id", "Product %s has images twice in this group.", im.ProductID)
		case !slices.Contains(named, im.ProductID):
			v.fail("invalid_request", p+".product_id",
				"Product %s is not in shared.visual_editor.product_ids: list it there, so the test's product analytics count its visitors.", im.ProductID)
		}
		seen[im.ProductID] = true
		if len(im.URLs) == 0 || len(im.URLs) > MaxImageURLs {
			v.fail("invalid_request", p+".urls", "A product's images are 1 to %d URLs; %d were sent.", MaxImageURLs, len(im.URLs))
		}
		for j, u := range im.URLs {
			if !imageURL(u) {
				v.fail("invalid_request", fmt.Sprintf("%s.urls[%d]", p, j),
					"An image is an https URL or a path on the shop's site (\"/…\"); got %q.", u)
			}
		}
	}
}

// attributeName is an HTML attribute's name as setAttribute takes it.
var attributeName = regexp.MustCompile(`^[A-Za-z_:][-A-Za-z0-9_:.]*$`)

// checkDOMChanges holds a group's DOM changes to what the tracker applies
// (docs/dom-changes.md): a selector, set/append/remove of html, class, an
// attribute, or a move (position, set only, into a parent); html is set or
// appended, never removed (hide an element with its class or style).
func (v *validator) checkDOMChanges(changes []DOMChange, param string) {
	if len(changes) > MaxDOMChanges {
		v.fail("invalid_request", param, "A group makes at most %d DOM changes; %d were sent.", MaxDOMChanges, len(changes))
		return
	}
	for i, c := range changes {
		p := fmt.Sprintf("%s[%d]", param, i)
		moves := c.ParentSelector != "" || c.InsertBeforeSelector != ""
		switch {
		case strings.TrimSpace(c.Selector) == "":
			v.fail("invalid_request", p+".selector", "A DOM change names the elements it changes with a CSS selector.")
		case c.Action != "set" && c.Action != "append" && c.Action != "remove":
			v.fail("invalid_request", p+".action", "A DOM change's action is set, append or remove; got %q.", c.Action)
		case c.Attribute != "html" && c.Attribute != "class" && c.Attribute != "position" && !attributeName.MatchString(c.Attribute):
			v.fail("invalid_request", p+".attribute", "A DOM change's attribute is html, class, position or an attribute's name; got %q.", c.Attribute)
		case c.Attribute == "html" && c.Action == "remove":
			v.fail("invalid_request", p+".action", "An element's html is set or appended; to hide the element, set its class or style.")
		case c.Attribute == "position" && (c.Action != "set" || strings.TrimSpace(c.ParentSelector) == ""):
			v.fail("invalid_request", p+".parent_selector", "A move (attribute position) is a set with the parent_selector to move the element into.")
		case c.Attribute != "position" && moves:
			v.fail("invalid_request", p+".parent_selector", "parent_selector and insert_before_selector belong to a move (attribute position).")
		case c.Attribute == "class" && c.Action != "set" && strings.TrimSpace(c.Value) == "":
			v.fail("invalid_request", p+".value", "A class %s names the classes.", c.Action)
		}
	}
}

// imageURL says u can be an image's src on the storefront: a path on the
// shop's site, or an https URL with a host (an http image on an https
// store is blocked as mixed content; javascript: and data: are no images
// a merchant hosts).
func imageURL(u string) bool {
	if isShopPath(u) {
		return true
	}
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "https" && p.Host != "" && !strings.ContainsFunc(u, unicode.IsSpace)
}

// redirectsToItself reports whether a path destination (its query aside)
// is the page an exact rule matches.
func redirectsToItself(r *URLRedirectShared, destination string) bool {
	if !strings.HasPrefix(destination, "/") || (r.MatchType != "" && r.MatchType != "exact") {
		return false
	}
	path, _, _ := strings.Cut(destination, "?")
	path, _, _ = strings.Cut(path, "#")
	return path == r.SourcePath
}

// isShopPath says d is a path on the shop's own site. "//host/x" and
// "/\\host" start with a slash but a browser reads them as another host
// (and "//" keeps an http: page's scheme), and it drops tabs and newlines
// before it reads a URL at all: each sent visitors off the shop (v1 audit
// 2, V7).
func isShopPath(d string) bool {
	if !strings.HasPrefix(d, "/") || strings.HasPrefix(d, "//") || strings.HasPrefix(d, "/\\") {
		return false
	}
	return !strings.ContainsFunc(d, func(r rune) bool { return r < ' ' || r == 0x7f })
}
