package experimenttest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

func testCreate(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	n := 0
	for typ, body := range TypeBodies() {
		out, err := b.Service.Create(b.Ctx(), b.Shop, []byte(body), JSONReply(201))
		if err != nil {
			t.Fatalf("create %s: %v", typ, err)
		}
		n++
		x := out.Test
		if x.ID == 0 || x.Type != typ || x.Status != experiment.StatusDraft || x.ShopID != b.Shop.ID || x.AssignmentVersion != 1 {
			t.Fatalf("created %s = %+v", typ, x)
		}
		if out.Warnings == nil || out.Status != 201 {
			t.Fatalf("create %s: warnings %v, status %d", typ, out.Warnings, out.Status)
		}
		pending := typ == experiment.TypeTheme || typ == experiment.TypeTemplate
		got := b.Get(t, x.ID)
		if got.ChecksPending != pending || x.ChecksPending != pending {
			t.Fatalf("%s: checks pending = %v (read back %v), want %v", typ, x.ChecksPending, got.ChecksPending, pending)
		}
		if queued := slices.Contains(b.Queue.Checks(), x.ID); queued != pending {
			t.Fatalf("%s: checks queued = %v, want %v", typ, queued, pending)
		}
		// What a create answers is what a later read returns (as JSON:
		// Postgres' jsonb keeps its own key order inside content).
		read, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var created, readBack any
		if err := json.Unmarshal(out.Body, &created); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(read, &readBack); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(created, readBack); diff != "" {
			t.Fatalf("%s: read back differs from the create's answer (-create +read):\n%s", typ, diff)
		}
	}
	if got := b.ExperimentAudit(t); len(got) != n || got[0] != "experiment.create" {
		t.Fatalf("audit = %v, want %d creates", got, n)
	}
	if r := b.Audit(t, b.Shop.ID)[0]; r.Actor != "token" {
		t.Fatalf("audit actor = %q, want the request's token", r.Actor)
	}
}

func testCreateRefused(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	lapsed := b.NewShop(t, Plan{Features: FullPlan.Features, CarrierService: true})
	basic := b.NewShop(t, Plan{SubscriptionActive: true})
	unknown := strings.Replace(PriceTest("Ghost"), TeeS, "gid://shopify/ProductVariant/999999", 1)
	for _, c := range []struct {
		name string
		shop *experiment.Shop
		body string
		kind experiment.Kind
		code string
	}{
		{"ErrMalformedJSON", b.Shop, `{"type":`, experiment.KindInvalidRequest, "malformed_json"},
		{"ErrNoType", b.Shop, `{"name":"x"}`, experiment.KindValidation, "invalid_request"},
		{"ErrSubscriptionInactive", lapsed, PriceTest("Lapsed"), experiment.KindForbidden, "subscription_inactive"},
		{"ErrFeatureNotInPlan", basic, PriceTest("Basic"), experiment.KindForbidden, "feature_not_in_plan"},
		{"ErrUnknownVariant", b.Shop, unknown, experiment.KindValidation, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.Service.Create(b.Ctx(), c.shop, []byte(c.body), JSONReply(201))
			e, ok := experiment.AsError(err)
			if !ok || e.Kind != c.kind || (c.code != "" && e.Code != c.code) {
				t.Fatalf("error = %v, want kind %d code %q", err, c.kind, c.code)
			}
			if c.kind == experiment.KindValidation && len(e.Findings) == 0 {
				t.Fatalf("a 422 without findings: %v", err)
			}
			tests, _, err := b.Service.List(b.Ctx(), c.shop, experiment.Filter{})
			if err != nil || len(tests) != 0 {
				t.Fatalf("a refused create left %d tests (%v)", len(tests), err)
			}
		})
	}
	if got := b.ExperimentAudit(t); len(got) != 0 {
		t.Fatalf("refused creates were audited: %v", got)
	}
}

