package session_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/platform"
)

// TestReadTests: list newest first with uppercase statuses and types and
// string ids; get the full test with products grouped under products.
func TestReadTests(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	first := s.created(t, "/api/price-experiments/v1/create", priceV1("First"))
	second := s.created(t, "/api/price-experiments/v1/create", priceV1("Second"))
	l := s.list(t)
	if len(l) != 2 || l[0]["_id"] != second || l[1]["_id"] != first {
		t.Fatalf("list order: %v", l)
	}
	for _, x := range l {
		if x["status"] != "DRAFT" || x["experimentType"] != "PRICE_TEST" || x["createdAt"] == "" || x["updatedAt"] == "" {
			t.Fatalf("summary: %v", x)
		}
		if len(x) != 6 {
			t.Fatalf("a summary has the six fields of 2.1: %v", x)
		}
	}
	r := s.do(t, "GET", "/api/experiments/"+first, "")
	if r.Status != 200 || r.obj()["status"] != "success" {
		t.Fatalf("get = %d %s", r.Status, r.Raw)
	}
	d := r.data().(map[string]any)
	want := map[string]any{
		"products": []any{map[string]any{"productId": tee, "variants": []any{
			map[string]any{"variantId": teeS, "price": "19.00", "compareAtPrice": "25.00"}}}},
		"testGroups": []any{map[string]any{"name": "Control", "weight": 50.0}, map[string]any{"name": "Variant", "weight": 50.0}},
		"settings": map[string]any{"startDate": nil, "endDate": nil, "targetingRules": map[string]any{},
			"analysis":   map[string]any{"sequential": false, "cuped": false, "winsorize": 0.99, "correction": "none", "prior": nil},
			"guardrails": []any{}},
	}
	for k, w := range want {
		if diff := cmp.Diff(w, d[k]); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", k, diff)
		}
	}
	if d["_id"] != first || d["name"] != "First" || d["status"] != "DRAFT" {
		t.Fatalf("full test: %s", r.Raw)
	}
	for _, p := range []string{"/api/experiments/999999", "/api/experiments/abc"} {
		wantError(t, s.do(t, "GET", p, ""), http.StatusNotFound)
	}
}

