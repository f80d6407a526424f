package experimenttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

// arrange brings a new test to a starting state through the service itself,
// so every backend reaches it the same way. "scheduled" is a draft waiting
// for its start_at.
func (b *Bundle) arrange(t *testing.T, state string) *experiment.Test {
	t.Helper()
	body := PriceTest("In " + state)
	if state == "scheduled" {
		body = Scheduled(body, Epoch.Add(24*time.Hour), nil)
	}
	x := b.Create(t, body)
	steps := map[string][]experiment.Action{
		"preview":  {experiment.ActionPreview},
		"active":   {experiment.ActionStart},
		"paused":   {experiment.ActionStart, experiment.ActionPause},
		"ended":    {experiment.ActionStart, experiment.ActionEnd},
		"archived": {experiment.ActionArchive},
	}[state]
	for _, a := range steps {
		b.Act(t, x.ID, a)
	}
	if state == "failed" {
		b.Platform.Fail(&experiment.PlatformError{Op: "register cart transform", Status: 500, Message: "Internal Server Error"})
		b.Act(t, x.ID, experiment.ActionStart)
		b.Platform.Fail(nil)
	}
	got := b.Get(t, x.ID)
	want := experiment.Status(state)
	if state == "scheduled" {
		want = experiment.StatusDraft
	}
	if got.Status != want {
		t.Fatalf("arranged %s, got %s", state, got.Status)
	}
	return got
}

