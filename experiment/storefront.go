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
