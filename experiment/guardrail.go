package experiment

import (
	"context"
	"errors"
	"fmt"
)

var errNotActive = errors.New("experiment: the test is not active")

// PauseForGuardrail pauses test id of shop on Lift's own initiative because
// a guardrail metric is harmed beyond what the merchant tolerates. It runs
// the same transition as a manual pause (state machine, entitlements, save)
// and records reason on the test (pause_reason) and in the audit record of
// the write ("experiment.pause", with the actor on ctx). It reports whether
// it paused: a test that is no longer active (paused by hand, ended) is left
// as it is, and a test deleted since is nothing to do. It implements
// results.Pauser.
func (s *Service) PauseForGuardrail(ctx context.Context, shopID, id int64, reason string) (bool, error) {
	shop, err := s.repo.FindShopByID(ctx, shopID)
	if err != nil {
		return false, fmt.Errorf("experiment.PauseForGuardrail: %w", err)
	}
	paused := false
	_, err = s.repo.Write(ctx, WriteMeta{ShopID: shopID, Action: "experiment." + string(ActionPause),
		ResourceType: "experiment", Reason: reason},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			res := WriteResult{ResourceID: fmt.Sprint(id)}
			t, err := tx.FindTestForUpdate(ctx, shopID, id)
			if err != nil {
				return res, err
			}
			if t.Status != StatusActive {
				// Roll back: no audit record for a pause that did not happen.
				return res, errNotActive
			}
			// apply saves the test; the reason rides along in that save.
			t.PauseReason = reason
			if _, err := s.apply(ctx, tx, shop, t, ActionPause, 0); err != nil {
				return res, err
			}
			paused = true
			return res, nil
		})
	if IsNotFound(err) || errors.Is(err, errNotActive) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("experiment.PauseForGuardrail %d: %w", id, err)
	}
	return paused, nil
}
