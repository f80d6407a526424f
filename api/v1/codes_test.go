package v1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/store"
)

// contractCodes is the error-code table of part 7 of the contract
// (seeds/000): each status with its codes, and under 422 the codes that are
// not finding rules, those of a custom result query and the create families.
var contractCodes = map[int][]string{
	400: {"malformed_json", "unknown_parameter", "invalid_cursor", "invalid_include", "invalid_idempotency_key", "invalid_request"},
	401: {"missing_token", "invalid_token", "token_revoked"},
	403: {"insufficient_scope", "api_access_disabled", "subscription_inactive", "billing_cap_reached", "feature_not_in_plan", "carrier_service_required"},
	404: {"experiment_not_found", "export_not_found", "results_query_not_found"},
	409: {"invalid_status_transition", "locked_field", "idempotency_key_in_use", "checks_pending", "editor_owned_content"},
	413: {"request_too_large"},
	422: {"invalid_request", "invalid_type", "invalid_configuration", "launch_blocked", "preview_unsupported", "export_not_available", "results_not_available",
		"invalid_breakdown_dimension", "breakdown_too_many_dimensions", "duplicate_breakdown_dimension", "invalid_date_range",
		"date_range_out_of_bounds", "sample_basis_unsupported", "product_group_not_found", "product_id_requires_product_group",
		// create, by family
		"product_not_found", "collection_not_found", "theme_not_found", "template_not_found", "zone_not_found", "rate_not_found",
		"template_required", "destination_required", "change_required", "rate_required", "offer_required",
		"duplicate_change", "duplicate_group_name", "duplicate_rule_key", "rule_key_not_found", "zone_not_declared", "control_group_invalid", "split_sum_invalid",
		"currency_mismatch", "control_offers_rates", "match_type_unsupported", "max_discount_amount_not_allowed", "discount_combination_invalid",
		"condition_range_invalid", "product_limit_exceeded", "market_pricing_incomplete"},
	429: {"rate_limited"},
	500: {"internal_error"},
	501: {"not_implemented"},
	503: {"rate_limit_unavailable", "audit_unavailable", "idempotency_unavailable", "internal_error"},
	504: {"internal_error"},
}

// codeRow provokes one code of the table through the real HTTP surface.
type codeRow struct {
	status      int
	typ, code   string
	param       string
	provoke     func(t *testing.T) resp
	afterwards  func(t *testing.T) // what must (not) have changed, when it says something
	description string
}

// codes is the fixture the rows share: one env, its main shop and a started
// test, and shops whose plan refuses.
type codes struct {
	e       *env
	s       *shopEnv
	running string // an active price test of s
}

