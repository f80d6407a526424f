package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// noQueue accepts every delivery; the test processes it itself.
type noQueue struct{}

func (noQueue) EnqueueWebhook(context.Context, int64, string) error            { return nil }
func (noQueue) RequeueWebhook(context.Context, int64, string, time.Time) error { return nil }

// TestThemeWarningOnBothAPIs: a THEMES_PUBLISH that takes a live template
// test's theme off the storefront raises a warning that GET
// /v1/experiments/{id} and GET /api/experiments/{id} both show, until its
// theme is published again.
func TestThemeWarningOnBothAPIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop()
	started := epoch.Add(-time.Hour)
	test := &experiment.Test{ShopID: s.shop.ID, Type: experiment.TypeTemplate, Status: experiment.StatusActive, Name: "Alt PDP",
		TrafficAllocation: 100, AssignmentVersion: 1,
		Shared: map[string]json.RawMessage{"template": json.RawMessage(`{"theme_id":"gid://shopify/OnlineStoreTheme/1201"}`)},
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50},
			{Index: 1, Name: "Variant", Split: 50, Content: json.RawMessage(`{"template":"product.alternate"}`)}},
		CreatedAt: started, UpdatedAt: started, StartedAt: &started}
	lifttest.PutTest(t, e.db, test)
	hooks := &experiment.WebhookService{Repo: store.WebhookRepo{DB: e.db}, Orders: warehouse.WebhookOrders{W: e.wh}, Queue: noQueue{}}
	publish := func(delivery string, theme int) {
		t.Helper()
		body := []byte(fmt.Sprintf(`{"id":%d,"name":"Theme %d","role":"main"}`, theme, theme))
		if err := hooks.Receive(t.Context(), experiment.WebhookReceipt{Topic: experiment.TopicThemesPublish,
			ShopDomain: s.shop.Domain, DeliveryID: delivery, Body: body}); err != nil {
			t.Fatal(err)
		}
		if err := hooks.Process(t.Context(), s.shop.ID, delivery, experiment.WebhookAttempt{Try: 1}); err != nil {
			t.Fatal(err)
		}
	}
	path := fmt.Sprint("/experiments/", test.ID)
	// warnings reads the warning codes each surface shows.
	warnings := func() (v1, session []string) {
		t.Helper()
		r := e.send(t, "GET", "/v1"+path, "", "Authorization", "Bearer "+s.token)
		if r.Status != 200 {
			t.Fatalf("v1 get = %d %s", r.Status, r.Raw)
		}
		codes := func(list any) []string {
			out := []string{}
			ws, _ := list.([]any)
			for _, w := range ws {
				m, _ := w.(map[string]any)
				if m["severity"] != "warning" || m["message"] == "" {
					t.Fatalf("warning %v", m)
				}
				out = append(out, m["code"].(string))
			}
			return out
		}
		v1 = codes(r.obj()["warnings"])
		r = e.send(t, "GET", "/api"+path, "", "Authorization", "Bearer "+s.session(t))
		d, _ := r.data().(map[string]any)
		if r.Status != 200 || d == nil {
			t.Fatalf("session get = %d %s", r.Status, r.Raw)
		}
		return v1, codes(d["warnings"])
	}
	if v1, ses := warnings(); len(v1) != 0 || len(ses) != 0 {
		t.Fatalf("warnings before any publish: v1 %v, session %v", v1, ses)
	}
	publish("theme-1", 1202) // another theme: the template test's theme is no longer live
	if v1, ses := warnings(); len(v1) != 1 || v1[0] != experiment.WarnThemeUnpublished || len(ses) != 1 || ses[0] != v1[0] {
		t.Fatalf("warnings after publishing another theme: v1 %v, session %v", v1, ses)
	}
	publish("theme-2", 1201) // its own theme again: lifted
	if v1, ses := warnings(); len(v1) != 0 || len(ses) != 0 {
		t.Fatalf("warnings after republishing its theme: v1 %v, session %v", v1, ses)
	}
}
