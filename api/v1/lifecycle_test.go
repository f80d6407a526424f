package v1_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/store"
)

func (s *shopEnv) act(t *testing.T, testID, action string) resp {
	t.Helper()
	return s.do(t, "POST", "/v1/experiments/"+testID+"/"+action, "")
}

func wantStatus(t *testing.T, r resp, status string) {
	t.Helper()
	if r.Status != http.StatusOK || r.Body["status"] != status {
		t.Fatalf("want 200 %s, got %d %s", status, r.Status, r.Raw)
	}
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	t.Run("FullRunAndSameTarget", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{}) // its own: parallel cases starting tests of the tee would contest it
		x := id(s.create(t, priceTest("Run")))
		started := s.act(t, x, "start")
		wantStatus(t, started, "active")
		if started.Body["started_at"] == nil {
			t.Fatalf("started_at missing: %s", started.Raw)
		}
		if _, ok := e.fake.CartTransform(s.shop.Domain, platform.PriceFunction); !ok {
			t.Fatal("the launch registered no cart transform on the platform")
		}
		// Same target: 200 with the test unchanged.
		again := s.act(t, x, "start")
		if diff := cmp.Diff(started.Body, again.Body); diff != "" || again.Status != 200 {
			t.Fatalf("start of an active test changed it (-first +again):\n%s", diff)
		}
		paused := s.act(t, x, "pause")
		wantStatus(t, paused, "paused")
		wantStatus(t, s.act(t, x, "pause"), "paused")
		wantStatus(t, s.act(t, x, "resume"), "active")
		ended := s.act(t, x, "end")
		wantStatus(t, ended, "ended")
		if ended.Body["ended_at"] == nil {
			t.Fatalf("ended_at missing: %s", ended.Raw)
		}
		endAgain := s.act(t, x, "end")
		if diff := cmp.Diff(ended.Body, endAgain.Body); diff != "" {
			t.Fatalf("end of an ended test changed it (-first +again):\n%s", diff)
		}
		wantStatus(t, s.act(t, x, "archive"), "archived")
		wantStatus(t, s.act(t, x, "archive"), "archived")
	})
	t.Run("InvalidStatusTransition", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{}) // its own: parallel cases starting tests of the tee would contest it
		x := id(s.create(t, priceTest("Transitions")))
		for _, tc := range []struct {
			action, current string
			allowed         []any
		}{
			{"pause", "draft", []any{"start", "preview", "archive"}},
			{"resume", "draft", []any{"start", "preview", "archive"}},
			{"end", "draft", []any{"start", "preview", "archive"}},
		} {
			e := wantError(t, s.act(t, x, tc.action), 409, "conflict_error", "invalid_status_transition", "")
			want := map[string]any{"current_status": tc.current, "allowed_actions": tc.allowed}
			if diff := cmp.Diff(want, e["details"]); diff != "" {
				t.Fatalf("%s details mismatch (-want +got):\n%s", tc.action, diff)
			}
		}
		wantStatus(t, s.act(t, x, "start"), "active")
		e := wantError(t, s.act(t, x, "archive"), 409, "conflict_error", "invalid_status_transition", "")
		if diff := cmp.Diff(map[string]any{"current_status": "active", "allowed_actions": []any{"pause", "end"}}, e["details"]); diff != "" {
			t.Fatalf("details mismatch (-want +got):\n%s", diff)
		}
		e = wantError(t, s.do(t, "POST", "/v1/experiments/"+x+"/test_groups/1/preview", ""), 409, "conflict_error", "invalid_status_transition", "")
		if e["details"].(map[string]any)["current_status"] != "active" {
			t.Fatalf("details = %v", e["details"])
		}
	})
	t.Run("Preview", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{}) // its own: parallel cases starting tests of the tee would contest it
		x := id(s.create(t, priceTest("Preview")))
		r := s.do(t, "POST", "/v1/experiments/"+x+"/test_groups/1/preview", "")
		if r.Status != 200 || r.Body["object"] != "preview_link" || r.Body["experiment_id"] != x ||
			r.Body["test_group_index"] != float64(1) || r.Body["expires_at"] == nil ||
			!strings.HasPrefix(r.Body["url"].(string), "https://"+s.shop.Domain+"/?lift_preview=") {
			t.Fatalf("preview = %d %s", r.Status, r.Raw)
		}
		token := strings.TrimPrefix(r.Body["url"].(string), "https://"+s.shop.Domain+"/?lift_preview=")
		if gotID, idx, ok := experiment.VerifyPreview([]byte("test-secret"), token, e.clock.Now()); !ok || fmt.Sprint(gotID) != x || idx != 1 {
			t.Fatalf("preview token does not verify: %s", token)
		}
		wantStatus(t, s.do(t, "GET", "/v1/experiments/"+x, ""), "preview")
		for _, index := range []string{"7", "01", "+1", "-1", "1.0"} {
			wantError(t, s.do(t, "POST", "/v1/experiments/"+x+"/test_groups/"+index+"/preview", ""), 422, "validation_error", "invalid_request", "index")
		}
		ship := fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q]}},"test_groups":`+twoGroups+`}`,
			domestic, fmt.Sprintf(`{"rates":[{"zone_id":%q,"rate_id":%q,"name":"Standard","price":{"amount":"3.95","currency":"USD"}}]}`, domestic, standard))
		y := id(s.create(t, ship))
		wantError(t, s.do(t, "POST", "/v1/experiments/"+y+"/test_groups/1/preview", ""), 422, "validation_error", "preview_unsupported", "")
		wantStatus(t, s.act(t, x, "start"), "active")
	})
	t.Run("PlatformFailureEndsInFailed", func(t *testing.T) {
		t.Parallel()
		shop := e.newShop(store.ShopUpdate{})
		x := id(shop.create(t, priceTest("Doomed launch")))
		e.fake.Fail(shop.shop.Domain, platform.OpCartTransform, http.StatusInternalServerError)
		r := shop.act(t, x, "start")
		wantStatus(t, r, "failed")
		if !strings.Contains(r.Body["failure_reason"].(string), "cart transform") || r.Body["started_at"] != nil {
			t.Fatalf("failed launch = %s", r.Raw)
		}
		e.fake.Heal(shop.shop.Domain)
		wantStatus(t, shop.act(t, x, "start"), "active")
	})
	t.Run("HungPlatformEndsInFailed", func(t *testing.T) {
		t.Parallel()
		shop := e.newShop(store.ShopUpdate{})
		x := id(shop.create(t, priceTest("Hung platform")))
		e.fake.Fail(shop.shop.Domain, platform.OpDuplicateVariants, platform.StatusHang)
		r := shop.act(t, x, "start")
		wantStatus(t, r, "failed")
		if !strings.Contains(r.Body["failure_reason"].(string), "unreachable") {
			t.Fatalf("failure_reason = %v", r.Body["failure_reason"])
		}
		e.fake.Heal(shop.shop.Domain)
	})
	t.Run("StartRevalidates", func(t *testing.T) {
		t.Parallel()
		shop := e.newShop(store.ShopUpdate{})
		x := id(shop.create(t, priceTest("Catalog changed")))
		// The product leaves the catalog before launch.
		f, _ := store.ParseCatalog([]byte(`{"currency":"USD"}`))
		if err := e.db.ImportCatalog(context.Background(), shop.shop.ID, f); err != nil {
			t.Fatal(err)
		}
		wantError(t, shop.act(t, x, "start"), 422, "validation_error", "product_not_found", "shared.price.product_ids[0]")
	})
}

func TestEntitlements(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	yes, no := true, false
	shipBody := fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q]}},"test_groups":`+twoGroups+`}`,
		domestic, fmt.Sprintf(`{"rates":[{"zone_id":%q,"name":"Cheap","price":{"amount":"1.00","currency":"USD"}}]}`, domestic))

	t.Run("SubscriptionInactive", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{})
		running := id(s.create(t, priceTest("running")))
		wantStatus(t, s.act(t, running, "start"), "active")
		paused := id(s.create(t, priceTestOf("paused", sweater, sweaterS))) // running has the tee
		wantStatus(t, s.act(t, paused, "start"), "active")
		wantStatus(t, s.act(t, paused, "pause"), "paused")
		draft := id(s.create(t, priceTest("draft")))
		s.update(store.ShopUpdate{SubscriptionActive: &no})
		wantError(t, s.do(t, "POST", "/v1/experiments", priceTest("x")), 403, "permission_error", "subscription_inactive", "")
		wantError(t, s.act(t, draft, "start"), 403, "permission_error", "subscription_inactive", "")
		wantError(t, s.act(t, paused, "resume"), 403, "permission_error", "subscription_inactive", "")
		// pause, end and archive never check entitlements.
		wantStatus(t, s.act(t, running, "pause"), "paused")
		wantStatus(t, s.act(t, running, "end"), "ended")
		wantStatus(t, s.act(t, running, "archive"), "archived")
		wantStatus(t, s.act(t, draft, "archive"), "archived")
	})
	t.Run("BillingCapReached", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{})
		paused := id(s.create(t, priceTest("paused")))
		wantStatus(t, s.act(t, paused, "start"), "active")
		wantStatus(t, s.act(t, paused, "pause"), "paused")
		draft := id(s.create(t, priceTest("draft")))
		s.update(store.ShopUpdate{BillingCapReached: &yes})
		wantError(t, s.do(t, "POST", "/v1/experiments", priceTest("x")), 403, "permission_error", "billing_cap_reached", "")
		wantError(t, s.act(t, draft, "start"), 403, "permission_error", "billing_cap_reached", "")
		wantError(t, s.act(t, paused, "resume"), 403, "permission_error", "billing_cap_reached", "")
		wantStatus(t, s.act(t, paused, "end"), "ended")
		// A PATCH is not a billing step.
		if r := s.do(t, "PATCH", "/v1/experiments/"+draft, `{"name":"renamed"}`); r.Status != 200 {
			t.Fatalf("patch under the cap = %d %s", r.Status, r.Raw)
		}
	})
	t.Run("AllowanceExhausted", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{AnnualBilling: &yes})
		paused := id(s.create(t, priceTest("paused")))
		wantStatus(t, s.act(t, paused, "start"), "active")
		wantStatus(t, s.act(t, paused, "pause"), "paused")
		s.update(store.ShopUpdate{AllowanceExhausted: &yes})
		draft := id(s.create(t, priceTest("created while exhausted")))
		for _, r := range []resp{s.act(t, draft, "start"), s.act(t, paused, "resume")} {
			err := wantError(t, r, 403, "permission_error", "billing_cap_reached", "")
			if diff := cmp.Diff(map[string]any{"condition": "allowance_exhausted"}, err["details"]); diff != "" {
				t.Fatalf("details mismatch (-want +got):\n%s", diff)
			}
		}
		wantStatus(t, s.act(t, paused, "end"), "ended")
	})
	t.Run("FeatureNotInPlan", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{})
		x := id(s.create(t, priceTest("made while allowed")))
		offer := fmt.Sprintf(`{"type":"offer","name":"o","test_groups":`+twoGroups+`}`, `{"offers":[{"key":"ship","title":"Free shipping","discount":{"type":"free_shipping"}}]}`)
		markets := fmt.Sprintf(`{"shared":{"price":{"product_ids":[%q],"markets":[{"id":%q}]}}}`, tee, euMarket)
		only := []string{"offer"}
		s.update(store.ShopUpdate{Features: &only})
		wantError(t, s.do(t, "POST", "/v1/experiments", priceTest("x")), 403, "permission_error", "feature_not_in_plan", "price")
		wantError(t, s.do(t, "PATCH", "/v1/experiments/"+x, `{"name":"y"}`), 403, "permission_error", "feature_not_in_plan", "price")
		wantError(t, s.do(t, "POST", "/v1/experiments/"+x+"/test_groups/1/preview", ""), 403, "permission_error", "feature_not_in_plan", "price")
		wantError(t, s.act(t, x, "start"), 403, "permission_error", "feature_not_in_plan", "price")
		wantStatus(t, s.act(t, x, "archive"), "archived")
		s.create(t, offer)
		price := []string{"price"}
		s.update(store.ShopUpdate{Features: &price})
		wantError(t, s.do(t, "POST", "/v1/experiments", offer), 403, "permission_error", "feature_not_in_plan", "offer")
		y := id(s.create(t, priceTest("single market")))
		wantError(t, s.do(t, "PATCH", "/v1/experiments/"+y, markets), 403, "permission_error", "feature_not_in_plan", "multi_market")
		// A combined test cannot bundle checkout on any plan: the answer says
		// so, not "upgrade" for checkout_blocks (v1 audit 2 V9); checkout
		// content names the checkout editor, not DOM changes.
		combined := func(content string) string {
			return fmt.Sprintf(`{"type":"combined","name":"c","shared":{"price":{"product_ids":[%q]},"checkout":{}},"test_groups":`+twoGroups+`}`,
				tee, fmt.Sprintf(`{"price":{"prices":[{"product_variant_id":%q,"price":%s}]}%s}`, teeS, usd19, content))
		}
		wantError(t, s.do(t, "POST", "/v1/experiments", combined("")), 422, "validation_error", "invalid_request", "shared.checkout")
		e := wantError(t, s.do(t, "POST", "/v1/experiments", combined(`,"checkout":{"blocks":[{"type":"banner"}]}`)),
			422, "validation_error", "invalid_request", "test_groups[1].content")
		if msg, _ := e["message"].(string); !strings.Contains(msg, "checkout editor") {
			t.Fatalf("message %q, want it to name the checkout editor", msg)
		}
	})
	t.Run("CarrierServiceRequired", func(t *testing.T) {
		t.Parallel()
		s := e.newShop(store.ShopUpdate{CarrierService: &no})
		wantError(t, s.do(t, "POST", "/v1/experiments", shipBody), 403, "permission_error", "carrier_service_required", "")
		// Annual billing satisfies it, as does the plan feature.
		s.update(store.ShopUpdate{AnnualBilling: &yes})
		x := id(s.create(t, shipBody))
		s.update(store.ShopUpdate{AnnualBilling: &no})
		wantError(t, s.act(t, x, "start"), 403, "permission_error", "carrier_service_required", "")
		features := []string{"carrier_service"}
		s.update(store.ShopUpdate{Features: &features})
		wantStatus(t, s.act(t, x, "start"), "active")
	})
}