// testLifecycle runs every action on every status: the state machine of
// DESIGN §9 as the surfaces see it. want is the new status, "same" (200 with
// the test unchanged) or "409" (invalid_status_transition).
func testLifecycle(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	const same, refused = "same", "409"
	actions := []experiment.Action{experiment.ActionStart, experiment.ActionPause, experiment.ActionResume,
		experiment.ActionEnd, experiment.ActionArchive, experiment.ActionPreview}
	rows := []struct {
		state   string
		want    [6]string // by actions
		allowed []string
	}{
		{"draft", [6]string{"active", refused, refused, refused, "archived", "preview"}, []string{"start", "preview", "archive"}},
		{"preview", [6]string{"active", refused, refused, refused, "archived", "preview"}, []string{"start", "preview", "archive"}},
		{"scheduled", [6]string{"active", refused, refused, refused, "archived", "preview"}, []string{"start", "preview", "archive"}},
		{"active", [6]string{same, "paused", same, "ended", refused, refused}, []string{"pause", "end"}},
		{"paused", [6]string{refused, same, "active", "ended", refused, refused}, []string{"resume", "end"}},
		{"ended", [6]string{refused, refused, refused, same, "archived", refused}, []string{"archive"}},
		{"archived", [6]string{refused, refused, refused, refused, same, refused}, []string{}},
		{"failed", [6]string{"active", refused, refused, refused, "archived", refused}, []string{"start", "archive"}},
	}
	later := Epoch.Add(time.Hour)
	for _, row := range rows {
		for i, a := range actions {
			want := row.want[i]
			t.Run(row.state+"/"+string(a), func(t *testing.T) {
				b.Clock.Set(Epoch)
				before := b.arrange(t, row.state)
				b.Clock.Set(later)
				out, err := b.act(before.ID, a)
				after := b.Get(t, before.ID)
				switch want {
				case refused:
					e := WantCode(t, err, experiment.KindConflict, "invalid_status_transition")
					details := map[string]any{"current_status": string(before.Status), "allowed_actions": row.allowed}
					if diff := cmp.Diff(details, e.Details); diff != "" {
						t.Fatalf("details mismatch (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(before, after); diff != "" {
						t.Fatalf("a refused action changed the test (-before +after):\n%s", diff)
					}
				case same:
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(before, after); diff != "" || out.Status != 200 {
						t.Fatalf("same-target %s changed the test (status %d, -before +after):\n%s", a, out.Status, diff)
					}
				default:
					if err != nil {
						t.Fatal(err)
					}
					if out.Test.Status != experiment.Status(want) || after.Status != experiment.Status(want) || !after.UpdatedAt.Equal(later) {
						t.Fatalf("%s from %s = %s (read back %s at %s), want %s", a, row.state, out.Test.Status, after.Status, after.UpdatedAt, want)
					}
				}
			})
		}
	}
}

func testLaunch(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	t.Run("PlatformRefusalEndsInFailed", func(t *testing.T) {
		x := b.Create(t, PriceTest("Doomed"))
		b.Platform.Fail(&experiment.PlatformError{Op: "register cart transform", Status: 500, Message: "Internal Server Error"})
		out := b.Act(t, x.ID, experiment.ActionStart)
		b.Platform.Fail(nil)
		got := b.Get(t, x.ID)
		if out.Test.Status != experiment.StatusFailed || got.Status != experiment.StatusFailed || got.StartedAt != nil ||
			got.FailureReason != "The platform refused the launch: platform: register cart transform: 500 Internal Server Error" {
			t.Fatalf("failed launch = %+v", got)
		}
		if !strings.Contains(string(out.Body), `"status":"failed"`) {
			t.Fatalf("the reply shows %s", out.Body)
		}
		if a := b.ExperimentAudit(t); a[0] != "experiment.start" {
			t.Fatalf("the failed launch was not audited: %v", a)
		}
		again := b.Act(t, x.ID, experiment.ActionStart)
		if again.Test.Status != experiment.StatusActive || again.Test.FailureReason != "" || again.Test.StartedAt == nil {
			t.Fatalf("relaunch = %+v", again.Test)
		}
		if !slices.Contains(b.Platform.Launches(), x.ID) {
			t.Fatal("the relaunch prepared nothing on the platform")
		}
	})
	t.Run("ErrInternalChangesNothing", func(t *testing.T) {
		x := b.Create(t, PriceTest("Bug"))
		audit := len(b.ExperimentAudit(t))
		b.Platform.Fail(errors.New("bug in the adapter"))
		_, err := b.act(x.ID, experiment.ActionStart)
		b.Platform.Fail(nil)
		if err == nil || strings.Contains(err.Error(), "refused") {
			t.Fatalf("error = %v", err)
		}
		if _, ok := experiment.AsError(err); ok {
			t.Fatalf("an internal fault became a client error: %v", err)
		}
		if got := b.Get(t, x.ID); got.Status != experiment.StatusDraft || got.FailureReason != "" {
			t.Fatalf("after an internal fault = %+v", got)
		}
		if n := len(b.ExperimentAudit(t)); n != audit {
			t.Fatalf("a rolled-back launch was audited (%d → %d)", audit, n)
		}
	})
	t.Run("PlatformCheckRefusalBlocksTheLaunch", func(t *testing.T) {
		// A 4xx is the platform saying no as the shop stands: a failed launch
		// check, answered launch_blocked with nothing changed.
		x := b.Create(t, PriceTest("Refused"))
		audit := len(b.ExperimentAudit(t))
		b.Platform.Fail(&experiment.PlatformError{Op: "register cart transform", Status: 422, Message: "Cart transform limit reached"})
		_, err := b.act(x.ID, experiment.ActionStart)
		b.Platform.Fail(nil)
		e, ok := experiment.AsError(err)
		if !ok || e.Kind != experiment.KindValidation || e.Code != "launch_blocked" || e.Param != "" ||
			len(e.Findings) != 1 || e.Findings[0].Code != "launch_blocked" || !strings.Contains(e.Message, "Cart transform limit reached") {
			t.Fatalf("refused launch check = %#v", err)
		}
		if got := b.Get(t, x.ID); got.Status != experiment.StatusDraft || got.FailureReason != "" || got.StartedAt != nil {
			t.Fatalf("after a refused launch check = %+v", got)
		}
		if n := len(b.ExperimentAudit(t)); n != audit {
			t.Fatalf("a blocked launch was audited (%d → %d)", audit, n)
		}
		for _, status := range []int{408, 429} { // timeouts and throttling are failures, not refusals
			y := b.Create(t, PriceTest(fmt.Sprint("Throttled ", status)))
			b.Platform.Fail(&experiment.PlatformError{Op: "register cart transform", Status: status, Message: "later"})
			out := b.Act(t, y.ID, experiment.ActionStart)
			b.Platform.Fail(nil)
			if out.Test.Status != experiment.StatusFailed {
				t.Fatalf("launch answered %d = %+v, want failed", status, out.Test)
			}
		}
	})
	t.Run("UnsealableTokenBlocksTheLaunch", func(t *testing.T) {
		// The shop's platform token was sealed with another key (a node with
		// another platform.token_key): retrying cannot help, so it is a
		// refusal that names the fix, not a 500, and nothing changes.
		x := b.Create(t, PriceTest("Other key"))
		audit := len(b.ExperimentAudit(t))
		b.Platform.Fail(fmt.Errorf("platform: token of shop 1: %w", experiment.ErrUnsealable))
		_, err := b.act(x.ID, experiment.ActionStart)
		b.Platform.Fail(nil)
		e, ok := experiment.AsError(err)
		if !ok || e.Kind != experiment.KindValidation || e.Code != "launch_blocked" || !strings.Contains(e.Message, "reinstall the app") {
			t.Fatalf("unsealable token = %#v", err)
		}
		if got := b.Get(t, x.ID); got.Status != experiment.StatusDraft || got.FailureReason != "" || got.StartedAt != nil {
			t.Fatalf("after an unsealable token = %+v", got)
		}
		if n := len(b.ExperimentAudit(t)); n != audit {
			t.Fatalf("a blocked launch was audited (%d → %d)", audit, n)
		}
	})
	t.Run("StaleStoredWindowIsInvalidConfiguration", func(t *testing.T) {
		// The end_at was in the future when saved; by the start it has
		// passed. The start sends no body, so the stored test is at fault.
		end := Epoch.Add(time.Hour)
		x := b.Create(t, strings.Replace(PriceTest("Window closed"), "{", fmt.Sprintf(`{"schedule":{"end_at":%q},`, end.Format(time.RFC3339)), 1))
		b.Clock.Set(end.Add(time.Minute))
		defer b.Clock.Set(Epoch)
		_, err := b.act(x.ID, experiment.ActionStart)
		e, ok := experiment.AsError(err)
		if !ok || e.Kind != experiment.KindValidation || e.Code != "invalid_configuration" || e.Param != "schedule.end_at" ||
			len(e.Findings) != 1 || e.Findings[0].Code != "invalid_configuration" || e.Findings[0].Param != "schedule.end_at" ||
			!strings.Contains(e.Message, "Update schedule.end_at") {
			t.Fatalf("start of a stale window = %#v", err)
		}
		if got := b.Get(t, x.ID); got.Status != experiment.StatusDraft {
			t.Fatalf("after a refused start = %+v", got)
		}
		// A PATCH changes only what it sends: the stale end_at does not
		// block a rename, and comes back as a warning (v1 audit 2, V3); a
		// PATCH that sets end_at in the past again is refused.
		out, err := b.Service.Update(b.Ctx(), b.Shop, x.ID, []byte(`{"name":"Renamed"}`), JSONReply(200))
		if err != nil || out.Test.Name != "Renamed" || len(out.Warnings) != 1 || out.Warnings[0].Param != "schedule.end_at" ||
			out.Warnings[0].Severity != experiment.SeverityWarning {
			t.Fatalf("rename of a test with a stale end_at = %+v, %v", out, err)
		}
		past := end.Add(30 * time.Second).Format(time.RFC3339)
		_, err = b.Service.Update(b.Ctx(), b.Shop, x.ID, []byte(`{"schedule":{"end_at":"`+past+`"}}`), JSONReply(200))
		if e, ok := experiment.AsError(err); !ok || e.Kind != experiment.KindValidation || e.Param != "schedule.end_at" {
			t.Fatalf("a past end_at sent = %v", err)
		}
	})
	t.Run("HungPlatformEndsInFailed", func(t *testing.T) {
		x := b.Create(t, PriceTest("Hung"))
		b.Platform.Hang()
		out := b.Act(t, x.ID, experiment.ActionStart)
		b.Platform.Fail(nil)
		if out.Test.Status != experiment.StatusFailed || !strings.Contains(out.Test.FailureReason, "unreachable") {
			t.Fatalf("hung launch = %+v", out.Test)
		}
	})
	t.Run("Entitlements", func(t *testing.T) {
		shop := b.Shop
		x := b.Create(t, PriceTest("Lapses"))
		y := b.Create(t, PriceTest("Lapses while live"))
		b.Act(t, y.ID, experiment.ActionStart)
		b.Act(t, y.ID, experiment.ActionPause)
		lapsed := *shop
		lapsed.SubscriptionActive = false
		b.SetPlan(t, shop, Plan{Features: FullPlan.Features, CarrierService: true})
		defer b.SetPlan(t, shop, FullPlan)
		_, err := b.Service.Apply(b.Ctx(), &lapsed, x.ID, experiment.ActionStart, nil)
		WantCode(t, err, experiment.KindForbidden, "subscription_inactive")
		_, err = b.Service.Apply(b.Ctx(), &lapsed, y.ID, experiment.ActionResume, nil)
		WantCode(t, err, experiment.KindForbidden, "subscription_inactive")
		// The admin panel's update renames and starts in one write: the
		// refused start leaves the name and the audit log as they were.
		audit := len(b.ExperimentAudit(t))
		_, err = b.Service.ChangeFromAdminPanel(b.Ctx(), &lapsed, x.ID, experiment.AdminChange{Body: []byte(`{"name":"Renamed"}`), Action: experiment.ActionStart})
		WantCode(t, err, experiment.KindForbidden, "subscription_inactive")
		if got := b.Get(t, x.ID); got.Name != "Lapses" || got.Status != experiment.StatusDraft || len(b.ExperimentAudit(t)) != audit {
			t.Fatalf("a refused rename+start wrote: name %q, status %s, audit %v", got.Name, got.Status, b.ExperimentAudit(t))
		}
		// End is never refused for billing: a merchant can always stop.
		if out, err := b.Service.Apply(b.Ctx(), &lapsed, y.ID, experiment.ActionEnd, nil); err != nil || out.Test.Status != experiment.StatusEnded {
			t.Fatalf("end of a lapsed shop's test = %v, %v", out, err)
		}
	})
	t.Run("ErrPreviewThroughApply", func(t *testing.T) {
		x := b.Create(t, PriceTest("Wrong door"))
		if _, err := b.Service.Apply(b.Ctx(), b.Shop, x.ID, experiment.ActionPreview, nil); err == nil {
			t.Fatal("Apply made a preview without a group")
		}
		_, err := b.Service.Apply(b.Ctx(), b.Shop, x.ID+1000, experiment.ActionStart, nil)
		WantCode(t, err, experiment.KindNotFound, "experiment_not_found")
	})
}

func testPreview(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	x := b.Create(t, PriceTest("Preview"))
	out, err := b.Service.Preview(b.Ctx(), b.Shop, x.ID, 1, JSONReply(200))
	if err != nil {
		t.Fatal(err)
	}
	p := out.Preview
	prefix := "https://" + b.Shop.Domain + "/?lift_preview="
	if p == nil || p.Object != "preview_link" || p.ExperimentID != x.ID || p.TestGroupIndex != 1 ||
		!p.ExpiresAt.Equal(Epoch.Add(experiment.PreviewTTL)) || !strings.HasPrefix(p.URL, prefix) {
		t.Fatalf("preview = %+v", p)
	}
	if id, idx, ok := experiment.VerifyPreview(PreviewSecret, strings.TrimPrefix(p.URL, prefix), Epoch); !ok || id != x.ID || idx != 1 {
		t.Fatalf("the link's token does not verify: %s", p.URL)
	}
	if !strings.Contains(string(out.Body), `"object":"preview_link"`) {
		t.Fatalf("the reply rendered %s", out.Body)
	}
	if got := b.Get(t, x.ID); got.Status != experiment.StatusPreview {
		t.Fatalf("status = %s", got.Status)
	}
	_, err = b.Service.Preview(b.Ctx(), b.Shop, x.ID, 7, nil)
	if e := WantCode(t, err, experiment.KindValidation, "invalid_request"); e.Param != "index" {
		t.Fatalf("param = %q", e.Param)
	}
	ship := b.Create(t, TypeBodies()[experiment.TypeShipping])
	_, err = b.Service.Preview(b.Ctx(), b.Shop, ship.ID, 1, nil)
	WantCode(t, err, experiment.KindValidation, "preview_unsupported")
	if got := b.Get(t, ship.ID); got.Status != experiment.StatusDraft {
		t.Fatalf("a refused preview moved the test to %s", got.Status)
	}
}

func testChecksPending(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	x := b.Create(t, TypeBodies()[experiment.TypeTheme])
	_, err := b.Service.Update(b.Ctx(), b.Shop, x.ID, []byte(`{"name":"Too soon"}`), nil)
	WantCode(t, err, experiment.KindConflict, "checks_pending")
	for _, a := range []experiment.Action{experiment.ActionStart, experiment.ActionPause, experiment.ActionPreview} {
		_, err := b.act(x.ID, a)
		WantCode(t, err, experiment.KindConflict, "checks_pending")
	}
	// Archive stays available while checks run (part 3 rule 4).
	if out := b.Act(t, x.ID, experiment.ActionArchive); out.Test.Status != experiment.StatusArchived {
		t.Fatalf("archive while pending = %s", out.Test.Status)
	}

	t.Run("QueueDownClearsTheFlag", func(t *testing.T) {
		b.Queue.Fail(errors.New("redis down"))
		defer b.Queue.Fail(nil)
		y := b.Create(t, TypeBodies()[experiment.TypeTemplate])
		if got := b.Get(t, y.ID); got.ChecksPending {
			t.Fatal("a test whose checks could not be queued stays pending forever")
		}
		if a := b.ExperimentAudit(t); a[0] != "experiment.checks_done" {
			t.Fatalf("audit = %v", a)
		}
		if out := b.Act(t, y.ID, experiment.ActionStart); out.Test.Status != experiment.StatusActive {
			t.Fatalf("start = %s", out.Test.Status)
		}
	})
}

func testRunScheduled(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "scheduler"})
	start, end := Epoch.Add(time.Hour), Epoch.Add(26*time.Hour)
	x := b.Create(t, Scheduled(PriceTest("Scheduled"), start, &end))
	run := func(id int64, a experiment.Action) {
		t.Helper()
		if err := b.Service.RunScheduled(ctx, b.Shop.ID, id, a); err != nil {
			t.Fatalf("RunScheduled %s: %v", a, err)
		}
	}
	run(x.ID, experiment.ActionStart) // not yet due
	if got := b.Get(t, x.ID); got.Status != experiment.StatusDraft {
		t.Fatalf("started before start_at: %s", got.Status)
	}
	b.Clock.Set(start.Add(time.Second))
	run(x.ID, experiment.ActionEnd) // not active: no end
	run(x.ID, experiment.ActionStart)
	got := b.Get(t, x.ID)
	if got.Status != experiment.StatusActive || !got.StartedAt.Equal(start.Add(time.Second)) {
		t.Fatalf("scheduled start = %s at %v", got.Status, got.StartedAt)
	}
	if r := b.Audit(t, b.Shop.ID)[0]; r.Action != "experiment.scheduled_start" || r.Actor != "scheduler" ||
		r.ResourceID != fmt.Sprint(x.ID) {
		t.Fatalf("audit = %+v", r)
	}
	run(x.ID, experiment.ActionEnd) // before end_at
	b.Clock.Set(end.Add(time.Minute))
	run(x.ID, experiment.ActionEnd)
	if got := b.Get(t, x.ID); got.Status != experiment.StatusEnded || !got.EndedAt.Equal(end.Add(time.Minute)) {
		t.Fatalf("scheduled end = %s at %v", got.Status, got.EndedAt)
	}

	t.Run("RefusalIsRecorded", func(t *testing.T) {
		b.Clock.Set(Epoch)
		y := b.Create(t, Scheduled(PriceTest("Refused"), start, nil))
		b.SetPlan(t, b.Shop, Plan{Features: FullPlan.Features, CarrierService: true})
		defer b.SetPlan(t, b.Shop, FullPlan)
		b.Clock.Set(start)
		run(y.ID, experiment.ActionStart)
		got := b.Get(t, y.ID)
		if got.Status != experiment.StatusFailed || !strings.HasPrefix(got.FailureReason, "The scheduled start was refused: ") ||
			!strings.Contains(got.FailureReason, "subscription") {
			t.Fatalf("refused scheduled start = %s %q", got.Status, got.FailureReason)
		}
	})
	t.Run("NotWhileUninstalled", func(t *testing.T) {
		// Another bundle: this one's shop stays installed for the others.
		u := Setup(t, nb)
		z := u.Create(t, Scheduled(PriceTest("Waits"), start, nil))
		u.Uninstall(t, u.Shop)
		u.Clock.Set(start.Add(time.Minute))
		if err := u.Service.RunScheduled(ctx, u.Shop.ID, z.ID, experiment.ActionStart); err != nil {
			t.Fatal(err)
		}
		if got := u.Get(t, z.ID); got.Status != experiment.StatusDraft {
			t.Fatalf("a scheduled start ran on an uninstalled shop: %s", got.Status)
		}
	})
	t.Run("GoneIsNothingToDo", func(t *testing.T) {
		run(x.ID+1000, experiment.ActionStart)
		if err := b.Service.RunScheduled(ctx, b.Shop.ID+1000, x.ID, experiment.ActionStart); err == nil {
			t.Fatal("an unknown shop was not an error")
		}
	})
}

