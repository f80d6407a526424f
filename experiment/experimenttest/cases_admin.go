package experimenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

// twoProducts is a price test of the tee and the sweater.
func twoProducts(name string) string {
	return fmt.Sprintf(`{"type":"price","name":%q,"hypothesis":"Cheaper sells more","shared":{"price":{"product_ids":[%q,%q]}},"test_groups":`+twoGroups+`}`,
		name, Tee, Sweater, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s},{"product_variant_id":%q,"price":{"amount":"79.00","currency":"USD"}}]}`,
			TeeS, usd19, SweaterS))
}

func testDuplicate(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	end := Epoch.Add(72 * time.Hour)
	orig := b.Create(t, Scheduled(twoProducts("Original"), Epoch.Add(time.Hour), &end))
	b.Act(t, orig.ID, experiment.ActionStart)
	before := b.Get(t, orig.ID)
	later := Epoch.Add(2 * time.Hour)
	b.Clock.Set(later)
	out, err := b.Service.Duplicate(b.Ctx(), b.Shop, orig.ID, JSONReply(201))
	if err != nil {
		t.Fatal(err)
	}
	c := b.Get(t, out.Test.ID)
	if c.ID == orig.ID || c.Status != experiment.StatusDraft || c.StartedAt != nil || c.Schedule != nil ||
		c.AssignmentVersion != 1 || !c.CreatedAt.Equal(later) || out.Status != 201 {
		t.Fatalf("copy = %+v", c)
	}
	// A test created now, started or copied, buckets its visitors with the
	// current scheme (independent of other tests'), and keeps it.
	if before.Bucketing != experiment.CurrentBucketing || c.Bucketing != experiment.CurrentBucketing {
		t.Fatalf("bucketing: original %d, copy %d, want %d", before.Bucketing, c.Bucketing, experiment.CurrentBucketing)
	}
	// Same products, groups and settings.
	same := func(x *experiment.Test) any {
		return []any{x.Type, x.Name, x.Hypothesis, x.PrimaryMetric, x.TrafficAllocation, x.Shared, x.Groups, x.Audience}
	}
	if diff := cmp.Diff(same(before), same(c)); diff != "" {
		t.Fatalf("the copy's configuration differs (-original +copy):\n%s", diff)
	}
	if diff := cmp.Diff(before, b.Get(t, orig.ID)); diff != "" {
		t.Fatalf("duplicating changed the original (-before +after):\n%s", diff)
	}
	if r := b.Audit(t, b.Shop.ID)[0]; r.Action != "experiment.duplicate" || r.ResourceID != fmt.Sprint(c.ID) {
		t.Fatalf("audit = %+v", r)
	}
	t.Run("ThemeCopyWaitsForChecks", func(t *testing.T) {
		th := b.Create(t, TypeBodies()[experiment.TypeTheme])
		if err := b.Service.RunChecks(b.Ctx(), b.Shop.ID, th.ID); err != nil {
			t.Fatal(err)
		}
		out, err := b.Service.Duplicate(b.Ctx(), b.Shop, th.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Get(t, out.Test.ID).ChecksPending || !slices.Contains(b.Queue.Checks(), out.Test.ID) {
			t.Fatal("a theme test's copy does not wait for its own checks")
		}
	})
	t.Run("Errors", func(t *testing.T) {
		_, err := b.Service.Duplicate(b.Ctx(), b.Shop, orig.ID+1000, nil)
		WantCode(t, err, experiment.KindNotFound, "experiment_not_found")
		lapsed := *b.Shop
		lapsed.SubscriptionActive = false
		_, err = b.Service.Duplicate(b.Ctx(), &lapsed, orig.ID, nil)
		WantCode(t, err, experiment.KindForbidden, "subscription_inactive")
	})
}

func testResetAnalytics(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	x := b.Create(t, PriceTest("Reset"))
	b.Act(t, x.ID, experiment.ActionStart)
	before := b.Get(t, x.ID)
	if err := b.Service.ResetAnalytics(b.Ctx(), b.Shop, x.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]int64{{b.Shop.ID, x.ID}}, b.Eraser.Erased()); diff != "" {
		t.Fatalf("erased mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, b.Get(t, x.ID)); diff != "" {
		t.Fatalf("a reset changed the configuration (-before +after):\n%s", diff)
	}
	if r := b.Audit(t, b.Shop.ID)[0]; r.Action != "experiment.reset_analytics" || r.ResourceID != fmt.Sprint(x.ID) {
		t.Fatalf("audit = %+v", r)
	}
	audit := len(b.ExperimentAudit(t))
	err := b.Service.ResetAnalytics(b.Ctx(), b.Shop, x.ID+1000)
	WantCode(t, err, experiment.KindNotFound, "experiment_not_found")
	b.Eraser.Fail(errors.New("warehouse down"))
	if err := b.Service.ResetAnalytics(b.Ctx(), b.Shop, x.ID); err == nil {
		t.Fatal("a failed erase was not an error")
	}
	b.Eraser.Fail(nil)
	if n := len(b.ExperimentAudit(t)); n != audit || len(b.Eraser.Erased()) != 1 {
		t.Fatalf("refused resets were recorded (audit %d → %d, erased %v)", audit, n, b.Eraser.Erased())
	}
	noEraser := experiment.NewService(experiment.ServiceConfig{Repository: b.Repo})
	if err := noEraser.ResetAnalytics(b.Ctx(), b.Shop, x.ID); err == nil {
		t.Fatal("a reset without an Eraser succeeded")
	}
}

func testRemoveProducts(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	x := b.Create(t, twoProducts("Two products"))
	b.Act(t, x.ID, experiment.ActionStart)
	later := Epoch.Add(time.Hour)
	b.Clock.Set(later)
	out, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, x.ID, []string{Sweater, "gid://shopify/Product/1"}, JSONReply(200))
	if err != nil {
		t.Fatal(err)
	}
	got := b.Get(t, x.ID)
	wantProducts(t, got.Shared["price"], []string{Tee})
	wantVariants(t, got.Groups[1].Content, []string{TeeS})
	if got.Status != experiment.StatusActive || !got.UpdatedAt.Equal(later) || got.AssignmentVersion != 1 || out.Status != 200 {
		t.Fatalf("after removing = %+v", got)
	}
	// What is left is still a valid test: the rest keep running.
	if _, err := experiment.Validate(context.Background(), b.Shop, got, b.Repo.Catalog(), experiment.ValidateFull, later); err != nil {
		t.Fatalf("the remaining test is invalid: %v", err)
	}
	if r := b.Audit(t, b.Shop.ID)[0]; r.Action != "experiment.remove_products" {
		t.Fatalf("audit = %+v", r)
	}
	t.Run("UnknownIdsChangeNothing", func(t *testing.T) {
		b.Clock.Set(later.Add(time.Hour))
		if _, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, x.ID, []string{"gid://shopify/Product/1"}, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, b.Get(t, x.ID)); diff != "" {
			t.Fatalf("an unknown product changed the test (-before +after):\n%s", diff)
		}
	})
	t.Run("LeavingNothingToTestIsRefused", func(t *testing.T) {
		// The sweater keeps its catalog price: once the tee goes, the
		// variant group shows what the control shows (session audit 2, S2-4).
		body := fmt.Sprintf(`{"type":"price","name":"Tee does the work","shared":{"price":{"product_ids":[%q,%q]}},"test_groups":`+twoGroups+`}`,
			Tee, Sweater, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s},{"product_variant_id":%q,"price":{"amount":"98.00","currency":"USD"}}]}`,
				TeeS, usd19, SweaterS))
		y := b.Create(t, body)
		b.Act(t, x.ID, experiment.ActionEnd) // x has the tee live (conflict.go)
		b.Act(t, y.ID, experiment.ActionStart)
		before := b.Get(t, y.ID)
		_, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, y.ID, []string{Tee}, nil)
		WantCode(t, err, experiment.KindValidation, "change_required")
		if diff := cmp.Diff(before, b.Get(t, y.ID)); diff != "" {
			t.Fatalf("a refused removal changed the test (-before +after):\n%s", diff)
		}
		if _, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, y.ID, []string{Sweater}, nil); err != nil {
			t.Fatalf("removing the product at its catalog price: %v", err)
		}
	})
	t.Run("Combined", func(t *testing.T) {
		body := fmt.Sprintf(`{"type":"combined","name":"c","shared":{"price":{"product_ids":[%q,%q]},"url_redirect":{"source_path":"/"}},"test_groups":`+twoGroups+`}`,
			Tee, Sweater, fmt.Sprintf(`{"price":{"prices":[{"product_variant_id":%q,"price":%s},{"product_variant_id":%q,"price":%s}]},"url_redirect":{"destination":"/pages/sale"}}`,
				TeeS, usd19, SweaterS, usd19))
		y := b.Create(t, body)
		if _, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, y.ID, []string{Tee}, nil); err != nil {
			t.Fatal(err)
		}
		got := b.Get(t, y.ID)
		wantProducts(t, got.Shared["price"], []string{Sweater})
		var content map[string]json.RawMessage
		if err := json.Unmarshal(got.Groups[1].Content, &content); err != nil {
			t.Fatal(err)
		}
		wantVariants(t, content["price"], []string{SweaterS})
		if len(content["url_redirect"]) == 0 || len(got.Shared["url_redirect"]) == 0 {
			t.Fatalf("the redirect part was lost: %s", got.Groups[1].Content)
		}
	})
	redirect := b.Create(t, TypeBodies()[experiment.TypeURLRedirect])
	for _, c := range []struct {
		name string
		id   int64
		ids  []string
		kind experiment.Kind
		code string
	}{
		{"ErrEverything", x.ID, []string{Tee}, experiment.KindValidation, "invalid_request"},
		{"ErrNoIDs", x.ID, nil, experiment.KindValidation, "invalid_request"},
		{"ErrNotAPriceTest", redirect.ID, []string{Tee}, experiment.KindValidation, "invalid_request"},
		{"ErrNotFound", x.ID + 1000, []string{Tee}, experiment.KindNotFound, "experiment_not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, c.id, c.ids, nil)
			e := WantCode(t, err, c.kind, c.code)
			if c.kind == experiment.KindValidation && e.Param != "productIds" {
				t.Fatalf("param = %q", e.Param)
			}
		})
	}
	t.Run("ErrChecksPending", func(t *testing.T) {
		th := b.Create(t, TypeBodies()[experiment.TypeTheme])
		_, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, th.ID, []string{Tee}, nil)
		WantCode(t, err, experiment.KindConflict, "checks_pending")
	})
}

func wantProducts(t *testing.T, shared json.RawMessage, want []string) {
	t.Helper()
	var p experiment.PriceShared
	if err := json.Unmarshal(shared, &p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, p.ProductIDs); diff != "" {
		t.Fatalf("product_ids mismatch (-want +got):\n%s", diff)
	}
}

func wantVariants(t *testing.T, content json.RawMessage, want []string) {
	t.Helper()
	var p experiment.PriceContent
	if err := json.Unmarshal(content, &p); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, vp := range p.Prices {
		got = append(got, vp.ProductVariantID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("priced variants mismatch (-want +got):\n%s", diff)
	}
}
