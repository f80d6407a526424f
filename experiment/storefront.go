package experiment

import (
	"context"
	"encoding/json"
	"strconv"
)

// StorefrontConfig is what the storefront tracker (/lift.js) needs to assign
// and show a shop's running tests. It is public (anyone can fetch it for any
// shop domain), so it carries only what a visitor's browser needs anyway:
// no test names, hypotheses, drafts or anything the merchant keeps to
// themselves.
type StorefrontConfig struct {
	Shop     string           `json:"shop"`
	Currency string           `json:"currency"`
	Tests    []StorefrontTest `json:"tests"`
	// Preview is set on the answer to a preview link (Tests is then
	// empty): the one test and group it shows, whatever the test's status.
	Preview *StorefrontPreview `json:"preview,omitempty"`
}

// StorefrontPreview is what a preview link shows: Group of Test.
type StorefrontPreview struct {
	Test  StorefrontTest `json:"test"`
	Group int            `json:"group"`
}

// StorefrontTest is one active test as the tracker sees it.
type StorefrontTest struct {
	ID   string `json:"id"`
	Type Type   `json:"type"`
	// AssignmentVersion goes up when splits, allocation or groups change;
	// the tracker records a visitor's assignment once per version.
	AssignmentVersion int `json:"assignment_version"`
	// Bucketing is the hashing scheme of the test's visitors (Test.Bucketing).
	Bucketing         int `json:"bucketing"`
	TrafficAllocation int `json:"traffic_allocation"` // percent of visitors in the test
	// Audience is the test's targeting object as the merchant saved it
	// (null: everyone). The tracker reads the keys it knows.
	Audience json.RawMessage `json:"audience"`
	// Scope is the shared part of the change the storefront needs to know
	// where it applies (product ids, source path, path rules, theme).
	Scope  map[string]json.RawMessage `json:"scope"`
	Groups []StorefrontGroup          `json:"groups"`
	// LineAssignments is set when the test changes shipping rates: the
	// platform asks Lift's carrier service for them at checkout
	// (QuoteRates), and its rate request carries the cart's lines, not the
	// cart's attributes, so the tracker puts the visitor's assignments on
	// each line it adds (properties[_lift_assignments]).
	LineAssignments bool `json:"line_assignments,omitempty"`
}

// StorefrontGroup is one arm: its split and what it changes on the
// storefront (null when the change happens elsewhere, e.g. in checkout).
type StorefrontGroup struct {
	Index   int             `json:"index"`
	Name    string          `json:"name"`
	Weight  int             `json:"weight"`
	Changes json.RawMessage `json:"changes"`
}

// storefrontTypes are the changes a browser applies itself. Shipping,
// checkout and offer changes are applied by the platform at checkout, so
// their content stays on the server.
var storefrontTypes = map[Type]bool{TypePrice: true, TypeTheme: true, TypeTemplate: true,
	TypeURLRedirect: true, TypeVisualEditor: true}

// storefrontPageSize bounds one read of active tests; a shop runs few.
const storefrontPageSize = 100

// StorefrontConfig lists shop's active tests for its storefront, oldest
// first so every visitor evaluates them in the same order. Paused, draft,
// ended and failed tests are not in it: only active tests split traffic.
func (s *Service) StorefrontConfig(ctx context.Context, shop *Shop) (*StorefrontConfig, error) {
	out := &StorefrontConfig{Shop: shop.Domain, Currency: shop.Currency, Tests: []StorefrontTest{}}
	f := Filter{Statuses: []Status{StatusActive}, Limit: storefrontPageSize}
	for {
		page, more, err := s.repo.FindTests(ctx, shop.ID, f)
		if err != nil {
			return nil, err
		}
		for _, t := range page {
			out.Tests = append(out.Tests, storefrontTest(t))
		}
		if !more || len(page) == 0 {
			break
		}
		last := page[len(page)-1]
		f.After = &Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	// FindTests lists newest first; reverse for a stable oldest-first order.
	for i, j := 0, len(out.Tests)-1; i < j; i, j = i+1, j-1 {
		out.Tests[i], out.Tests[j] = out.Tests[j], out.Tests[i]
	}
	return out, nil
}

func storefrontTest(t *Test) StorefrontTest {
	st := StorefrontTest{ID: strconv.FormatInt(t.ID, 10), Type: t.Type, AssignmentVersion: t.AssignmentVersion, Bucketing: t.Bucketing,
		TrafficAllocation: t.TrafficAllocation, Audience: t.Audience, Scope: map[string]json.RawMessage{},
		Groups: []StorefrontGroup{}}
	if isEmptyJSON(st.Audience) {
		st.Audience = json.RawMessage("null")
	}
	for _, k := range t.BundledTypes() {
		if raw, ok := t.Shared[string(k)]; ok && storefrontTypes[k] {
			st.Scope[string(k)] = raw
		}
		st.LineAssignments = st.LineAssignments || k == TypeShipping
	}
	for _, g := range t.Groups {
		st.Groups = append(st.Groups, StorefrontGroup{Index: g.Index, Name: g.Name, Weight: g.Split,
			Changes: storefrontChanges(t.Type, g.Content)})
	}
	return st
}

// storefrontChanges keeps the part of a group's content a browser applies;
// for a combined test, the keys of the types it applies.
func storefrontChanges(t Type, content json.RawMessage) json.RawMessage {
	null := json.RawMessage("null")
	if isEmptyJSON(content) {
		return null
	}
	if t != TypeCombined {
		if storefrontTypes[t] {
			return content
		}
		return null
	}
	var parts map[string]json.RawMessage
	if json.Unmarshal(content, &parts) != nil {
		return null
	}
	for k := range parts {
		if !storefrontTypes[Type(k)] {
			delete(parts, k)
		}
	}
	if len(parts) == 0 {
		return null
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return null
	}
	return b
}

// StorefrontPreview answers the storefront's config request of a preview
// link (?lift_preview=token): the linked test, in any status a preview
// link is made for (draft, preview) or the test reached since (active,
// paused), and the group to show, with no other test: a merchant checking
// a group is neither assigned to the running tests nor recorded. Errors:
// KindInvalidRequest invalid_preview for a token that is not valid for
// this server or has expired, KindNotFound experiment_not_found for a test
// of another shop or gone, or one that can no longer run.
func (s *Service) StorefrontPreview(ctx context.Context, shop *Shop, token string) (*StorefrontConfig, error) {
	id, index, ok := VerifyPreview(s.previewSecret, token, s.clock())
	if len(s.previewSecret) == 0 || !ok {
		return nil, Errorf(KindInvalidRequest, "invalid_preview", "This preview link is not valid or has expired; make a new one.").WithParam("preview")
	}
	t, err := s.repo.FindTestByID(ctx, shop.ID, id)
	if err != nil {
		return nil, err
	}
	switch t.Status {
	case StatusDraft, StatusPreview, StatusActive, StatusPaused:
	default:
		return nil, Errorf(KindNotFound, "experiment_not_found", "Test %d is %s: a preview link no longer shows it.", id, t.Status)
	}
	if t.Group(index) == nil {
		return nil, Errorf(KindNotFound, "experiment_not_found", "Test %d has no test group with index %d.", id, index)
	}
	return &StorefrontConfig{Shop: shop.Domain, Currency: shop.Currency, Tests: []StorefrontTest{},
		Preview: &StorefrontPreview{Test: storefrontTest(t), Group: index}}, nil
}