// TestScheduledTestStartsAndEndsOnItsOwn is must-show 3: the scheduler loop
// and the worker start and end a test at its schedule, driven by an injected
// clock.
func TestScheduledTestStartsAndEndsOnItsOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	startAt, endAt := epoch.Add(time.Hour), epoch.Add(26*time.Hour)
	body := strings.Replace(priceTest("Scheduled"), `{"type":"price",`,
		fmt.Sprintf(`{"schedule":{"start_at":%q,"end_at":%q},"type":"price",`, startAt.Format(time.RFC3339), endAt.Format(time.RFC3339)), 1)
	x := id(s.create(t, body))
	if l := s.do(t, "GET", "/v1/experiments?scheduled=true", ""); len(l.Body["data"].([]any)) != 1 {
		t.Fatalf("scheduled list = %s", l.Raw)
	}

	sched := jobs.NewScheduler(e.db, e.jobs, jobs.SchedulerConfig{Now: e.clock.Now}, jobs.ScheduleSource(e.db.FindDueActions, 100))
	w := jobs.NewWorker(e.redis, jobs.WorkerConfig{Concurrency: 2})
	jobs.HandleScheduled(w, e.service)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown()
	ctx := context.Background()

	tick := func(want int) {
		t.Helper()
		res, err := sched.Tick(ctx)
		if err != nil || res.Enqueued != want {
			t.Fatalf("tick at %s = %+v, %v; want %d enqueued", e.clock.Now(), res, err, want)
		}
	}
	waitFor := func(status string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			r := s.do(t, "GET", "/v1/experiments/"+x, "")
			if r.Body["status"] == status {
				return r.Body
			}
			if time.Now().After(deadline) {
				t.Fatalf("test never became %s: %s", status, r.Raw)
			}
			<-time.After(20 * time.Millisecond) // poll interval
		}
	}

	tick(0) // before start_at nothing is due
	e.clock.Set(startAt.Add(time.Second))
	tick(1)
	got := waitFor("active")
	if got["started_at"] != startAt.Add(time.Second).Format("2006-01-02T15:04:05Z") {
		t.Fatalf("started_at = %v", got["started_at"])
	}
	tick(0) // started: no longer due, and never twice
	e.clock.Set(endAt.Add(time.Minute))
	tick(1)
	got = waitFor("ended")
	if got["ended_at"] != endAt.Add(time.Minute).Format("2006-01-02T15:04:05Z") {
		t.Fatalf("ended_at = %v", got["ended_at"])
	}
	tick(0)
}

func TestScheduledStartRefusedIsRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	startAt := epoch.Add(time.Hour)
	body := strings.Replace(priceTest("Scheduled"), `{"type":"price",`,
		fmt.Sprintf(`{"schedule":{"start_at":%q},"type":"price",`, startAt.Format(time.RFC3339)), 1)
	x := id(s.create(t, body))
	no := false
	s.update(store.ShopUpdate{SubscriptionActive: &no})
	e.clock.Set(startAt)
	var testID int64
	fmt.Sscan(x, &testID)
	if err := e.service.RunScheduled(context.Background(), s.shop.ID, testID, experiment.ActionStart); err != nil {
		t.Fatal(err)
	}
	r := s.do(t, "GET", "/v1/experiments/"+x, "")
	if r.Body["status"] != "failed" || !strings.Contains(r.Body["failure_reason"].(string), "subscription") {
		t.Fatalf("refused scheduled start = %s", r.Raw)
	}
	// A moved schedule is not started early.
	y := s.create2(t, body)
	fmt.Sscan(y, &testID)
	e.clock.Set(startAt.Add(-time.Minute))
	if err := e.service.RunScheduled(context.Background(), s.shop.ID, testID, experiment.ActionStart); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.do(t, "GET", "/v1/experiments/"+y, ""), "draft")
}

