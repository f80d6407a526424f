package v1

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/store"
)

// Lifecycle applies lifecycle actions: the same path for the public API's
// POST /v1/experiments/{id}/{action} and for the scheduler (it implements
// jobs.Actor), so a scheduled start runs every check a manual one does.
type Lifecycle struct {
	DB            *store.DB
	Platform      platform.Admin
	Now           func() time.Time
	PreviewSecret []byte
	// LaunchBudget bounds a launch's platform side effects; default 5 s,
	// well inside the write timeout.
	LaunchBudget time.Duration
}

// Outcome is what an action produced: the test, and for a preview the link.
type Outcome struct {
	Test    *experiment.Test
	Preview *experiment.PreviewLink
	Status  int    // HTTP status of the response
	Body    []byte // the response body (replayed on an idempotent retry)
}

func (l *Lifecycle) now() time.Time {
	if l.Now == nil {
		return time.Now().UTC().Truncate(time.Microsecond)
	}
	return l.Now().UTC().Truncate(time.Microsecond)
}

// Apply runs action on test id of shop. previewIndex is the group a preview
// link shows (ignored for other actions). It answers 404
// experiment_not_found, 409 checks_pending / invalid_status_transition, 403
// entitlement codes (never for pause, end, archive), 422 findings when a
// start finds the test invalid. A start whose platform side effects fail is
// saved as `failed` and answered 200 with failure_reason.
func (l *Lifecycle) Apply(ctx context.Context, shop *experiment.Shop, id int64, action experiment.Action, previewIndex int) (*Outcome, error) {
	var out *Outcome
	_, err := l.DB.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "experiment." + string(action), ResourceType: "experiment"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			t, err := tx.FindTestForUpdate(ctx, shop.ID, id)
			if err != nil {
				return experiment.WriteResult{}, err
			}
			out, err = l.apply(ctx, tx, shop, t, action, previewIndex)
			if err != nil {
				return experiment.WriteResult{}, err
			}
			return experiment.WriteResult{ResourceID: fmt.Sprint(id), Status: out.Status, Body: out.Body}, nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (l *Lifecycle) apply(ctx context.Context, tx *store.Tx, shop *experiment.Shop, t *experiment.Test, action experiment.Action, previewIndex int) (*Outcome, error) {
	plan, err := experiment.PlanAction(t, action)
	if err != nil {
		return nil, err
	}
	now := l.now()
	if plan.Unchanged {
		return respond(&Outcome{Test: t}, testView(t, nil, nil))
	}
	if step, ok := experiment.StepOf(action); ok {
		if err := experiment.CheckEntitlements(shop, t, step); err != nil {
			return nil, err
		}
	}
	out := &Outcome{Test: t}
	switch action {
	case experiment.ActionStart:
		// Launch runs the same validation as create, against today's catalog.
		if _, err := experiment.Validate(ctx, shop, t, tx.Catalog(), experiment.ValidateFull, now); err != nil {
			return nil, err
		}
		// The side effects get a budget well inside the write's timeout, so
		// a platform that hangs ends the launch in `failed`, recorded.
		pctx, cancel := context.WithTimeout(ctx, cmp.Or(l.LaunchBudget, 5*time.Second))
		err := l.Platform.PrepareLaunch(pctx, shop, t)
		cancel()
		if err != nil {
			var pe *platform.Error
			if !errors.As(err, &pe) {
				return nil, err
			}
			experiment.Fail(t, "The platform refused the launch: "+pe.Error(), now)
			if err := tx.SaveTest(ctx, t); err != nil {
				return nil, err
			}
			return respond(out, testView(t, nil, nil))
		}
	case experiment.ActionPreview:
		link, err := experiment.NewPreviewLink(shop, t, previewIndex, l.PreviewSecret, now)
		if err != nil {
			return nil, err
		}
		out.Preview = link
	}
	plan.Apply(t, now)
	if err := tx.SaveTest(ctx, t); err != nil {
		return nil, err
	}
	if out.Preview != nil {
		return respond(out, out.Preview)
	}
	return respond(out, testView(t, nil, nil))
}

func respond(out *Outcome, v any) (*Outcome, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("v1: encode response: %w", err)
	}
	out.Status, out.Body = http.StatusOK, b
	return out, nil
}

// RunScheduled implements jobs.Actor: it applies a scheduled start or end if
// the test's schedule still asks for it. A start the merchant must fix (an
// entitlement or a finding) is recorded as `failed` with the reason, so the
// scheduler does not try it again every tick.
func (l *Lifecycle) RunScheduled(ctx context.Context, shopID, testID int64, action experiment.Action) error {
	ctx = experiment.WithActor(ctx, experiment.Actor{Name: "scheduler"})
	shop, err := l.DB.FindShopByID(ctx, shopID)
	if err != nil {
		return fmt.Errorf("v1.RunScheduled: %w", err)
	}
	_, err = l.DB.Write(ctx, experiment.WriteMeta{ShopID: shopID, Action: "experiment.scheduled_" + string(action), ResourceType: "experiment"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			res := experiment.WriteResult{ResourceID: fmt.Sprint(testID)}
			t, err := tx.FindTestForUpdate(ctx, shopID, testID)
			if err != nil {
				return res, err
			}
			if !stillDue(t, action, l.now()) {
				return res, nil
			}
			_, err = l.apply(ctx, tx, shop, t, action, 0)
			if e, ok := experiment.AsError(err); ok && (e.Kind == experiment.KindValidation || e.Kind == experiment.KindForbidden) {
				experiment.Fail(t, "The scheduled start was refused: "+e.Message, l.now())
				return res, tx.SaveTest(ctx, t)
			}
			return res, err
		})
	if e, ok := experiment.AsError(err); ok && e.Kind == experiment.KindNotFound {
		return nil // deleted since: nothing to do
	}
	return err
}

func stillDue(t *experiment.Test, action experiment.Action, now time.Time) bool {
	s := t.Schedule
	if s == nil {
		return false
	}
	switch action {
	case experiment.ActionStart:
		return t.Scheduled() && !s.StartAt.After(now)
	case experiment.ActionEnd:
		return (t.Status == experiment.StatusActive || t.Status == experiment.StatusPaused) && s.EndAt != nil && !s.EndAt.After(now)
	}
	return false
}

// RunChecks implements jobs.Checker: the theme check of a new theme or
// template test, after which the test accepts changes and actions.
func (l *Lifecycle) RunChecks(ctx context.Context, shopID, testID int64) error {
	ctx = experiment.WithActor(ctx, experiment.Actor{Name: "worker"})
	shop, err := l.DB.FindShopByID(ctx, shopID)
	if err != nil {
		return fmt.Errorf("v1.RunChecks: %w", err)
	}
	t, err := l.DB.FindTestByID(ctx, shopID, testID)
	if e, ok := experiment.AsError(err); ok && e.Kind == experiment.KindNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("v1.RunChecks: %w", err)
	}
	if err := l.Platform.PrepareLaunch(ctx, shop, t); err != nil {
		return fmt.Errorf("v1.RunChecks %d: %w", testID, err)
	}
	return l.clearChecks(ctx, shopID, testID)
}

func (l *Lifecycle) clearChecks(ctx context.Context, shopID, testID int64) error {
	_, err := l.DB.Write(ctx, experiment.WriteMeta{ShopID: shopID, Action: "experiment.checks_done", ResourceType: "experiment"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: fmt.Sprint(testID)}, tx.SetChecksPending(ctx, shopID, testID, false)
		})
	return err
}