// TestEveryContractCode provokes each code of the contract's error table
// through the real server (Postgres, Redis, ClickHouse, the fake platform)
// and checks status, type, code and param; a code without a row fails.
// Faults of the database are injected with triggers raising the SQLSTATE a
// real fault raises, so the whole path from Postgres to the envelope runs.
func TestEveryContractCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &codes{e: e, s: e.newShop(store.ShopUpdate{})}
	c.running = e.started(t, c.s, "Running")
	c.injectFaults(t)
	rows := c.rows()
	for _, tc := range createFindingCases() { // the create families, as TestCreate422 sends them
		rows = append(rows, codeRow{422, "validation_error", tc.code, tc.param, c.call("POST", "/v1/experiments", tc.body), nil, "create " + tc.name})
	}

	covered := map[string]bool{}
	for _, r := range rows {
		covered[fmt.Sprint(r.status, " ", r.code)] = true
	}
	var missing []string
	for status, list := range contractCodes {
		for _, code := range list {
			if !covered[fmt.Sprint(status, " ", code)] {
				missing = append(missing, fmt.Sprint(status, " ", code))
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("codes of the contract's table without a row: %v", missing)
	}

	// Sequential: some rows move the shared clock or the fake platform.
	for _, r := range rows {
		t.Run(fmt.Sprintf("%d_%s_%s", r.status, r.code, r.description), func(t *testing.T) {
			got := r.provoke(t)
			wantError(t, got, r.status, r.typ, r.code, r.param)
			_, hasID := got.Body["error"].(map[string]any)["request_id"]
			if r.status >= 500 && !hasID {
				t.Fatalf("a %d carries no request_id: %s", r.status, got.Raw)
			}
			// Part 8: every response carries the rate-limit headers (but the
			// one saying the limiter is unreachable). This server has no
			// budget for refused authentications (401, 403
			// api_access_disabled); api/ratelimit_test.go checks theirs.
			refusedAuth := r.status == http.StatusUnauthorized || r.code == "api_access_disabled"
			if got.Header.Get("X-RateLimit-Limit") == "" && r.code != "rate_limit_unavailable" && !refusedAuth {
				t.Errorf("a %d %s carries no X-RateLimit-Limit", r.status, r.code)
			}
			if r.status == http.StatusTooManyRequests && got.Header.Get("Retry-After") == "" {
				t.Fatalf("429 without Retry-After")
			}
			if r.afterwards != nil {
				r.afterwards(t)
			}
		})
	}
}

// injectFaults adds triggers that raise, for marked rows only, the errors
// Postgres raises on a real fault: a failed statement, a lock wait over
// lock_timeout, a statement cancelled by the write timeout, an audit insert
// or an idempotency claim that fails.
func (c *codes) injectFaults(t *testing.T) {
	t.Helper()
	pool := lifttest.Pool(t, c.e.pgURL)
	for _, sql := range []string{
		`CREATE FUNCTION codes_test_fault() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.name = 'fault: internal' THEN RAISE EXCEPTION 'injected fault' USING ERRCODE = 'XX000'; END IF;
			IF NEW.name = 'fault: lock' THEN RAISE EXCEPTION 'injected lock timeout' USING ERRCODE = '55P03'; END IF;
			IF NEW.name = 'fault: timeout' THEN RAISE EXCEPTION 'injected cancel' USING ERRCODE = '57014'; END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER codes_test_fault BEFORE UPDATE ON experiments FOR EACH ROW EXECUTE FUNCTION codes_test_fault()`,
		`CREATE FUNCTION codes_test_audit_fault() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.action = 'experiment.archive' THEN RAISE EXCEPTION 'injected audit fault'; END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER codes_test_audit_fault BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION codes_test_audit_fault()`,
		`CREATE FUNCTION codes_test_claim_fault() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.key = 'broken-claim' THEN RAISE EXCEPTION 'injected claim fault'; END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER codes_test_claim_fault BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION codes_test_claim_fault()`,
	} {
		if _, err := pool.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

func (c *codes) draft(t *testing.T, name string) string {
	t.Helper()
	return id(c.s.create(t, priceTest(name)))
}

func (c *codes) get(path string, header ...string) func(t *testing.T) resp {
	return c.call("GET", path, "", header...)
}

func (c *codes) call(method, path, body string, header ...string) func(t *testing.T) resp {
	return func(t *testing.T) resp { return c.s.do(t, method, path, body, header...) }
}

// withShop provokes a request of a shop made for the row.
func (c *codes) withShop(upd store.ShopUpdate, method, path string, body func(*testing.T, *shopEnv) string) func(t *testing.T) resp {
	return func(t *testing.T) resp {
		s := c.e.newShop(upd)
		return s.do(t, method, path, body(t, s))
	}
}

func (c *codes) rows() []codeRow {
	e, s := c.e, c.s
	yes, no := true, false
	onlyPrice := []string{"price"}
	results := "/v1/experiments/" + c.running + "/results"
	query := func(body string) func(t *testing.T) resp { return c.call("POST", results, body) }
	shipBody := fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q]}},"test_groups":`+twoGroups+`}`,
		domestic, fmt.Sprintf(`{"rates":[{"zone_id":%q,"rate_id":%q,"name":"Standard","price":{"amount":"3.95","currency":"USD"}}]}`, domestic, standard))
	themeBody := fmt.Sprintf(`{"type":"theme","name":"Holiday theme","test_groups":`+twoGroups+`}`, fmt.Sprintf(`{"theme_id":%q}`, holiday))
	offerBody := fmt.Sprintf(`{"type":"offer","name":"o","test_groups":`+twoGroups+`}`,
		`{"offers":[{"key":"k","title":"Free shipping","discount":{"type":"free_shipping"}}]}`)
	body := func(b string) func(*testing.T, *shopEnv) string {
		return func(*testing.T, *shopEnv) string { return b }
	}
	patchName := func(name string) func(t *testing.T) resp {
		return func(t *testing.T) resp { return s.patch(t, c.draft(t, "Faulty"), fmt.Sprintf(`{"name":%q}`, name)) }
	}

	return []codeRow{
		// 400
		{400, "invalid_request_error", "malformed_json", "", c.call("POST", "/v1/experiments", `{"type":`), nil, "truncated body"},
		{400, "invalid_request_error", "unknown_parameter", "colour", c.get("/v1/experiments?colour=red"), nil, "unknown query parameter"},
		{400, "invalid_request_error", "invalid_cursor", "cursor", c.get("/v1/experiments?cursor=bm90LWEtY3Vyc29y"), nil, "forged cursor"},
		{400, "invalid_request_error", "invalid_include", "include", c.get("/v1/experiments/" + c.running + "?include=results"), nil, "unusable include"},
		{400, "invalid_request_error", "invalid_idempotency_key", "Idempotency-Key",
			c.call("POST", "/v1/experiments", priceTest("k"), "Idempotency-Key", strings.Repeat("k", 256)), nil, "key over 255"},
		{400, "invalid_request_error", "invalid_request", "limit", c.get("/v1/experiments?limit=1&limit=2"), nil, "parameter sent twice"},
		// 401
		{401, "authentication_error", "missing_token", "", c.get("/v1/experiments", "Authorization", ""), nil, "no bearer token"},
		{401, "authentication_error", "invalid_token", "", c.get("/v1/experiments", "Authorization", "Bearer lift_"+strings.Repeat("A", 43)), nil, "unknown token"},
		{401, "authentication_error", "token_revoked", "", func(t *testing.T) resp {
			tok, _, err := e.db.FindTokenBySecret(context.Background(), s.read)
			if err != nil {
				t.Fatal(err)
			}
			other, secret, err := e.db.CreateToken(context.Background(), s.shop.ID, tok.Scope)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.RevokeToken(context.Background(), other.ID); err != nil {
				t.Fatal(err)
			}
			return s.do(t, "GET", "/v1/experiments", "", "Authorization", "Bearer "+secret)
		}, nil, "revoked token"},
		// 403
		{403, "permission_error", "insufficient_scope", "", c.call("POST", "/v1/experiments", priceTest("x"), "Authorization", "Bearer "+s.read), nil, "read token writes"},
		{403, "permission_error", "api_access_disabled", "", func(t *testing.T) resp {
			off := e.newShop(store.ShopUpdate{})
			off.update(store.ShopUpdate{APIEnabled: &no})
			return off.do(t, "GET", "/v1/experiments", "")
		}, nil, "shop not enabled"},
		{403, "permission_error", "subscription_inactive", "",
			c.withShop(store.ShopUpdate{SubscriptionActive: &no}, "POST", "/v1/experiments", body(priceTest("x"))), nil, "create"},
		{403, "permission_error", "billing_cap_reached", "",
			c.withShop(store.ShopUpdate{BillingCapReached: &yes}, "POST", "/v1/experiments", body(priceTest("x"))), nil, "create"},
		{403, "permission_error", "feature_not_in_plan", "offer",
			c.withShop(store.ShopUpdate{Features: &onlyPrice}, "POST", "/v1/experiments", body(offerBody)), nil, "offer test on a price-only plan"},
		{403, "permission_error", "carrier_service_required", "",
			c.withShop(store.ShopUpdate{CarrierService: &no}, "POST", "/v1/experiments", body(shipBody)), nil, "shipping test"},
		// 404
		{404, "not_found_error", "experiment_not_found", "", c.get("/v1/experiments/999999999"), nil, "unknown id"},
		{404, "not_found_error", "export_not_found", "", c.get("/v1/exports/export_nope"), nil, "unknown export"},
		{404, "not_found_error", "results_query_not_found", "", c.get(results + "/rq_nope"), nil, "unknown query"},
		// 409
		{409, "conflict_error", "invalid_status_transition", "", func(t *testing.T) resp {
			return s.act(t, c.draft(t, "Not running"), "pause")
		}, nil, "pause a draft"},
		{409, "conflict_error", "locked_field", "traffic_allocation", c.call("PATCH", "/v1/experiments/"+c.running, `{"traffic_allocation":50}`), nil, "after launch"},
		{409, "conflict_error", "idempotency_key_in_use", "", func(t *testing.T) resp {
			if r := s.do(t, "POST", "/v1/experiments", priceTest("first"), "Idempotency-Key", "codes-key"); r.Status != http.StatusCreated {
				t.Fatalf("first use of the key = %d %s", r.Status, r.Raw)
			}
			return s.do(t, "POST", "/v1/experiments", priceTest("second"), "Idempotency-Key", "codes-key")
		}, nil, "key used for another body"},
		{409, "conflict_error", "checks_pending", "", func(t *testing.T) resp {
			return s.patch(t, id(s.create(t, themeBody)), `{"name":"n"}`) // no worker runs the checks
		}, nil, "theme test being validated"},
		{409, "conflict_error", "editor_owned_content", "test_groups[1].content.custom_css", func(t *testing.T) resp {
			return s.patch(t, editorOwned(t, s), `{"test_groups":[{"index":1,"content":{"custom_css":"h1{color:blue}"}}]}`)
		}, nil, "visual edit of the admin panel"},
		// 413
		{413, "invalid_request_error", "request_too_large", "",
			c.call("POST", "/v1/experiments", `{"name":"`+strings.Repeat("x", 10<<20)+`"}`), nil, "body over 10 MB"},
		// 422 codes that are not finding rules
		{422, "validation_error", "invalid_request", "status", c.get("/v1/experiments?status=running"), nil, "status outside the vocabulary"},
		{422, "validation_error", "invalid_type", "type", c.call("POST", "/v1/experiments", `{"type":"popup","name":"x"}`), nil, "unknown type"},
		c.invalidConfiguration(),
		c.launchBlocked(),
		{422, "validation_error", "preview_unsupported", "", func(t *testing.T) resp {
			return s.do(t, "POST", "/v1/experiments/"+id(s.create(t, shipBody))+"/test_groups/1/preview", "")
		}, nil, "shipping preview"},
		{422, "validation_error", "export_not_available", "", func(t *testing.T) resp {
			return s.do(t, "POST", "/v1/experiments/"+c.draft(t, "Never ran")+"/exports", "")
		}, nil, "draft export"},
		{422, "validation_error", "results_not_available", "id", func(t *testing.T) resp {
			return s.do(t, "GET", "/v1/experiments/"+c.draft(t, "No results")+"/results", "")
		}, nil, "draft snapshot"},
		{422, "validation_error", "rule_key_not_found", "test_groups[0].content.offers[0].key", func(t *testing.T) resp {
			return s.patch(t, id(s.create(t, offerBody)), `{"test_groups":[{"index":1,"content":{"offers":[{"key":"nope","remove":true}]}}]}`)
		}, nil, "patch removes an offer the group lacks"},
		// 422 codes of a custom result query
		{422, "validation_error", "invalid_breakdown_dimension", "breakdown[0]", query(`{"breakdown":["os"]}`), nil, ""},
		{422, "validation_error", "breakdown_too_many_dimensions", "breakdown", query(`{"breakdown":["device","country","date","utm_source"]}`), nil, ""},
		{422, "validation_error", "duplicate_breakdown_dimension", "breakdown[1]", query(`{"breakdown":["device","device"]}`), nil, ""},
		{422, "validation_error", "invalid_date_range", "date_range", query(`{"date_range":{"gte":"2026-06-03","lte":"2026-06-02"}}`), nil, "reversed"},
		{422, "validation_error", "date_range_out_of_bounds", "date_range.lte", query(`{"date_range":{"gte":"2026-05-01","lte":"2026-05-31"}}`), nil, "before the start"},
		{422, "validation_error", "sample_basis_unsupported", "sample_basis", query(`{"sample_basis":"orders"}`), nil, ""},
		{422, "validation_error", "product_group_not_found", "product_group_id", query(`{"product_group_id":"pg-other"}`), nil, ""},
		{422, "validation_error", "product_id_requires_product_group", "product_id", query(fmt.Sprintf(`{"product_id":%q}`, tee)), nil, ""},
		// 429
		c.rateLimited(),
		// 5xx
		{500, "api_error", "internal_error", "", patchName("fault: internal"), nil, "the database fails the statement"},
		{501, "api_error", "not_implemented", "type", c.call("POST", "/v1/experiments", `{"type":"checkout","name":"c"}`), nil, "checkout test"},
		c.rateLimitUnavailable(),
		c.auditUnavailable(),
		{503, "api_error", "idempotency_unavailable", "", c.call("POST", "/v1/experiments", priceTest("k"), "Idempotency-Key", "broken-claim"), nil, "claim fails"},
		{503, "api_error", "internal_error", "", patchName("fault: lock"), nil, "lock wait over lock_timeout"},
		{504, "api_error", "internal_error", "", patchName("fault: timeout"), nil, "statement cancelled"},
	}
}

// invalidConfiguration: a draft saved with a schedule.end_at that has passed
// since cannot start; nothing changes.
func (c *codes) invalidConfiguration() codeRow {
	var x string
	return codeRow{422, "validation_error", "invalid_configuration", "schedule.end_at", func(t *testing.T) resp {
		end := c.e.clock.Now().Add(time.Hour)
		x = id(c.s.create(t, strings.Replace(priceTest("Window closed"), `{"type"`,
			fmt.Sprintf(`{"schedule":{"end_at":%q},"type"`, end.Format(time.RFC3339)), 1)))
		c.e.clock.Set(end.Add(time.Hour))
		t.Cleanup(func() { c.e.clock.Set(epoch) })
		r := c.s.act(t, x, "start")
		if msg := errorMessage(r); !strings.Contains(msg, "schedule.end_at") {
			t.Fatalf("the message does not name the fix: %q", msg)
		}
		return r
	}, func(t *testing.T) { wantStatus(t, c.s.do(t, "GET", "/v1/experiments/"+x, ""), "draft") }, "end_at passed since it was saved"}
}

// launchBlocked: the platform refuses a launch check (a 4xx); nothing
// launches and the test stays a draft, unlike a platform failure, which
// ends in failed.
func (c *codes) launchBlocked() codeRow {
	var x string
	return codeRow{422, "validation_error", "launch_blocked", "", func(t *testing.T) resp {
		x = c.draft(t, "Refused")
		c.e.fake.Fail(c.s.shop.Domain, platform.OpCartTransform, http.StatusUnprocessableEntity)
		t.Cleanup(func() { c.e.fake.Heal(c.s.shop.Domain) })
		return c.s.act(t, x, "start")
	}, func(t *testing.T) { wantStatus(t, c.s.do(t, "GET", "/v1/experiments/"+x, ""), "draft") }, "platform refuses"}
}

// realTime runs the rest of a row on the wall clock: the limiter's counters
// expire at their window's end by Redis's own clock, so in a window of the
// harness's epoch (in the past) they are gone as soon as they are written.
func (c *codes) realTime(t *testing.T) {
	c.e.clock.Set(time.Now())
	t.Cleanup(func() { c.e.clock.Set(epoch) })
}

// rateLimited spends a read token's result-query budget, the smallest.
func (c *codes) rateLimited() codeRow {
	return codeRow{429, "rate_limit_error", "rate_limited", "", func(t *testing.T) resp {
		c.realTime(t)
		s := c.e.newShop(store.ShopUpdate{})
		x := c.e.started(t, s, "Queried")
		for i := range queryBudget {
			if r := s.do(t, "POST", "/v1/experiments/"+x+"/results", `{"sample_basis":"orders"}`, "Authorization", "Bearer "+s.read); r.Status != 422 {
				t.Fatalf("query %d = %d %s", i+1, r.Status, r.Raw)
			}
		}
		return s.do(t, "POST", "/v1/experiments/"+x+"/results", `{}`, "Authorization", "Bearer "+s.read)
	}, nil, "result-query budget spent"}
}

// rateLimitUnavailable makes Redis fail the count of one token's write
// budget (its counter holds a value INCR refuses): the write is refused and
// a read of the same token is still served.
func (c *codes) rateLimitUnavailable() codeRow {
	var s *shopEnv
	return codeRow{503, "api_error", "rate_limit_unavailable", "", func(t *testing.T) resp {
		c.realTime(t)
		s = c.e.newShop(store.ShopUpdate{})
		s.create(t, priceTest("Counted"))
		tok, _, err := c.e.db.FindTokenBySecret(context.Background(), s.write)
		if err != nil {
			t.Fatal(err)
		}
		rc := redis.NewClient(&redis.Options{Addr: c.e.redis.Addr, DB: c.e.redis.DB})
		defer rc.Close()
		ctx := context.Background()
		keys, err := rc.Keys(ctx, fmt.Sprintf("*:%d:write:*", tok.ID)).Result()
		if err != nil || len(keys) == 0 {
			t.Fatalf("the token's write counter: %v %v", keys, err)
		}
		for _, k := range keys {
			if err := rc.Set(ctx, k, "not a number", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
		return s.do(t, "POST", "/v1/experiments", priceTest("Refused"))
	}, func(t *testing.T) {
		if r := s.do(t, "GET", "/v1/experiments", ""); r.Status != http.StatusOK {
			t.Fatalf("a read with the limiter failing = %d %s, want served", r.Status, r.Raw)
		}
	}, "Redis refuses the count"}
}

// auditUnavailable: the audit insert of an archive fails, so the archive
// is not performed.
func (c *codes) auditUnavailable() codeRow {
	var x string
	return codeRow{503, "api_error", "audit_unavailable", "", func(t *testing.T) resp {
		x = c.draft(t, "Unarchivable")
		return c.s.act(t, x, "archive")
	}, func(t *testing.T) { wantStatus(t, c.s.do(t, "GET", "/v1/experiments/"+x, ""), "draft") }, "audit insert fails"}
}

func errorMessage(r resp) string {
	e, _ := r.Body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// editorOwned stores a visual edit made in the admin panel, with content
// the API can read but not rewrite.
func editorOwned(t *testing.T, s *shopEnv) string {
	t.Helper()
	vt := &experiment.Test{ShopID: s.shop.ID, Type: experiment.TypeVisualEditor, Status: experiment.StatusDraft,
		Name: "Hero copy", TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50, Content: json.RawMessage(`{}`)},
			{Index: 1, Name: "New hero", Split: 50, Content: json.RawMessage(`{"custom_css":"h1{color:red}","dom_changes":[{"selector":"h1","action":"set","attribute":"html","value":"Hi"}]}`)}},
		CreatedAt: epoch, UpdatedAt: epoch}
	if _, err := s.db.Write(context.Background(), experiment.WriteMeta{ShopID: s.shop.ID, Action: "test.fixture", ResourceType: "experiment"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{}, tx.CreateTest(ctx, vt)
		}); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(vt.ID)
}