// TestUpdateAndLifecycle: PUT merges name and settings and moves the status
// through the state machine; pause and resume answer "success"; refused
// transitions are 400 and change nothing.
func TestUpdateAndLifecycle(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	id := s.created(t, "/api/price-experiments/v1/create", priceV1("Lifecycle"))
	path := "/api/experiments/" + id
	get := func() map[string]any { return s.do(t, "GET", path, "").data().(map[string]any) }

	wantSuccess(t, s.do(t, "PUT", path, `{"name":"Renamed","settings":{"endDate":"2026-07-01T00:00:00Z","targetingRules":{"devices":["mobile"]}}}`))
	wantSuccess(t, s.do(t, "PUT", path, `{"settings":{"targetingRules":{"countries":["US"]}}}`))
	d := get()
	set := d["settings"].(map[string]any)
	if d["name"] != "Renamed" || set["endDate"] != "2026-07-01T00:00:00Z" ||
		cmp.Diff(map[string]any{"devices": []any{"mobile"}, "countries": []any{"US"}}, set["targetingRules"]) != "" {
		t.Fatalf("settings not merged: %v", d)
	}

	refused := []struct{ name, method, path, body string }{
		{"pause a draft", "POST", path + "/pause", ""},
		{"resume a draft", "POST", path + "/resume", ""},
		{"stop a draft", "PUT", path, `{"name":"Not saved","status":"STOPPED"}`},
		{"unknown status", "PUT", path, `{"name":"Not saved","status":"DRAFT"}`},
		{"status not a string", "PUT", path, `{"status":1}`},
		{"unknown setting", "PUT", path, `{"name":"Not saved","settings":{"colour":"red"}}`},
		{"bad date", "PUT", path, `{"settings":{"endDate":"tomorrow"}}`},
		{"unknown field", "PUT", path, `{"nmae":"x"}`},
		{"malformed", "PUT", path, `{"name":`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) { wantError(t, s.do(t, c.method, c.path, c.body), http.StatusBadRequest) })
	}
	if d := get(); d["name"] != "Renamed" || d["status"] != "DRAFT" {
		t.Fatalf("a refused request changed the test: %v", d)
	}

	if msg := wantError(t, s.do(t, "POST", path+"/pause", ""), http.StatusBadRequest); !strings.Contains(msg, "status is DRAFT") {
		t.Errorf("message %q speaks another surface's status words", msg)
	}
	steps := []struct{ method, path, body, status string }{
		{"PUT", path, `{"status":"ACTIVE"}`, "ACTIVE"},
		{"POST", path + "/pause", "", "PAUSED"},
		{"POST", path + "/resume", "", "ACTIVE"},
		{"PUT", path, `{"status":"PAUSED"}`, "PAUSED"},
		{"PUT", path, `{"status":"ACTIVE"}`, "ACTIVE"},
		{"PUT", path, `{"name":"Stopped","status":"STOPPED"}`, "STOPPED"},
	}
	for _, st := range steps {
		wantSuccess(t, s.do(t, st.method, st.path, st.body))
		if got := get()["status"]; got != st.status {
			t.Fatalf("%s %s %s: status %v, want %s", st.method, st.path, st.body, got, st.status)
		}
		// Part 3: pause needs a running test, resume a paused one.
		switch st.status {
		case "ACTIVE":
			wantError(t, s.do(t, "POST", path+"/resume", ""), http.StatusBadRequest)
		case "PAUSED":
			wantError(t, s.do(t, "POST", path+"/pause", ""), http.StatusBadRequest)
		}
	}
	wantError(t, s.do(t, "POST", path+"/resume", ""), http.StatusBadRequest)
	if msg := wantError(t, s.do(t, "POST", path+"/pause", ""), http.StatusBadRequest); !strings.Contains(msg, "status is STOPPED") {
		t.Errorf("message %q speaks another surface's status words", msg)
	}
	// After launch the configuration is locked but for name and endDate.
	if msg := wantError(t, s.do(t, "PUT", path, `{"settings":{"startDate":"2026-08-01T00:00:00Z"}}`), http.StatusBadRequest); !strings.HasPrefix(msg, "settings.startDate cannot change after launch") || strings.Contains(msg, "schedule.") {
		t.Errorf("message %q names another surface's fields", msg)
	}
	wantSuccess(t, s.do(t, "PUT", path, `{"name":"Still open","settings":{"endDate":null}}`))
	if d := get(); d["name"] != "Still open" || d["settings"].(map[string]any)["endDate"] != nil || d["status"] != "STOPPED" {
		t.Fatalf("open fields after launch: %v", d)
	}
	for _, p := range []string{"/api/experiments/999999/pause", "/api/experiments/x/resume", "/api/experiments/0" + id + "/pause"} {
		wantError(t, s.do(t, "POST", p, ""), http.StatusNotFound)
	}
	wantError(t, s.do(t, "PUT", "/api/experiments/999999", `{"name":"x"}`), http.StatusNotFound)
}