func testUpdate(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	x := b.Create(t, PriceTest("Before"))
	t.Run("Rename", func(t *testing.T) {
		later := Epoch.Add(time.Minute)
		b.Clock.Set(later)
		out, err := b.Service.Update(b.Ctx(), b.Shop, x.ID, []byte(`{"name":"After"}`), JSONReply(200))
		if err != nil {
			t.Fatal(err)
		}
		if out.Test.Name != "After" || !out.Test.UpdatedAt.Equal(later) || out.Warnings == nil || out.Status != 200 {
			t.Fatalf("update = %+v", out)
		}
		if got := b.Get(t, x.ID); got.Name != "After" || !got.UpdatedAt.Equal(later) || got.AssignmentVersion != 1 {
			t.Fatalf("read back = %+v", got)
		}
		// The same patch again changes nothing, not even updated_at.
		b.Clock.Set(later.Add(time.Minute))
		if _, err := b.Service.Update(b.Ctx(), b.Shop, x.ID, []byte(`{"name":"After"}`), JSONReply(200)); err != nil {
			t.Fatal(err)
		}
		if got := b.Get(t, x.ID); !got.UpdatedAt.Equal(later) {
			t.Fatalf("an unchanged patch moved updated_at to %s", got.UpdatedAt)
		}
	})
	t.Run("SplitReassigns", func(t *testing.T) {
		out, err := b.Service.Update(b.Ctx(), b.Shop, x.ID,
			[]byte(`{"test_groups":[{"index":0,"split":40},{"index":1,"split":60}]}`), JSONReply(200))
		if err != nil {
			t.Fatal(err)
		}
		if out.Test.AssignmentVersion != 2 || out.Test.Groups[1].Split != 60 || b.Get(t, x.ID).Groups[0].Split != 40 {
			t.Fatalf("split update = %+v", out.Test)
		}
	})
	refusals := []struct {
		name, body string
		id         int64
		kind       experiment.Kind
		code       string
	}{
		{"ErrNotFound", `{"name":"x"}`, x.ID + 1000, experiment.KindNotFound, "experiment_not_found"},
		{"ErrTypeChange", `{"type":"offer"}`, x.ID, experiment.KindValidation, "invalid_request"},
		{"ErrMalformedJSON", `{`, x.ID, experiment.KindInvalidRequest, "malformed_json"},
		{"ErrUnknownVariant", fmt.Sprintf(`{"test_groups":[{"index":1,"content":{"prices":[{"product_variant_id":%q,"price":%s}]}}]}`,
			"gid://shopify/ProductVariant/999999", usd19), x.ID, experiment.KindValidation, ""},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			before := b.Get(t, x.ID)
			_, err := b.Service.Update(b.Ctx(), b.Shop, c.id, []byte(c.body), JSONReply(200))
			if e, ok := experiment.AsError(err); !ok || e.Kind != c.kind || (c.code != "" && e.Code != c.code) {
				t.Fatalf("error = %v, want kind %d code %q", err, c.kind, c.code)
			}
			if diff := cmp.Diff(before, b.Get(t, x.ID)); diff != "" {
				t.Fatalf("a refused update changed the test (-before +after):\n%s", diff)
			}
		})
	}
	t.Run("LockedAfterLaunch", func(t *testing.T) {
		y := b.Create(t, PriceTest("Launched"))
		b.Act(t, y.ID, experiment.ActionStart)
		_, err := b.Service.Update(b.Ctx(), b.Shop, y.ID, []byte(`{"traffic_allocation":50}`), JSONReply(200))
		if e := WantCode(t, err, experiment.KindConflict, "locked_field"); e.Param != "traffic_allocation" {
			t.Fatalf("param = %q", e.Param)
		}
		out, err := b.Service.Update(b.Ctx(), b.Shop, y.ID, []byte(`{"name":"Still open"}`), JSONReply(200))
		if err != nil || out.Test.Name != "Still open" || out.Test.Status != experiment.StatusActive {
			t.Fatalf("open field after launch = %v, %v", out, err)
		}
	})
}

func testGetAndList(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	other := b.NewShop(t, FullPlan)
	var ids []int64
	bodies := []string{PriceTest("First"), TypeBodies()[experiment.TypeURLRedirect],
		Scheduled(PriceTest("Third"), Epoch.Add(48*time.Hour), nil)}
	for i, body := range bodies {
		b.Clock.Set(Epoch.Add(time.Duration(i) * time.Minute))
		ids = append(ids, b.Create(t, body).ID)
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := b.Service.Get(b.Ctx(), other, ids[0])
		WantCode(t, err, experiment.KindNotFound, "experiment_not_found")
		_, err = b.Service.Get(b.Ctx(), b.Shop, ids[2]+1000)
		WantCode(t, err, experiment.KindNotFound, "experiment_not_found")
		if !experiment.IsNotFound(err) {
			t.Fatal("IsNotFound does not recognise experiment_not_found")
		}
	})
	list := func(f experiment.Filter) ([]int64, bool) {
		t.Helper()
		tests, more, err := b.Service.List(b.Ctx(), b.Shop, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, x := range tests {
			out = append(out, x.ID)
		}
		return out, more
	}
	t.Run("Pages", func(t *testing.T) {
		page, more := list(experiment.Filter{Limit: 2})
		if diff := cmp.Diff([]int64{ids[2], ids[1]}, page); diff != "" || !more {
			t.Fatalf("first page (more %v) mismatch (-want +got):\n%s", more, diff)
		}
		last := b.Get(t, ids[1])
		page, more = list(experiment.Filter{Limit: 2, After: &experiment.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}})
		if diff := cmp.Diff([]int64{ids[0]}, page); diff != "" || more {
			t.Fatalf("second page (more %v) mismatch (-want +got):\n%s", more, diff)
		}
	})
	yes, no := true, false
	since := Epoch.Add(time.Minute)
	for _, c := range []struct {
		name string
		f    experiment.Filter
		want []int64
	}{
		{"ByType", experiment.Filter{Types: []experiment.Type{experiment.TypeURLRedirect}}, []int64{ids[1]}},
		{"Scheduled", experiment.Filter{Scheduled: &yes}, []int64{ids[2]}},
		{"NotScheduled", experiment.Filter{Scheduled: &no}, []int64{ids[1], ids[0]}},
		{"ByStatus", experiment.Filter{Statuses: []experiment.Status{experiment.StatusActive}}, nil},
		{"CreatedSince", experiment.Filter{CreatedGE: &since}, []int64{ids[2], ids[1]}},
		{"CreatedAfter", experiment.Filter{CreatedGT: &since}, []int64{ids[2]}},
		{"CreatedBefore", experiment.Filter{CreatedLT: &since}, []int64{ids[0]}},
		{"CreatedUntil", experiment.Filter{CreatedLE: &since}, []int64{ids[1], ids[0]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := list(c.f)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if tests, _, err := b.Service.List(b.Ctx(), other, experiment.Filter{}); err != nil || len(tests) != 0 {
		t.Fatalf("another shop lists %d tests (%v)", len(tests), err)
	}
}
