package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Two live tests that change the same part of the storefront for the same
// visitors fight over it: the storefront can show only one price for a
// product, one rate for a zone, one theme, one template of a page type, one
// destination for a page. A visitor in both sees one test's change, yet is
// counted in both, so both tests report what their visitors never saw. A
// launch (start or resume) is therefore refused while another live test
// (active, or paused: a paused test resumes with its platform changes in
// place) holds a part the launching test needs, unless their audiences
// cannot meet (countries, devices or visitor types that share no value).
// Tests that only add things (offers, visual edits' CSS and scripts) hold
// nothing; an image test holds its products' images.

// storefrontParts is what a test changes, as far as another test can fight
// over it.
type storefrontParts struct {
	products     []string // price: the products whose prices it sets
	zones        []string // shipping: the zones whose rates it sets
	wholeTheme   bool     // theme: the theme a visitor sees
	templates    []string // template: "<theme id> <page type>" it switches
	redirect     *URLRedirectShared
	destinations []string // the shop paths its redirect groups send to
	images       []string // visual_editor: the products whose images it replaces
}

// decoded is t's shared parts and group contents as the validator decodes
// them. t was validated when it was saved or launched; a part that does
// not decode is nil.
func decoded(t *Test) *validator {
	v := &validator{t: t, groups: make([]groupContent, len(t.Groups))}
	v.decodeShared()
	v.decodeGroups()
	return v
}

// partsOf is the parts t changes.
func partsOf(t *Test) storefrontParts {
	v := decoded(t)
	var p storefrontParts
	if v.price != nil {
		p.products = v.price.ProductIDs
	}
	if v.shipping != nil {
		p.zones = v.shipping.ZoneIDs
	}
	p.wholeTheme = slices.Contains(t.BundledTypes(), TypeTheme)
	p.redirect = v.redirect
	for _, gc := range v.groups {
		if gc.template != nil && gc.template.Template != "" && v.template != nil {
			pageType, _, _ := strings.Cut(gc.template.Template, ".")
			p.templates = append(p.templates, v.template.ThemeID+" "+pageType)
		}
		if gc.visual != nil {
			for _, im := range gc.visual.Images {
				p.images = append(p.images, im.ProductID)
			}
		}
		if gc.redirect != nil && isShopPath(gc.redirect.Destination) {
			path, _, _ := strings.Cut(gc.redirect.Destination, "?")
			path, _, _ = strings.Cut(path, "#")
			p.destinations = append(p.destinations, path)
		}
	}
	return p
}

// contested names the first part both a and b change ("" when none), in
// words that finish "both tests change …".
func contested(a, b storefrontParts) string {
	if id, ok := shared(a.products, b.products); ok {
		return "the price of product " + id
	}
	if id, ok := shared(a.zones, b.zones); ok {
		return "the rates of shipping zone " + id
	}
	if id, ok := shared(a.images, b.images); ok {
		return "the images of product " + id
	}
	switch {
	case a.wholeTheme && b.wholeTheme:
		return "the theme their visitors see"
	case a.wholeTheme && len(b.templates) > 0, b.wholeTheme && len(a.templates) > 0:
		return "the theme their visitors see (a template test shows its templates only on its own theme)"
	}
	if tp, ok := shared(a.templates, b.templates); ok {
		theme, pageType, _ := strings.Cut(tp, " ")
		return fmt.Sprintf("the %s template of theme %s", pageType, theme)
	}
	return contestedPages(a, b)
}

// contestedPages is contested for url_redirect tests: the same page
// redirected by both, or a page one redirects to that the other redirects
// away from (a chain, or a loop).
func contestedPages(a, b storefrontParts) string {
	if a.redirect == nil || b.redirect == nil {
		return ""
	}
	// Name the page both rules match: the narrower source.
	switch {
	case redirects(a.redirect, b.redirect.SourcePath):
		return "where visitors of " + b.redirect.SourcePath + " go"
	case redirects(b.redirect, a.redirect.SourcePath):
		return "where visitors of " + a.redirect.SourcePath + " go"
	}
	for _, pair := range [][2]storefrontParts{{a, b}, {b, a}} {
		for _, d := range pair[0].destinations {
			if redirects(pair[1].redirect, d) {
				return "where visitors of " + d + " go (one test sends visitors there, the other sends them on)"
			}
		}
	}
	return ""
}

