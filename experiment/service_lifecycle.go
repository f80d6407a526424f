package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Apply runs a lifecycle action (start, pause, resume, end, archive) on test
// id of shop. It answers 404 experiment_not_found, 409 checks_pending /
// invalid_status_transition (details: current_status, allowed_actions), 403
// entitlement codes (never for pause, end, archive) and 422 findings when a
// start finds the test invalid: invalid_configuration for a stored field the
// schema refuses (an end_at passed since), launch_blocked when the platform
// refuses a launch check (a 4xx) or the shop's platform token, sealed with
// another key, does not open, and launch_blocked when a start or resume
// would change what another live test changes for the same visitors
// (conflict.go). An action whose target is the current
// status answers the test unchanged. A start whose platform side effects
// fail (unreachable, 5xx, throttled) is saved as `failed` with
// failure_reason and is not an error. Use Preview for preview
// links.
func (s *Service) Apply(ctx context.Context, shop *Shop, id int64, action Action, reply Reply) (*Outcome, error) {
	if action == ActionPreview {
		return nil, Errorf(KindInternal, "internal_error", "experiment.Apply: a preview needs a group; use Preview")
	}
	return s.act(ctx, shop, id, action, 0, reply)
}

// Preview makes a signed storefront link that shows group index of test id
// and moves a draft to preview. Beyond Apply's answers: 422
// preview_unsupported for shipping and checkout changes, 422
// invalid_request (param index) for a group the test does not have.
func (s *Service) Preview(ctx context.Context, shop *Shop, id int64, index int, reply Reply) (*Outcome, error) {
	return s.act(ctx, shop, id, ActionPreview, index, reply)
}

func (s *Service) act(ctx context.Context, shop *Shop, id int64, action Action, index int, reply Reply) (*Outcome, error) {
	var out *Outcome
	_, err := s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "experiment." + string(action), ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			t, err := tx.FindTestForUpdate(ctx, shop.ID, id)
			if err != nil {
				return WriteResult{}, err
			}
			if out, err = s.apply(ctx, tx, shop, t, action, index); err != nil {
				return WriteResult{}, err
			}
			return out.render(reply)
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// apply is one action on a locked test, shared by the surfaces and the
// scheduler so a scheduled start checks exactly what a manual one does.
func (s *Service) apply(ctx context.Context, tx Tx, shop *Shop, t *Test, action Action, index int) (*Outcome, error) {
	plan, err := PlanAction(t, action)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Test: t}
	if plan.Unchanged {
		return out, nil
	}
	if t.Type == TypeCheckout && (action == ActionStart || action == ActionResume) {
		return nil, errCheckoutLaunch()
	}
	if step, ok := StepOf(action); ok {
		if err := CheckEntitlements(shop, t, step); err != nil {
			return nil, err
		}
	}
	now := s.clock()
	switch action {
	case ActionStart:
		failed, err := s.launch(ctx, tx, shop, t, now)
		if err != nil || failed {
			return out, err
		}
	case ActionResume:
		if err := refuseContested(ctx, tx, t); err != nil {
			return nil, err
		}
	case ActionPreview:
		if out.Preview, err = NewPreviewLink(shop, t, index, s.previewSecret, now); err != nil {
			return nil, err
		}
	}
	plan.Apply(t, now)
	if err := tx.SaveTest(ctx, t); err != nil {
		return nil, err
	}
	return out, nil
}

// launch validates t against today's catalog and prepares the platform. A
// platform refusal is recorded on t as `failed` (failed true, no error).
func (s *Service) launch(ctx context.Context, tx Tx, shop *Shop, t *Test, now time.Time) (failed bool, err error) {
	// Launch runs the same validation as create, against today's catalog.
	if _, err := Validate(ctx, shop, t, tx.Catalog(), ValidateFull, now); err != nil {
		return false, asConfiguration(err)
	}
	if err := refuseContested(ctx, tx, t); err != nil {
		return false, err
	}
	if s.platform == nil {
		return false, errors.New("experiment.Service: no Platform to launch with")
	}
	pctx, cancel := context.WithTimeout(ctx, s.launchBudget)
	err = s.zonesOffered(pctx, shop, t)
	if err == nil {
		err = s.platform.PrepareLaunch(pctx, shop, t)
	}
	cancel()
	if err == nil {
		return false, nil
	}
	if _, ours := AsError(err); ours {
		return false, err // zonesOffered's refusal
	}
	if errors.Is(err, ErrUnsealable) {
		// Retrying cannot help, and a 500 would hide that a reinstall (or
		// the server's key) is the fix; nothing reached the platform.
		return false, Refuse("launch_blocked", "",
			"Lift cannot read the platform access token stored for this shop: it was sealed with another key than this server's. Nothing was launched; reinstall the app on the shop, then start the test again.")
	}
	var pe *PlatformError
	if !errors.As(err, &pe) {
		return false, fmt.Errorf("experiment: launch %d: %w", t.ID, err)
	}
	if pe.Refused() {
		// The platform answered that it will not host this test as the shop
		// stands: a launch check failed, and no field of the test is at
		// fault. Nothing changes; the merchant fixes the shop and retries.
		return false, Refuse("launch_blocked", "",
			"A launch check failed: %s. The test was not launched; fix this on the shop, then start the test again.", pe)
	}
	Fail(t, "The platform refused the launch: "+pe.Error(), now)
	if err := tx.SaveTest(ctx, t); err != nil {
		return false, err
	}
	return true, nil
}

