package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The use cases below are the admin panel's (session document part 3 and
// 4.1): duplicate, reset analytics, remove products. They run on the same
// ports as the public API's so both panels see one set of rules.

// Duplicate copies test id of shop as a new draft with the same products,
// groups and settings; the original is unchanged. The copy has no schedule
// (a copied start_at would launch it on its own) and no history. It answers
// 404 experiment_not_found and the entitlement codes of a create (step
// create); a theme or template copy waits for its launch checks like a
// create.
func (s *Service) Duplicate(ctx context.Context, shop *Shop, id int64, reply Reply) (*Outcome, error) {
	now := s.clock()
	var out *Outcome
	_, err := s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "experiment.duplicate", ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			orig, err := tx.FindTestForUpdate(ctx, shop.ID, id)
			if err != nil {
				return WriteResult{}, err
			}
			if err := CheckEntitlements(shop, orig, StepCreate); err != nil {
				return WriteResult{}, err
			}
			c := copyOf(orig, now)
			c.ChecksPending = s.queue != nil && NeedsChecks(c)
			if err := tx.CreateTest(ctx, c); err != nil {
				return WriteResult{}, err
			}
			if err := judgeZones(ctx, tx, c); err != nil {
				return WriteResult{}, err
			}
			out = &Outcome{Test: c}
			return out.render(reply)
		})
	if err != nil {
		return nil, err
	}
	if out.Test.ChecksPending {
		s.enqueueChecks(ctx, shop.ID, out.Test.ID)
	}
	return out, nil
}

// copyOf is a new draft with t's configuration and none of its history.
func copyOf(t *Test, now time.Time) *Test {
	c := &Test{ShopID: t.ShopID, Type: t.Type, Status: StatusDraft, Name: t.Name, Hypothesis: t.Hypothesis,
		PrimaryMetric: t.PrimaryMetric, TrafficAllocation: t.TrafficAllocation, HasForceAssignRules: t.HasForceAssignRules,
		AssignmentVersion: 1, Bucketing: CurrentBucketing, ProductGroup: t.ProductGroup, CreatedAt: now, UpdatedAt: now, Analysis: t.Analysis,
		Guardrails: append([]Guardrail{}, t.Guardrails...)}
	if t.Analysis.Prior != nil {
		p := *t.Analysis.Prior
		c.Analysis.Prior = &p
	}
	if t.Shared != nil {
		c.Shared = make(map[string]json.RawMessage, len(t.Shared))
		for k, v := range t.Shared {
			c.Shared[k] = append(json.RawMessage(nil), v...)
		}
	}
	c.Groups = make([]Group, len(t.Groups))
	for i, g := range t.Groups {
		g.Content = append(json.RawMessage(nil), g.Content...)
		c.Groups[i] = g
	}
	if len(t.Audience) > 0 {
		c.Audience = append(json.RawMessage(nil), t.Audience...)
	}
	return c
}

// ResetAnalytics permanently deletes what storefronts recorded for test id
// of shop (views, add-to-carts, checkouts, orders, revenue) and what was
// computed from it (results snapshots, custom queries); its configuration
// and status stay. A running test gets a fresh snapshot on the scheduler's
// next pass; a paused or ended one answers 202 (no results) from then on.
// The erase runs inside the unit of work, so the audit log records it only
// when it happened. It answers 404 experiment_not_found; an eraser failure
// is an internal error and nothing is recorded.
func (s *Service) ResetAnalytics(ctx context.Context, shop *Shop, id int64) error {
	if s.eraser == nil {
		return errors.New("experiment.ResetAnalytics: no Eraser configured")
	}
	_, err := s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "experiment.reset_analytics", ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			// The lock keeps a concurrent action from interleaving with the
			// erase; the test itself is not changed.
			if _, err := tx.FindTestForUpdate(ctx, shop.ID, id); err != nil {
				return WriteResult{}, err
			}
			if err := s.eraser.EraseTest(ctx, shop.ID, id); err != nil {
				return WriteResult{}, fmt.Errorf("experiment.ResetAnalytics %d: %w", id, err)
			}
			// A snapshot or a custom query is a copy of the erased numbers.
			if err := tx.ForgetResults(ctx, shop.ID, id); err != nil {
				return WriteResult{}, err
			}
			return WriteResult{ResourceID: fmt.Sprint(id)}, nil
		})
	return err
}

// checkRemoval refuses a removal that leaves t a test creation would
// refuse: a price group whose remaining prices are all catalog prices, an
// offer with nothing to discount (session audit 2, S2-4). Only what the
// removal broke counts: a finding the stored test already had (a product
// deleted from the catalog since launch) does not block it.
func (s *Service) checkRemoval(ctx context.Context, tx Tx, shop *Shop, t *Test, now time.Time) error {
	_, err := Validate(ctx, shop, t, tx.Catalog(), ValidateFull, now)
	_, err = staleOnly(nil, err, nil, func() error {
		stored, err := tx.FindTestForUpdate(ctx, shop.ID, t.ID)
		if err != nil {
			return err
		}
		_, err = Validate(ctx, shop, stored, tx.Catalog(), ValidateFull, now)
		return err
	})
	if e, ok := AsError(err); ok && e.Kind == KindValidation {
		return Refuse(e.Code, "productIds", "Removing these products leaves a test the rules refuse: %s End the test instead, or duplicate it and change what it tests.", e.Message)
	}
	return err
}

// RemoveProducts takes products out of a test's price part, its offers'
// conditions and its content part (a price, price v2 (offer), content or
// combined test) in any status, a running one included — the rest keep
// running, so the locked-field rules of a PATCH do not apply: the products
// leave shared.price.product_ids, their variants every group's prices,
// every offer's conditions.product_ids and shared.visual_editor.product_ids. Ids the test does not have are ignored
// (nothing changes when none match). It answers 404 experiment_not_found,
// 409 checks_pending, 422 invalid_request (param productIds) when no ids are
// given or every product would go (end the test instead), and a
// *NoProductsError for a test with none of these parts.
func (s *Service) RemoveProducts(ctx context.Context, shop *Shop, id int64, productIDs []string, reply Reply) (*Outcome, error) {
	if len(productIDs) == 0 {
		return nil, Refuse("invalid_request", "productIds", "Name at least one product to remove.")
	}
	now := s.clock()
	var out *Outcome
	_, err := s.repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "experiment.remove_products", ResourceType: "experiment"},
		func(ctx context.Context, tx Tx) (WriteResult, error) {
			t, err := tx.FindTestForUpdate(ctx, shop.ID, id)
			if err != nil {
				return WriteResult{}, err
			}
			if t.ChecksPending {
				return WriteResult{}, errChecksPending()
			}
			changed, err := removeProducts(ctx, tx.Catalog(), t, productIDs)
			if err != nil {
				return WriteResult{}, err
			}
			if changed {
				if err := s.checkRemoval(ctx, tx, shop, t, now); err != nil {
					return WriteResult{}, err
				}
				t.UpdatedAt = now
				if err := tx.SaveTest(ctx, t); err != nil {
					return WriteResult{}, err
				}
			}
			out = &Outcome{Test: t}
			return out.render(reply)
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}
