package experiment

import "time"

// Action is a lifecycle action of the public API.
type Action string

const (
	ActionStart   Action = "start"
	ActionPause   Action = "pause"
	ActionResume  Action = "resume"
	ActionEnd     Action = "end"
	ActionArchive Action = "archive"
	ActionPreview Action = "preview"
)

// Actions lists the lifecycle actions in the order allowed_actions shows them.
var Actions = []Action{ActionStart, ActionPreview, ActionPause, ActionResume, ActionEnd, ActionArchive}

// transition is one row of the state machine of DESIGN §9.
type transition struct {
	from []Status
	to   Status
}

var transitions = map[Action]transition{
	ActionStart:   {from: []Status{StatusDraft, StatusPreview, StatusFailed}, to: StatusActive},
	ActionPreview: {from: []Status{StatusDraft, StatusPreview}, to: StatusPreview},
	ActionPause:   {from: []Status{StatusActive}, to: StatusPaused},
	ActionResume:  {from: []Status{StatusPaused}, to: StatusActive},
	ActionEnd:     {from: []Status{StatusActive, StatusPaused}, to: StatusEnded},
	ActionArchive: {from: []Status{StatusDraft, StatusPreview, StatusEnded, StatusFailed}, to: StatusArchived},
}

// Target is the status an action moves a test to.
func (a Action) Target() Status { return transitions[a].to }

// Known reports whether a is a lifecycle action.
func (a Action) Known() bool { _, ok := transitions[a]; return ok }

// AllowedActions lists the actions status s accepts. Actions whose target is s
// itself (other than a new preview link) are not listed: they answer 200
// unchanged anyway.
func AllowedActions(s Status) []Action {
	out := []Action{}
	for _, a := range Actions {
		for _, from := range transitions[a].from {
			if from == s {
				out = append(out, a)
			}
		}
	}
	return out
}

// Plan says what an action does to a test in its current state: nothing
// (Unchanged, the same-target rule of part 3), or a move to Target. It
// refuses with 409 `checks_pending` or `invalid_status_transition`.
// Entitlements and launch validation are separate steps (CheckEntitlements,
// Validate) so that pause, end and archive never run them.
type Plan struct {
	Action    Action
	From      Status
	Target    Status
	Unchanged bool
}

// PlanAction decides what action a does to t.
func PlanAction(t *Test, a Action) (Plan, error) {
	tr, ok := transitions[a]
	if !ok {
		return Plan{}, Errorf(KindNotFound, "not_found", "Unknown lifecycle action %q.", a)
	}
	p := Plan{Action: a, From: t.Status, Target: tr.to}
	// archive stays available while checks run (part 3 rule 4).
	if t.ChecksPending && a != ActionArchive {
		return p, Errorf(KindConflict, "checks_pending",
			"This test is still being validated; retry in about a minute.")
	}
	// A preview link of a test already in preview is a new link, not a no-op.
	if t.Status == tr.to && a != ActionPreview {
		p.Unchanged = true
		return p, nil
	}
	for _, from := range tr.from {
		if from == t.Status {
			return p, nil
		}
	}
	allowed := AllowedActions(t.Status)
	names := make([]string, len(allowed))
	for i, x := range allowed {
		names[i] = string(x)
	}
	return p, Errorf(KindConflict, "invalid_status_transition",
		"Cannot %s a test whose status is %s.", a, t.Status).
		WithDetails(map[string]any{"current_status": string(t.Status), "allowed_actions": names})
}

// Apply moves t to the plan's target and stamps the lifecycle times. It is a
// no-op for an unchanged plan.
func (p Plan) Apply(t *Test, now time.Time) {
	if p.Unchanged {
		return
	}
	t.Status = p.Target
	t.UpdatedAt = now
	switch p.Target {
	case StatusActive:
		if t.StartedAt == nil {
			t.StartedAt = &now
		}
		t.FailureReason = ""
		t.PauseReason = ""
	case StatusEnded:
		t.EndedAt = &now
	}
}

// Fail records a launch whose platform side effects failed (DESIGN §9).
func Fail(t *Test, reason string, now time.Time) {
	t.Status = StatusFailed
	t.FailureReason = reason
	t.StartedAt = nil
	t.UpdatedAt = now
}

// DueAction is a lifecycle action a schedule asks for.
type DueAction struct {
	ShopID int64
	TestID int64
	Action Action
	At     time.Time // the schedule time that made it due
}