// asConfiguration turns the schema findings of a launch into
// invalid_configuration: a start sends no body, so what they refuse is the
// test as stored (most often a schedule.end_at that has passed since it was
// saved), and the message says how to fix it. Findings with a code of their
// own (a product deleted since, say) keep it.
func asConfiguration(err error) error {
	e, ok := AsError(err)
	if !ok || e.Kind != KindValidation {
		return err
	}
	out := *e
	out.Findings = make([]Finding, len(e.Findings))
	first := true
	for i, f := range e.Findings {
		if f.Severity == SeverityError && f.Code == "invalid_request" {
			f.Code = "invalid_configuration"
			f.Message = fmt.Sprintf("The stored test cannot start: %s Update %s, then start the test again.", f.Message, f.Param)
		}
		if f.Severity == SeverityError && first {
			// The top level repeats the first blocking finding (part 7).
			out.Code, out.Message, out.Param, first = f.Code, f.Message, f.Param, false
		}
		out.Findings[i] = f
	}
	return &out
}

// RunScheduled applies a scheduled start or end if the test's schedule still
// asks for it (the merchant may have moved or removed it, or acted by hand).
// A start the merchant must fix (an entitlement or a finding) is recorded as
// `failed` with the reason, so the scheduler does not try it again every
// tick; a test deleted since is nothing to do. Other errors are worth a
// retry. It implements jobs.Actor; the audit actor is the one on ctx.
func (s *Service) RunScheduled(ctx context.Context, shopID, testID int64, action Action) error {
	shop, err := s.repo.FindShopByID(ctx, shopID)
	if err != nil {
		return fmt.Errorf("experiment.RunScheduled: %w", err)
	}
	if action == ActionStart && !shop.Installed() {
		// Lift may not act for the shop: a start would launch a test on a
		// store that removed the app (and platform calls would fail).
		return nil
	}
	_, err = s.repo.Write(ctx, WriteMeta{ShopID: shopID, Action: "experiment.scheduled_" + string(action), ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			res := WriteResult{ResourceID: fmt.Sprint(testID)}
			t, err := tx.FindTestForUpdate(ctx, shopID, testID)
			if err != nil {
				return res, err
			}
			if !stillDue(t, action, s.clock()) {
				return res, nil
			}
			_, err = s.apply(ctx, tx, shop, t, action, 0)
			if e, ok := AsError(err); ok && (e.Kind == KindValidation || e.Kind == KindForbidden) {
				Fail(t, "The scheduled start was refused: "+e.Message, s.clock())
				return res, tx.SaveTest(ctx, t)
			}
			return res, err
		})
	if IsNotFound(err) {
		return nil
	}
	return err
}

func stillDue(t *Test, action Action, now time.Time) bool {
	sc := t.Schedule
	if sc == nil {
		return false
	}
	switch action {
	case ActionStart:
		return t.Scheduled() && !sc.StartAt.After(now)
	case ActionEnd:
		return (t.Status == StatusActive || t.Status == StatusPaused) && sc.EndAt != nil && !sc.EndAt.After(now)
	}
	return false
}

// RunChecks runs the launch checks of a new theme or template test with the
// platform and clears its checks_pending flag; from then on the test accepts
// changes and actions. A test deleted since is nothing to do; any other
// error (a platform refusal included) is worth a retry. It implements
// jobs.Checker; the audit actor is the one on ctx.
func (s *Service) RunChecks(ctx context.Context, shopID, testID int64) error {
	shop, err := s.repo.FindShopByID(ctx, shopID)
	if err != nil {
		return fmt.Errorf("experiment.RunChecks: %w", err)
	}
	t, err := s.repo.FindTestByID(ctx, shopID, testID)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("experiment.RunChecks: %w", err)
	}
	if s.platform == nil {
		return errors.New("experiment.RunChecks: no Platform to check with")
	}
	if err := s.platform.PrepareLaunch(ctx, shop, t); err != nil {
		return fmt.Errorf("experiment.RunChecks %d: %w", testID, err)
	}
	return s.clearChecks(ctx, shopID, testID)
}