// redirects reports whether rule r sends visitors of path elsewhere, as the
// tracker matches it (pathMatches in lift.js).
func redirects(r *URLRedirectShared, path string) bool {
	if r.MatchType == "prefix" {
		return strings.HasPrefix(path, r.SourcePath)
	}
	return path == r.SourcePath
}

func shared(a, b []string) (string, bool) {
	for _, x := range a {
		if slices.Contains(b, x) {
			return x, true
		}
	}
	return "", false
}

// audiencesMeet reports whether one visitor can be in both audiences, as
// the tracker applies them (inAudience in lift.js): a visitor has one
// country, one device and one visitor type, and an empty list admits all.
func audiencesMeet(a, b json.RawMessage) bool {
	type audience struct {
		Countries   []string `json:"countries"`
		Devices     []string `json:"devices"`
		VisitorType string   `json:"visitor_type"`
	}
	var x, y audience
	// Validated when saved; one that does not decode targets everyone.
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	disjoint := func(p, q []string) bool {
		_, meet := shared(p, q)
		return len(p) > 0 && len(q) > 0 && !meet
	}
	if disjoint(x.Countries, y.Countries) || disjoint(x.Devices, y.Devices) {
		return false
	}
	return x.VisitorType == "" || y.VisitorType == "" || x.VisitorType == y.VisitorType
}

// contestedBy is the first live test (by id) other than t that changes a
// part t changes for visitors both can reach, and that part.
func contestedBy(t *Test, live []*Test) (*Test, string) {
	slices.SortFunc(live, func(a, b *Test) int { return cmp.Compare(a.ID, b.ID) })
	mine := partsOf(t)
	for _, o := range live {
		if o.ID == t.ID || !audiencesMeet(t.Audience, o.Audience) {
			continue
		}
		if part := contested(mine, partsOf(o)); part != "" {
			return o, part
		}
	}
	return nil, ""
}

// refuseContested refuses a launch (start or resume) of t while another
// live test of the shop changes a part t changes for visitors both can
// reach. tx.LiveTests holds the shop's launch lock, so of two launches
// that contest a part, the second sees the first.
func refuseContested(ctx context.Context, tx Tx, t *Test) error {
	live, err := tx.LiveTests(ctx, t.ShopID)
	if err != nil {
		return err
	}
	if o, part := contestedBy(t, live); o != nil {
		return Refuse("launch_blocked", "",
			"Test %d (%q, %s) already changes %s for the visitors this test would reach. A visitor in both would see one test's change and be counted in both, so neither test's results would be true. End test %d, or change this test (or its audience) so the two do not overlap, then start it again.",
			o.ID, o.Name, o.Status, part, o.ID)
	}
	return nil
}

// maxLiveRead bounds the live tests a create or PATCH reads for its
// warning; a shop has a handful.
const maxLiveRead = 1000

// liveTests reads the shop's live tests for overlapWarning, before a create
// or PATCH opens its unit of work: a read from the pool inside one would
// hold two connections per request, and enough concurrent PATCHes would
// exhaust the pool waiting on themselves. The start decides, under its lock.
func (s *Service) liveTests(ctx context.Context, shopID int64) ([]*Test, error) {
	live, _, err := s.repo.FindTests(ctx, shopID, Filter{Statuses: []Status{StatusActive, StatusPaused}, Limit: maxLiveRead})
	return live, err
}

// overlapWarning tells a create or a PATCH of a test not launched yet that
// its start will be refused while a live test holds a part it changes, so
// the merchant learns it now rather than at launch.
func overlapWarning(t *Test, live []*Test) []Finding {
	if t.Launched() || t.Type == TypeCheckout {
		return nil
	}
	o, part := contestedBy(t, live)
	if o == nil {
		return nil
	}
	return []Finding{{Severity: SeverityWarning, Code: "live_test_overlap", Message: fmt.Sprintf(
		"Test %d (%q, %s) already changes %s for the visitors this test would reach: this test cannot start until it ends (or this test or its audience changes).",
		o.ID, o.Name, o.Status, part)}}
}