// TestAdminActions: duplicate makes a DRAFT copy, reset-analytics keeps the
// configuration, remove-products takes products out of a running test.
func TestAdminActions(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	body := fmt.Sprintf(`{"name":"Two products","products":[{"productId":%q,"variants":[{"variantId":%q,"price":"19.00"}]},
		{"productId":%q,"variants":[{"variantId":%q,"price":"90.00"}]}],
		"testGroups":[{"name":"Control","weight":50},{"name":"Variant","weight":50}]}`, tee, teeS, sweater, sweaterS)
	id := s.created(t, "/api/price-experiments/v1/create", body)
	wantSuccess(t, s.do(t, "PUT", "/api/experiments/"+id, `{"status":"ACTIVE"}`))

	wantSuccess(t, s.do(t, "POST", "/api/experiments/"+id+"/duplicate", ""))
	l := s.list(t)
	if len(l) != 2 || l[0]["_id"] == id || l[0]["status"] != "DRAFT" || l[1]["status"] != "ACTIVE" {
		t.Fatalf("duplicate: %v", l)
	}
	orig := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
	dup := s.do(t, "GET", "/api/experiments/"+l[0]["_id"].(string), "").data().(map[string]any)
	for _, k := range []string{"name", "products", "testGroups", "settings", "experimentType"} {
		if diff := cmp.Diff(orig[k], dup[k]); diff != "" {
			t.Errorf("copy's %s differs (-orig +copy):\n%s", k, diff)
		}
	}

	wantSuccess(t, s.do(t, "POST", "/api/experiments/reset-analytics/"+id, ""))
	if got := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any); cmp.Diff(orig, got) != "" {
		t.Fatalf("reset analytics changed the configuration: %v", got)
	}
	wantError(t, s.do(t, "POST", "/api/experiments/reset-analytics/999999", ""), http.StatusNotFound)

	rm := "/api/experiments/remove-products/" + id
	for _, bad := range []string{`{"productIds":[]}`, `{"productIds":"8101"}`, `{"productIds":["abc"]}`, `{"productIds":[%q,%q]}`, `not json`} {
		b := bad
		if b == `{"productIds":[%q,%q]}` {
			b = fmt.Sprintf(bad, tee, sweater) // every product would go
		}
		wantError(t, s.do(t, "PUT", rm, b), http.StatusBadRequest)
	}
	wantSuccess(t, s.do(t, "PUT", rm, fmt.Sprintf(`{"productIds":[%q]}`, sweater)))
	got := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
	if ps := got["products"].([]any); len(ps) != 1 || ps[0].(map[string]any)["productId"] != tee || got["status"] != "ACTIVE" {
		t.Fatalf("remove-products: %v", got)
	}
	wantError(t, s.do(t, "PUT", "/api/experiments/remove-products/999999", `{"productIds":["8101"]}`), http.StatusNotFound)
}

// TestShopIsolation: a shop's session token reaches none of another shop's
// tests, and lists only its own.
func TestShopIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.newShop(), e.newShop()
	id := a.created(t, "/api/price-experiments/v1/create", priceV1("Mine"))
	p := "/api/experiments/" + id
	for _, c := range []struct{ method, path, body string }{
		{"GET", p, ""}, {"PUT", p, `{"name":"Theirs"}`}, {"POST", p + "/pause", ""}, {"POST", p + "/resume", ""},
		{"POST", p + "/duplicate", ""}, {"POST", "/api/experiments/reset-analytics/" + id, ""},
		{"PUT", "/api/experiments/remove-products/" + id, `{"productIds":["8101"]}`},
	} {
		wantError(t, b.do(t, c.method, c.path, c.body), http.StatusNotFound)
	}
	if l := b.list(t); len(l) != 0 {
		t.Fatalf("shop b lists shop a's tests: %v", l)
	}
	if l := a.list(t); len(l) != 1 || l[0]["name"] != "Mine" {
		t.Fatalf("shop a's test changed: %v", l)
	}
}

