package experimenttest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/liftab/lift/experiment"
)

// testAdminPanel: the admin panel's change of a test (PUT, pause, resume)
// on each backend. A start the platform failed is kept and reported as an
// error; pause and resume refuse a test already there even when called at
// once; every change names its test in the audit log (session audit 2,
// S2-1, S2-5, S2-7).
func testAdminPanel(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	change := func(id int64, c experiment.AdminChange) (*experiment.Outcome, error) {
		return b.Service.ChangeFromAdminPanel(b.Ctx(), b.Shop, id, c)
	}
	t.Run("FailedLaunchIsAnErrorAndKept", func(t *testing.T) {
		x := b.Create(t, PriceTest("Doomed"))
		b.Platform.Fail(&experiment.PlatformError{Op: "register cart transform", Status: 500, Message: "Internal Server Error"})
		_, err := change(x.ID, experiment.AdminChange{Body: []byte(`{"name":"Doomed twice"}`), Action: experiment.ActionStart})
		b.Platform.Fail(nil)
		WantCode(t, err, experiment.KindInternal, "launch_failed")
		if got := b.Get(t, x.ID); got.Status != experiment.StatusFailed || got.Name != "Doomed twice" || got.FailureReason == "" {
			t.Fatalf("after a failed launch: status %s, name %q, reason %q", got.Status, got.Name, got.FailureReason)
		}
		if out, err := change(x.ID, experiment.AdminChange{Action: experiment.ActionStart}); err != nil || out.Test.Status != experiment.StatusActive {
			t.Fatalf("relaunch = %v", err)
		}
	})
	t.Run("StrictActionsAtOnce", func(t *testing.T) {
		x := b.Create(t, PriceTest("Racing"))
		b.Act(t, x.ID, experiment.ActionStart)
		b.Act(t, x.ID, experiment.ActionPause)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = change(x.ID, experiment.AdminChange{Action: experiment.ActionResume, Strict: true})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			WantCode(t, err, experiment.KindConflict, "invalid_status_transition")
		}
		if ok != 1 || b.Get(t, x.ID).Status != experiment.StatusActive {
			t.Fatalf("%d of %d resumes succeeded, want 1", ok, len(errs))
		}
		// A PUT's status is not strict: ACTIVE on a running test is a no-op.
		if _, err := change(x.ID, experiment.AdminChange{Action: experiment.ActionStart}); err != nil {
			t.Fatalf("PUT ACTIVE on a running test: %v", err)
		}
	})
	t.Run("AuditNamesTheTest", func(t *testing.T) {
		x := b.Create(t, PriceTest("Audited"))
		for _, c := range []experiment.AdminChange{{Body: []byte(`{"name":"Renamed"}`)}, {Action: experiment.ActionStart},
			{Action: experiment.ActionPause, Strict: true}} {
			if _, err := change(x.ID, c); err != nil {
				t.Fatal(err)
			}
			if r := b.Audit(t, b.Shop.ID)[0]; r.ResourceID != fmt.Sprint(x.ID) {
				t.Fatalf("audit of %+v = %+v, want resource %d", c, r, x.ID)
			}
		}
	})
}
