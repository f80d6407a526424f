package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The admin panel authors checkout UI tests, which /v1 neither creates nor
// reads back (contract: 501 not_implemented; the test is read and run in
// the admin panel). These methods are that surface's way in; /v1 keeps
// calling Create, Get and Apply, which still refuse checkout.

// checkoutContentLimit bounds one group's checkout block settings, stored
// as free JSON the checkout editor owns.
const checkoutContentLimit = 16 << 10

// CreateFromAdminPanel creates a test from the admin panel. A checkout
// test is checked here (groups, weights, each group's content an object
// under checkoutContentLimit); every other type goes through Create, which
// here takes the visual editor's DOM changes too.
func (s *Service) CreateFromAdminPanel(ctx context.Context, shop *Shop, body []byte) (*Outcome, error) {
	var head struct {
		Type Type `json:"type"`
	}
	if json.Unmarshal(body, &head) != nil || head.Type != TypeCheckout {
		return s.create(ctx, shop, body, nil, true)
	}
	t, err := parseCheckout(body, shop.ID, s.clock())
	if err != nil {
		return nil, err
	}
	if err := CheckEntitlements(shop, t, StepCreate); err != nil {
		return nil, err
	}
	out := &Outcome{Test: t, Warnings: []Finding{}}
	_, err = s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "experiment.create", ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			if err := tx.CreateTest(ctx, t); err != nil {
				return WriteResult{}, err
			}
			return WriteResult{ResourceID: fmt.Sprint(t.ID)}, nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseCheckout reads a checkout create body into a draft: the body's
// general checks, then what the checkout editor needs of the groups.
func parseCheckout(body []byte, shopID int64, now time.Time) (*Test, error) {
	if err := checkObject(body); err != nil {
		return nil, err
	}
	if err := CheckJSONText(body, testTextLimit); err != nil {
		return nil, err
	}
	in, err := decodeWritable(body)
	if err != nil {
		return nil, err
	}
	t := &Test{ShopID: shopID, Type: TypeCheckout, Status: StatusDraft, CreatedAt: now, UpdatedAt: now, AssignmentVersion: 1, Bucketing: CurrentBucketing}
	in.applyTo(t)
	if err := checkCheckout(t, now); err != nil {
		return nil, err
	}
	sort.SliceStable(t.Groups, func(i, j int) bool { return t.Groups[i].Index < t.Groups[j].Index })
	return t, nil
}

// checkCheckout refuses a checkout test whose common fields (name, groups:
// distinct names, splits summing to 100) fail the rules every type follows,
// with a start date (it cannot be launched), or with a group whose content
// is not a JSON object within checkoutContentLimit.
func checkCheckout(t *Test, now time.Time) error {
	if _, err := Validate(context.Background(), nil, t, nil, ValidateOpenFields, now); err != nil {
		return err
	}
	if err := checkCheckoutSchedule(t); err != nil {
		return err
	}
	for i, g := range t.Groups {
		p := fmt.Sprintf("test_groups[%d]", i)
		var obj map[string]json.RawMessage
		if json.Unmarshal(g.Content, &obj) != nil {
			return Refuse("invalid_request", p+".content", "content holds the group's checkout block settings as a JSON object.")
		}
		if len(g.Content) > checkoutContentLimit {
			return Refuse("invalid_request", p+".content", "A group's checkout block settings take at most %d bytes.", checkoutContentLimit)
		}
	}
	return nil
}

// errCheckoutLaunch is the refusal of any start of a checkout test: no
// platform step makes its checkout blocks show (PrepareLaunch has none),
// so launching would only pretend.
func errCheckoutLaunch() error {
	return Refuse("launch_unsupported", "type",
		"Checkout UI tests cannot be launched yet: the checkout blocks have no storefront step.")
}

// checkCheckoutSchedule refuses a start date on a checkout test: the
// scheduler would only fail it when the day came (session audit 2, S2-9).
func checkCheckoutSchedule(t *Test) error {
	if t.Type == TypeCheckout && t.Schedule != nil && t.Schedule.StartAt != nil {
		return Refuse("launch_unsupported", "schedule.start_at",
			"A checkout UI test cannot have a start date: it cannot be launched yet (the checkout blocks have no storefront step).")
	}
	return nil
}

// GetFromAdminPanel reads test id of shop as the admin panel does: a
// checkout test is readable there.
func (s *Service) GetFromAdminPanel(ctx context.Context, shop *Shop, id int64) (*Test, error) {
	t, err := s.repo.FindTestByID(ctx, shop.ID, id)
	if err != nil {
		return nil, err
	}
	if t.Type == TypeCheckout {
		return t, nil
	}
	return s.Get(ctx, shop, id)
}

// AdminChange is one change of a test from the admin panel: a PUT's fields
// and status, or a pause or resume.
type AdminChange struct {
	Body   []byte // part 2.2's fields as a v1 PATCH body; nil for none
	Action Action // "" for none
	// Strict refuses an action whose test is already at its target (part
	// 3: pause needs "test is running", resume "test is paused"), checked
	// on the locked row so concurrent calls cannot all succeed. A PUT's
	// status is not strict: putting ACTIVE on a running test is a no-op.
	Strict bool
}

// ChangeFromAdminPanel is the admin panel's update of a test: c.Body merged
// as Update merges it, then c.Action (or none) applied as Apply applies it,
// in one write: a refused action (a plan that no longer allows a launch, a
// launch check) leaves the fields as they were too. Starting or resuming a
// checkout test is refused: no platform step makes its checkout blocks show
// (PrepareLaunch has none), so launching would only pretend. A start the
// platform failed is kept (the test is `failed`, with the reason) and
// answered as an error, 500 launch_failed: this surface's success is a
// bare "success", which would tell the panel the test runs.
func (s *Service) ChangeFromAdminPanel(ctx context.Context, shop *Shop, id int64, c AdminChange) (*Outcome, error) {
	body, act := c.Body, c.Action
	action := "experiment.update"
	switch {
	case body == nil:
		action = "experiment." + string(act)
	case act != "":
		action += "+" + string(act)
	}
	now := s.clock()
	var out *Outcome
	_, err := s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: action, ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			t, err := tx.FindTestForUpdate(ctx, shop.ID, id)
			if err != nil {
				return WriteResult{}, err
			}
			if err := checkAdminAction(t, c); err != nil {
				return WriteResult{}, err
			}
			out = &Outcome{Test: t, Warnings: []Finding{}}
			if body != nil {
				if out, err = s.patch(ctx, tx, shop, t, body, now); err != nil {
					return WriteResult{}, err
				}
			}
			if act != "" {
				if out, err = s.apply(ctx, tx, shop, out.Test, act, 0); err != nil {
					return WriteResult{}, err
				}
			}
			return WriteResult{ResourceID: fmt.Sprint(id)}, nil
		})
	if err != nil {
		return nil, err
	}
	if act == ActionStart && out.Test.Status == StatusFailed {
		return out, Errorf(KindInternal, "launch_failed",
			"The launch failed and the test is now FAILED: %s. Start it again once that is resolved.", strings.TrimSuffix(out.Test.FailureReason, "."))
	}
	return out, nil
}

// checkAdminAction is what the admin panel refuses before any change: an
// action on a test whose type this server cannot read, and a strict action
// already done. (A launch of a checkout test is apply's to refuse.)
func checkAdminAction(t *Test, c AdminChange) error {
	if t.Type != TypeCheckout {
		if err := CheckReadable(t); err != nil {
			return err
		}
	}
	if c.Strict && c.Action != "" {
		if p, err := PlanAction(t, c.Action); err == nil && p.Unchanged {
			return Errorf(KindConflict, "invalid_status_transition", "Cannot %s a test whose status is %s.", c.Action, t.Status).
				WithDetails(map[string]any{"current_status": string(t.Status)})
		}
	}
	return nil
}