// create2 creates with a shop whose subscription may be off, by turning it on
// for the create.
func (s *shopEnv) create2(t *testing.T, body string) string {
	t.Helper()
	yes, no := true, false
	s.update(store.ShopUpdate{SubscriptionActive: &yes})
	defer s.update(store.ShopUpdate{SubscriptionActive: &no})
	return id(s.create(t, body))
}

// TestEveryCreatableTypeLaunches creates one valid test of each type this
// API creates and starts it through the platform.
func TestEveryCreatableTypeLaunches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := func(content string) string { return fmt.Sprintf(twoGroups, content) }
	for _, tc := range []struct{ name, body string }{
		{"price", priceTest("price")},
		{"shipping", fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q,%q]}},"test_groups":%s}`, domestic, intl,
			g(fmt.Sprintf(`{"rates":[{"zone_id":%q,"rate_id":%q,"name":"Standard","price":{"amount":"4.95","currency":"USD"}},{"zone_id":%q,"name":"Intl saver","price":{"amount":"12.00","currency":"USD"}}]}`, domestic, standard, intl)))},
		{"theme", fmt.Sprintf(`{"type":"theme","name":"t","shared":{"theme":{"path_rules":[{"path":"/products","match_type":"prefix"}]}},"test_groups":%s}`, g(fmt.Sprintf(`{"theme_id":%q}`, holiday)))},
		{"template", fmt.Sprintf(`{"type":"template","name":"t","shared":{"template":{"theme_id":%q}},"test_groups":%s}`, dawn, g(`{"template":"product.alternate"}`))},
		{"url_redirect", fmt.Sprintf(`{"type":"url_redirect","name":"r","shared":{"url_redirect":{"source_path":"/collections/all","match_type":"prefix"}},"test_groups":%s}`, g(`{"destination":"/collections/best-sellers"}`))},
		{"offer", fmt.Sprintf(`{"type":"offer","name":"o","test_groups":%s}`, g(fmt.Sprintf(`{"offers":[{"key":"tops10","title":"10%% off tops","discount":{"type":"percentage","value":"10"},"conditions":{"min_quantity":2,"collection_ids":[%q]},"combines_with":["shipping"]}]}`, tops)))},
		{"visual_editor", fmt.Sprintf(`{"type":"visual_editor","name":"v","test_groups":%s}`, g(`{"custom_css":".hero{display:none}","custom_js":"document.title='B'"}`))},
		{"combined", fmt.Sprintf(`{"type":"combined","name":"c","shared":{"price":{"product_ids":[%q]},"url_redirect":{"source_path":"/"}},"test_groups":%s}`, tee,
			g(fmt.Sprintf(`{"price":{"prices":[{"product_variant_id":%q,"price":%s}]},"url_redirect":{"destination":"/pages/sale"}}`, teeS, usd19)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A shop each: some of these change the same part (the combined
			// test prices the tee, the template test needs the theme).
			s := e.newShop(store.ShopUpdate{})
			created := s.create(t, tc.body)
			x := id(created)
			if created["type"] != tc.name {
				t.Fatalf("type = %v", created["type"])
			}
			if tc.name == "theme" || tc.name == "template" {
				var n int64
				fmt.Sscan(x, &n)
				if err := e.service.RunChecks(context.Background(), s.shop.ID, n); err != nil {
					t.Fatal(err)
				}
			}
			wantStatus(t, s.act(t, x, "start"), "active")
		})
	}
}

// TestContestedStart: a start while another live test prices the same
// product is 422 launch_blocked (param null) naming that test, and changes
// nothing; once the other ends, it starts.
func TestContestedStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	first := e.started(t, s, "First")
	second := id(s.create(t, priceTest("Second")))
	r := s.act(t, second, "start")
	err := wantError(t, r, 422, "validation_error", "launch_blocked", "")
	msg, _ := err["message"].(string)
	if want := fmt.Sprintf("Test %s (\"First\", active) already changes the price of product %s", first, tee); !strings.Contains(msg, want) {
		t.Fatalf("message %q, want it to name %q", msg, want)
	}
	if f, _ := err["findings"].([]any); len(f) != 1 || f[0].(map[string]any)["code"] != "launch_blocked" {
		t.Fatalf("findings = %v", err["findings"])
	}
	wantStatus(t, s.do(t, "GET", "/v1/experiments/"+second, ""), "draft")
	wantStatus(t, s.act(t, first, "end"), "ended")
	wantStatus(t, s.act(t, second, "start"), "active")
}
