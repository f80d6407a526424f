package v1_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

// TestBadInputIsRefusedAtTheEdge replays issue 12's malformed requests,
// each of which answered 5xx: now each is the caller's error, naming the
// field, and nothing is created.
func TestBadInputIsRefusedAtTheEdge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	visual := func(css string) string {
		return `{"type":"visual_editor","name":"v","test_groups":[{"index":0,"name":"Control","split":50},` +
			`{"index":1,"name":"Variant","split":50,"content":{"custom_css":"` + css + `"}}]}`
	}
	tests := []struct {
		name       string
		path, body string
		header     []string
		status     int
		typ, code  string
		param      string
	}{
		{"NULInName", "/v1/experiments", strings.Replace(priceTest("x"), `"name":"x"`, `"name":"a\u0000b"`, 1), nil,
			400, "invalid_request_error", "malformed_json", "name"},
		{"NULInContent", "/v1/experiments", visual(`a{}\u0000`), nil,
			400, "invalid_request_error", "malformed_json", "test_groups[1].content.custom_css"},
		{"InvalidUTF8InName", "/v1/experiments", strings.Replace(priceTest("x"), `"name":"x"`, "\"name\":\"a\xffb\"", 1), nil,
			400, "invalid_request_error", "malformed_json", "name"},
		{"UnpairedSurrogate", "/v1/experiments", visual(`\ud800`), nil,
			400, "invalid_request_error", "malformed_json", "test_groups[1].content.custom_css"},
		{"HugeGroupIndex", "/v1/experiments", strings.Replace(priceTest("x"), `"index":1,`, `"index":1099511627776,`, 1), nil,
			422, "validation_error", "invalid_request", "test_groups[1].index"},
		{"OversizeHypothesis", "/v1/experiments",
			strings.Replace(priceTest("x"), `"name":"x"`, `"name":"x","hypothesis":"`+strings.Repeat("h", experiment.MaxHypothesisChars+1)+`"`, 1), nil,
			422, "validation_error", "invalid_request", "hypothesis"},
		{"NonUTF8IdempotencyKey", "/v1/experiments", priceTest("x"), []string{"Idempotency-Key", "key-\xff\xfe"},
			400, "invalid_request_error", "invalid_idempotency_key", "Idempotency-Key"},
		{"FormBodyNotJSON", "/v1/experiments", "type=price&name=x", []string{"Content-Type", "application/x-www-form-urlencoded"},
			400, "invalid_request_error", "malformed_json", ""},
		{"ScheduleTimeNotATime", "/v1/experiments", strings.Replace(priceTest("x"), `"name":"x"`, `"name":"x","schedule":{"start_at":7}`, 1), nil,
			422, "validation_error", "invalid_request", "schedule.start_at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := e.newShop(store.ShopUpdate{})
			r := s.do(t, "POST", tc.path, tc.body, tc.header...)
			wantError(t, r, tc.status, tc.typ, tc.code, tc.param)
			if strings.Contains(string(r.Raw), "2006-01-02") {
				t.Fatalf("message leaks Go's time layout: %s", r.Raw)
			}
			wantNoTests(t, s)
		})
	}
}

func wantNoTests(t *testing.T, s *shopEnv) {
	t.Helper()
	tests, _, err := s.db.FindTests(context.Background(), s.shop.ID, experiment.Filter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) != 0 {
		t.Fatalf("a refused request created %d tests", len(tests))
	}
}

// TestBadPathAndQueryTextIsRefused: path ids and query values that are not
// text reached Postgres (a 500); now they are 400 naming the parameter.
// TestBodyIsJSONWhateverItsContentType: the contract has no status for a
// media type, so a JSON body sent as a form or as text (curl -d) is read as
// the JSON it is.
func TestBodyIsJSONWhateverItsContentType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", "application/jsonx"} {
		s := e.newShop(store.ShopUpdate{})
		if r := s.do(t, "POST", "/v1/experiments", priceTest("x"), "Content-Type", ct); r.Status != http.StatusCreated {
			t.Errorf("%s: %d %s, want 201", ct, r.Status, r.Raw)
		}
	}
}

func TestBadPathAndQueryTextIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	x := id(s.create(t, priceTest("x")))
	tests := []struct{ name, path, param string }{
		{"NULInQueryID", "/v1/experiments/" + x + "/results/q%00", "query_id"},
		{"InvalidUTF8InQueryID", "/v1/experiments/" + x + "/results/%FF", "query_id"},
		{"NULInExportID", "/v1/exports/%00", "id"},
		{"NULInQueryValue", "/v1/experiments?status=%00", "status"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantError(t, s.do(t, "GET", tc.path, ""), 400, "invalid_request_error", "invalid_request", tc.param)
		})
	}
}

// TestPatchWithNULChangesNothing: a NUL in a PATCH reached SaveTest (a 500).
func TestPatchWithNULChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	x := id(s.create(t, priceTest("before")))
	wantError(t, s.do(t, "PATCH", "/v1/experiments/"+x, `{"hypothesis":"a\u0000"}`), 400, "invalid_request_error", "malformed_json", "hypothesis")
	wantError(t, s.do(t, "PATCH", "/v1/experiments/"+x, `{"name":"after","test_groups":[{"index":1099511627776,"name":"z","split":0}]}`),
		422, "validation_error", "invalid_request", "test_groups[2].index")
	r := s.do(t, "GET", "/v1/experiments/"+x, "")
	if r.Status != http.StatusOK || r.Body["name"] != "before" || r.Body["hypothesis"] != nil || r.Body["updated_at"] != r.Body["created_at"] {
		t.Fatalf("the refused PATCHes changed the test: %s", r.Raw)
	}
}

// TestHeadIsARead: HEAD answers what GET answers, headers and status, with
// the read scope and the read budget, and no body.
func TestHeadIsARead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	x := id(s.create(t, priceTest("head")))
	readToken := []string{"Authorization", "Bearer " + s.read}
	for _, tc := range []struct {
		path   string
		header []string
		status int
	}{
		{"/v1/experiments", readToken, http.StatusOK},
		{"/v1/experiments/" + x, readToken, http.StatusOK},
		{"/v1/experiments/" + x + "/results", readToken, http.StatusUnprocessableEntity}, // a draft has none
		{"/v1/experiments/999999", readToken, http.StatusNotFound},
		{"/v1/experiments", []string{"Authorization", ""}, http.StatusUnauthorized},
	} {
		r := s.do(t, "HEAD", tc.path, "", tc.header...)
		if r.Status != tc.status || len(r.Raw) != 0 {
			t.Errorf("HEAD %s = %d %q, want %d and no body", tc.path, r.Status, r.Raw, tc.status)
		}
		if tc.status != http.StatusUnauthorized && r.Header.Get("X-RateLimit-Limit") == "" {
			t.Errorf("HEAD %s has no X-RateLimit-Limit", tc.path)
		}
		if get := s.do(t, "GET", tc.path, "", tc.header...); get.Status != r.Status {
			t.Errorf("HEAD %s = %d but GET = %d", tc.path, r.Status, get.Status)
		}
	}
}

// TestNoBodyRoutesRefuseFields: the lifecycle actions, previews and
// exports take no body (part 5), so a field sent there is named, not
// dropped; nothing at all, or {}, passes.
func TestNoBodyRoutesRefuseFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	x := id(s.create(t, priceTest("no body")))
	for _, path := range []string{"/v1/experiments/" + x + "/start", "/v1/experiments/" + x + "/test_groups/1/preview",
		"/v1/experiments/" + x + "/exports"} {
		wantError(t, s.do(t, "POST", path, `{"bogus":1}`), 422, "validation_error", "invalid_request", "bogus")
		wantError(t, s.do(t, "POST", path, `{`), 400, "invalid_request_error", "malformed_json", "")
	}
	if got := s.do(t, "GET", "/v1/experiments/"+x, ""); got.Body["status"] != "draft" {
		t.Fatalf("a refused start moved the test: %s", got.Raw)
	}
	for _, body := range []string{"", "{}"} {
		if r := s.do(t, "POST", "/v1/experiments/"+x+"/pause", body); r.Status != 409 {
			// a draft cannot pause: the body passed and the action answered
			t.Errorf("pause with body %q = %d %s, want 409 from the action", body, r.Status, r.Raw)
		}
	}
}