// TestBothSurfaces: a test created on either surface shows on the other
// with the same groups and status.
func TestBothSurfaces(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	id := s.created(t, "/api/price-experiments/v1/create", priceV1("From session"))
	r := s.v1(t, "GET", "/v1/experiments", "")
	items, _ := r.obj()["data"].([]any)
	if r.Status != 200 || len(items) != 1 {
		t.Fatalf("v1 list = %d %s", r.Status, r.Raw)
	}
	x := items[0].(map[string]any)
	gs := x["test_groups"].([]any)
	if x["id"] != id || x["status"] != "draft" || x["type"] != "price" || len(gs) != 2 ||
		gs[0].(map[string]any)["split"] != 50.0 || gs[1].(map[string]any)["name"] != "Variant" {
		t.Fatalf("v1 shows: %v", x)
	}

	body := fmt.Sprintf(`{"type":"price","name":"From v1","shared":{"price":{"product_ids":["gid://shopify/Product/%s"]}},
		"test_groups":[{"index":0,"name":"Control","split":30},{"index":1,"name":"Cheaper","split":70,
		"content":{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/%s","price":{"amount":"21.00","currency":"USD"}}]}}]}`, tee, teeM)
	c := s.v1(t, "POST", "/v1/experiments", body)
	if c.Status != 201 {
		t.Fatalf("v1 create = %d %s", c.Status, c.Raw)
	}
	v1ID := c.obj()["id"].(string)
	if r := s.v1(t, "POST", "/v1/experiments/"+v1ID+"/start", ""); r.Status != 200 {
		t.Fatalf("v1 start = %d %s", r.Status, r.Raw)
	}
	l := s.list(t)
	if len(l) != 2 || l[0]["_id"] != v1ID || l[0]["status"] != "ACTIVE" || l[0]["name"] != "From v1" {
		t.Fatalf("session list: %v", l)
	}
	d := s.do(t, "GET", "/api/experiments/"+v1ID, "").data().(map[string]any)
	wantGroups := []any{map[string]any{"name": "Control", "weight": 30.0}, map[string]any{"name": "Cheaper", "weight": 70.0}}
	if diff := cmp.Diff(wantGroups, d["testGroups"]); diff != "" {
		t.Fatalf("groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{map[string]any{"productId": tee, "variants": []any{map[string]any{"variantId": teeM, "price": "21.00"}}}}, d["products"]); diff != "" {
		t.Fatalf("products (-want +got):\n%s", diff)
	}
	// A stop on the session surface is v1's ended.
	wantSuccess(t, s.do(t, "PUT", "/api/experiments/"+v1ID, `{"status":"STOPPED"}`))
	if r := s.v1(t, "GET", "/v1/experiments/"+v1ID, ""); r.obj()["status"] != "ended" {
		t.Fatalf("v1 after STOPPED: %s", r.Raw)
	}
}

// TestAnalysisSettings: the admin panel sets v1's analysis options and
// guardrails through settings, on a draft and on a running test; the domain
// refuses a bad value, and nothing changes.
func TestAnalysisSettings(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	id := s.created(t, "/api/price-experiments/v1/create", priceV1("Analysed"))
	path := "/api/experiments/" + id
	settings := func() map[string]any {
		return s.do(t, "GET", path, "").data().(map[string]any)["settings"].(map[string]any)
	}
	wantSuccess(t, s.do(t, "PUT", path, `{"settings":{"analysis":{"sequential":true,"correction":"holm"},
		"guardrails":[{"metric":"conversion_rate","max_harm":0.02}]}}`))
	want := map[string]any{"sequential": true, "cuped": false, "winsorize": 0.99, "correction": "holm", "prior": nil}
	if diff := cmp.Diff(want, settings()["analysis"]); diff != "" {
		t.Fatalf("analysis mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{map[string]any{"metric": "conversion_rate", "max_harm": 0.02}}, settings()["guardrails"]); diff != "" {
		t.Fatalf("guardrails mismatch (-want +got):\n%s", diff)
	}
	msg := wantError(t, s.do(t, "PUT", path, `{"settings":{"analysis":{"correction":"bonferroni"}}}`), http.StatusBadRequest)
	if msg != `analysis.correction is one of holm, benjamini_hochberg, none; got "bonferroni".` {
		t.Fatalf("message %q", msg)
	}
	wantSuccess(t, s.do(t, "PUT", path, `{"status":"ACTIVE"}`))
	wantSuccess(t, s.do(t, "PUT", path, `{"settings":{"analysis":{"winsorize":0},"guardrails":null}}`))
	want["winsorize"] = 0.0
	if got := settings(); cmp.Diff(want, got["analysis"]) != "" || len(got["guardrails"].([]any)) != 0 {
		t.Fatalf("settings after launch: %v", got)
	}
}

// TestDateOnlySettings: part 2.2's dates are "ISO 8601", and a date alone is
// one: the whole day in the shop's timezone (UTC here), so an endDate runs
// through its day.
func TestDateOnlySettings(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	path := "/api/experiments/" + s.created(t, "/api/price-experiments/v1/create", priceV1("Dates"))
	wantSuccess(t, s.do(t, "PUT", path, `{"settings":{"startDate":"2027-01-10","endDate":"2027-01-31"}}`))
	set := s.do(t, "GET", path, "").data().(map[string]any)["settings"].(map[string]any)
	if set["startDate"] != "2027-01-10T00:00:00Z" || set["endDate"] != "2027-02-01T00:00:00Z" {
		t.Fatalf("dates = %v .. %v, want the days 2027-01-10 through 2027-01-31", set["startDate"], set["endDate"])
	}
	wantError(t, s.do(t, "PUT", path, `{"settings":{"endDate":"2027-02-30"}}`), http.StatusBadRequest)
}

// TestFailedLaunch: a start the platform fails answers the error envelope
// (500, with the reason) and leaves the test FAILED; a start the platform
// refuses leaves it DRAFT; and however many attempts it takes, the test has
// one duplicate of its variant (session audit 2, S2-1 and S2-2).
func TestFailedLaunch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop()
	d := s.shop.Domain
	id := s.created(t, "/api/price-experiments/v1/create", priceV1("Flaky platform"))
	status := func() any { return s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)["status"] }

	for _, try := range []struct {
		platform int // the cart transform's answer; 0: it works
		status   int
		says     string
		after    string
	}{
		{http.StatusUnprocessableEntity, http.StatusBadRequest, "not launched", "DRAFT"},
		{http.StatusInternalServerError, http.StatusInternalServerError, "FAILED", "FAILED"},
		{0, http.StatusOK, "", "ACTIVE"},
	} {
		e.fake.Heal(d)
		if try.platform != 0 {
			e.fake.Fail(d, platform.OpCartTransform, try.platform)
		}
		r := s.do(t, "PUT", "/api/experiments/"+id, `{"status":"ACTIVE"}`)
		if try.status == http.StatusOK {
			wantSuccess(t, r)
		} else if msg := wantError(t, r, try.status); !strings.Contains(msg, try.says) {
			t.Fatalf("platform %d: the answer says %q, want %q", try.platform, msg, try.says)
		}
		if st := status(); st != try.after {
			t.Fatalf("platform %d: the test is %v, want %s", try.platform, st, try.after)
		}
	}
	if dups := e.fake.Duplicates(d, "gid://shopify/ProductVariant/"+teeS); len(dups) != 1 {
		t.Fatalf("three launches left duplicates %v, want one", dups)
	}
}