func testRunChecks(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "worker"})
	x := b.Create(t, TypeBodies()[experiment.TypeTheme])
	b.Platform.Fail(&experiment.PlatformError{Op: "install theme app block", Status: 503, Message: "busy"})
	if err := b.Service.RunChecks(ctx, b.Shop.ID, x.ID); err == nil {
		t.Fatal("a refused check was not retried")
	}
	if !b.Get(t, x.ID).ChecksPending {
		t.Fatal("a refused check cleared checks_pending")
	}
	b.Platform.Fail(nil)
	if err := b.Service.RunChecks(ctx, b.Shop.ID, x.ID); err != nil {
		t.Fatal(err)
	}
	if b.Get(t, x.ID).ChecksPending || !slices.Contains(b.Platform.Launches(), x.ID) {
		t.Fatal("the checks did not run or did not clear the flag")
	}
	if r := b.Audit(t, b.Shop.ID)[0]; r.Action != "experiment.checks_done" || r.Actor != "worker" {
		t.Fatalf("audit = %+v", r)
	}
	if out := b.Act(t, x.ID, experiment.ActionStart); out.Test.Status != experiment.StatusActive {
		t.Fatalf("start after checks = %s", out.Test.Status)
	}
	if err := b.Service.RunChecks(ctx, b.Shop.ID, x.ID+1000); err != nil {
		t.Fatalf("a deleted test's checks: %v", err)
	}
	if err := b.Service.RunChecks(ctx, b.Shop.ID+1000, x.ID); err == nil {
		t.Fatal("an unknown shop was not an error")
	}
}

// testUnitOfWork: the response is rendered inside the change, so a reply
// that fails leaves nothing behind.
func testUnitOfWork(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	broken := func(*experiment.Outcome) (int, []byte, error) { return 0, nil, errors.New("cannot render") }
	if _, err := b.Service.Create(b.Ctx(), b.Shop, []byte(PriceTest("Unrendered")), broken); err == nil {
		t.Fatal("a failed reply was not an error")
	}
	if tests, _, _ := b.Service.List(b.Ctx(), b.Shop, experiment.Filter{}); len(tests) != 0 {
		t.Fatalf("a create whose reply failed left %d tests", len(tests))
	}
	x := b.Create(t, PriceTest("Rendered"))
	if _, err := b.Service.Apply(b.Ctx(), b.Shop, x.ID, experiment.ActionStart, broken); err == nil {
		t.Fatal("a failed reply was not an error")
	}
	if got := b.Get(t, x.ID); got.Status != experiment.StatusDraft {
		t.Fatalf("a start whose reply failed left the test %s", got.Status)
	}
	if a := b.ExperimentAudit(t); len(a) != 1 {
		t.Fatalf("audit = %v, want the one create", a)
	}
}
