package experiment

import (
	"encoding/json"
	"time"
)

// Type is what a test changes on the storefront.
type Type string

const (
	TypePrice        Type = "price"
	TypeShipping     Type = "shipping"
	TypeTheme        Type = "theme"
	TypeTemplate     Type = "template"
	TypeURLRedirect  Type = "url_redirect"
	TypeCheckout     Type = "checkout"
	TypeOffer        Type = "offer"
	TypeVisualEditor Type = "visual_editor"
	TypeCombined     Type = "combined"
)

// Types lists every type in the contract's order.
var Types = []Type{TypePrice, TypeShipping, TypeTheme, TypeTemplate, TypeURLRedirect,
	TypeCheckout, TypeOffer, TypeVisualEditor, TypeCombined}

// Known reports whether t is a type of the contract (creatable or not).
func (t Type) Known() bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Status is where a test is in its lifecycle (DESIGN §9).
type Status string

const (
	StatusDraft    Status = "draft"
	StatusPreview  Status = "preview"
	StatusActive   Status = "active"
	StatusPaused   Status = "paused"
	StatusEnded    Status = "ended"
	StatusFailed   Status = "failed"
	StatusArchived Status = "archived"
)

// Statuses lists every status of the contract.
var Statuses = []Status{StatusDraft, StatusPreview, StatusActive, StatusPaused, StatusEnded,
	StatusFailed, StatusArchived}

// Known reports whether s is a status of the contract.
func (s Status) Known() bool {
	for _, k := range Statuses {
		if k == s {
			return true
		}
	}
	return false
}

// Metric is a primary metric a merchant optimises for.
type Metric string

// Metrics lists the PrimaryMetric enumeration.
var Metrics = []Metric{"revenue_per_visitor", "average_order_value", "conversion_rate",
	"profit_per_visitor", "add_to_cart_rate", "reached_checkout_rate"}

// Known reports whether m is in the PrimaryMetric enumeration.
func (m Metric) Known() bool {
	for _, k := range Metrics {
		if k == m {
			return true
		}
	}
	return false
}

// CurrentBucketing is the tracker's bucketing scheme for new tests: FNV-1a
// finished with murmur3's fmix32, so the groups of tests that run together
// are independent (scheme 1, FNV-1a alone, split visitors in step).
const CurrentBucketing = 2

// Test is one A/B test of a shop. Its JSON form is the wire form of the
// contract's part 2.2 (the adapters add `object` and `results_summary`).
type Test struct {
	ID                  int64                      `json:"id,string"`
	ShopID              int64                      `json:"-"`
	Type                Type                       `json:"type"`
	Status              Status                     `json:"status"`
	Name                string                     `json:"name"`
	Hypothesis          *string                    `json:"hypothesis"`
	PrimaryMetric       *Metric                    `json:"primary_metric"`
	TrafficAllocation   int                        `json:"traffic_allocation"`
	Shared              map[string]json.RawMessage `json:"shared"`
	Groups              []Group                    `json:"test_groups"`
	Schedule            *Schedule                  `json:"schedule"`
	Audience            json.RawMessage            `json:"audience"`
	HasForceAssignRules bool                       `json:"has_force_assign_rules"`
	AssignmentVersion   int                        `json:"assignment_version"`
	// Bucketing is how the tracker hashes visitors into this test's groups
	// (migrations/0160): set at creation, never changed, so a running test
	// keeps its visitors where they are.
	Bucketing    int           `json:"-"`
	ProductGroup *ProductGroup `json:"product_group"`
	// Analysis and Guardrails say how results are read (analysis.go).
	Analysis   AnalysisOptions `json:"analysis"`
	Guardrails []Guardrail     `json:"guardrails"`
	// PauseReason says why Lift paused the test by itself (a guardrail
	// breach); empty for a manual pause and once the test runs again.
	PauseReason string `json:"pause_reason,omitempty"`
	// FailureReason says in plain language why a launch ended in `failed`.
	FailureReason string     `json:"failure_reason,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	StartedAt     *time.Time `json:"started_at"`
	EndedAt       *time.Time `json:"ended_at"`

	// ChecksPending is set while asynchronous launch checks run (for
	// example the theme app-block check); most writes answer 409
	// `checks_pending` until they finish.
	ChecksPending bool `json:"-"`
}

// Group is one arm of a test. Index 0 is the control.
type Group struct {
	Index   int             `json:"index"`
	Name    string          `json:"name"`
	Split   int             `json:"split"`
	Content json.RawMessage `json:"content"`
}

// Schedule is a test's launch window. A draft or preview with a start_at is
// scheduled; the scheduler starts it at start_at and ends it at end_at.
type Schedule struct {
	StartAt *time.Time `json:"start_at"`
	EndAt   *time.Time `json:"end_at"`
}

// ProductGroup is the read-only product scope a test may have.
type ProductGroup struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Launched reports whether the test has been started at least once; from then
// on its configuration is locked except for the fields of §4.2 rule 4.
func (t *Test) Launched() bool {
	return t.StartedAt != nil || t.Status == StatusActive || t.Status == StatusPaused || t.Status == StatusEnded
}

// LiveAt reports whether the test was running (active or paused) at t: an
// active or paused test is, whatever t; an ended or archived one was
// between its start and its end. A minute either way absorbs the clocks of
// the platform that stamped t and of Lift that stamped the two.
func (t *Test) LiveAt(at time.Time) bool {
	if t.Status == StatusActive || t.Status == StatusPaused {
		return true
	}
	return t.StartedAt != nil && t.EndedAt != nil && !at.Before(t.StartedAt.Add(-LiveSkew)) && !at.After(t.EndedAt.Add(LiveSkew))
}

// LiveSkew is how far LiveAt's bounds stretch each way for clock skew.
const LiveSkew = time.Minute

// Scheduled reports whether the test waits for its schedule to start it.
func (t *Test) Scheduled() bool {
	return (t.Status == StatusDraft || t.Status == StatusPreview) && t.Schedule != nil && t.Schedule.StartAt != nil
}

// Group returns the group of the given index, or nil.
func (t *Test) Group(index int) *Group {
	for i := range t.Groups {
		if t.Groups[i].Index == index {
			return &t.Groups[i]
		}
	}
	return nil
}

// BundledTypes lists the change types a test carries: its own type, or for a
// combined test one per key of `shared`.
func (t *Test) BundledTypes() []Type {
	if t.Type != TypeCombined {
		return []Type{t.Type}
	}
	var out []Type
	for _, k := range Types {
		if _, ok := t.Shared[string(k)]; ok {
			out = append(out, k)
		}
	}
	return out
}

// bundleable reports whether a combined test may bundle changes of type k
// (decodeShared refuses the others).
func bundleable(k Type) bool { return k.Known() && k != TypeCombined && k != TypeCheckout }

// Filter selects tests for a list. Nil and empty fields do not filter.
type Filter struct {
	Statuses  []Status
	Types     []Type
	Scheduled *bool
	CreatedGT *time.Time
	CreatedGE *time.Time
	CreatedLT *time.Time
	CreatedLE *time.Time
	// After continues a listing: only tests older than this position
	// (newest first by created_at, then id).
	After *Cursor
	Limit int
}

// Cursor is a position in the newest-first listing.
type Cursor struct {
	CreatedAt time.Time
	ID        int64
}