// TestContestedStart: the admin panel's start of a test whose product
// another live test prices is refused in the session envelope, and the test
// stays a draft.
func TestContestedStart(t *testing.T) {
	t.Parallel()
	s := newEnv(t).newShop()
	first := s.created(t, "/api/price-experiments/v1/create", priceV1("First"))
	wantSuccess(t, s.do(t, "PUT", "/api/experiments/"+first, `{"status":"ACTIVE"}`))
	second := s.created(t, "/api/price-experiments/v1/create", priceV1("Second"))
	msg := wantError(t, s.do(t, "PUT", "/api/experiments/"+second, `{"name":"Renamed","status":"ACTIVE"}`), http.StatusBadRequest)
	if want := fmt.Sprintf("Test %s (\"First\", active) already changes the price of product %s", first, tee); !strings.Contains(msg, want) {
		t.Fatalf("message %q, want it to name %q", msg, want)
	}
	if got := s.do(t, "GET", "/api/experiments/"+second, "").data().(map[string]any); got["status"] != "DRAFT" || got["name"] != "Second" {
		t.Fatalf("a refused start left the test %v named %v", got["status"], got["name"])
	}
	wantSuccess(t, s.do(t, "PUT", "/api/experiments/"+first, `{"status":"STOPPED"}`))
	wantSuccess(t, s.do(t, "PUT", "/api/experiments/"+second, `{"status":"ACTIVE"}`))
}
