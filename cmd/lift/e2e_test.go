package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

func TestReadyz(t *testing.T) {
	t.Parallel()
	t.Run("AllUp", func(t *testing.T) {
		t.Parallel()
		s := newServer(t)
		r := s.do("GET", "/readyz", "", "")
		checks, _ := r.body["checks"].(map[string]any)
		if r.status != 200 || checks["postgres"] != "ok" || checks["redis"] != "ok" || checks["clickhouse"] != "ok" {
			t.Fatalf("readyz = %d %s", r.status, r.raw)
		}
		if r := s.do("GET", "/healthz", "", ""); r.status != 200 {
			t.Fatalf("healthz = %d", r.status)
		}
	})
	// Without ClickHouse the node still serves v1, the session list and
	// webhooks from Postgres: degraded, kept behind the load balancer.
	t.Run("ClickHouseDown", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, func(c *config.Config) { c.ClickHouse.Addr = deadAddr(t) })
		r := s.do("GET", "/readyz", "", "")
		degraded, _ := r.body["degraded"].([]any)
		if r.status != 200 || r.body["status"] != "degraded" || len(degraded) != 1 || degraded[0] != "clickhouse" {
			t.Fatalf("readyz = %d %s, want 200 degraded naming clickhouse only", r.status, r.raw)
		}
	})
}

// deadAddr is a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close()
	return addr
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, read, write := s.shop(true)
	_, offRead, _ := s.shop(false)
	uninstalled, uRead, _ := s.shop(true)
	yes := true
	if _, err := s.app.DB.UpdateShop(context.Background(), uninstalled.ID, store.ShopUpdate{Uninstalled: &yes}); err != nil {
		t.Fatal(err)
	}
	_ = shop
	cases := []struct {
		name, method, path, auth string
		status                   int
		typ, code                string
	}{
		{"MissingToken", "GET", "/v1/experiments", "", 401, "authentication_error", "missing_token"},
		{"NotBearer", "GET", "/v1/experiments", "Basic abc", 401, "authentication_error", "missing_token"},
		{"Malformed", "GET", "/v1/experiments", "Bearer nope", 401, "authentication_error", "invalid_token"},
		{"Unknown", "GET", "/v1/experiments", "Bearer lift_" + strings.Repeat("A", 43), 401, "authentication_error", "invalid_token"},
		{"ShopUninstalled", "GET", "/v1/experiments", "Bearer " + uRead, 401, "authentication_error", "invalid_token"},
		{"APIAccessDisabled", "GET", "/v1/experiments", "Bearer " + offRead, 403, "permission_error", "api_access_disabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := []string{}
			if c.auth != "" {
				h = []string{"Authorization", c.auth}
			}
			wantError(t, s.do(c.method, c.path, "", "", h...), c.status, c.typ, c.code, nil)
		})
	}
	t.Run("InsufficientScope", func(t *testing.T) {
		r := s.do("POST", "/v1/experiments", read, themeTestBody("x"))
		wantError(t, r, 403, "permission_error", "insufficient_scope", nil)
		d, _ := r.errField("details").(map[string]any)
		if d["token_scope"] != "read_experiments" || d["required_scope"] != "write_experiments" {
			t.Fatalf("details = %v", d)
		}
	})
	t.Run("WriteIncludesRead", func(t *testing.T) {
		if r := s.do("GET", "/v1/experiments", write, ""); r.status != 200 {
			t.Fatalf("GET with write token = %d %s", r.status, r.raw)
		}
	})
	t.Run("TokenRevoked", func(t *testing.T) {
		_, r2, _ := s.shop(true)
		tok, _, err := s.app.DB.FindTokenBySecret(context.Background(), r2)
		if err != nil {
			t.Fatal(err)
		}
		s.app.DB.RevokeToken(context.Background(), tok.ID)
		wantError(t, s.do("GET", "/v1/experiments", r2, ""), 401, "authentication_error", "token_revoked", nil)
	})
}

func TestAnotherShopsTestReadsAsNotFound(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, _, writeA := s.shop(true)
	_, readB, _ := s.shop(true)
	r := s.do("POST", "/v1/experiments", writeA, themeTestBody("mine"))
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id := r.body["id"].(string)
	wantError(t, s.do("GET", "/v1/experiments/"+id, readB, ""), 404, "not_found_error", "experiment_not_found", nil)
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, read, write := s.shop(true)
	t.Run("TooLarge", func(t *testing.T) {
		big := `{"name":"` + strings.Repeat("x", 10<<20) + `"}`
		wantError(t, s.do("POST", "/v1/experiments", write, big), 413, "invalid_request_error", "request_too_large", nil)
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		wantError(t, s.do("POST", "/v1/experiments", write, `{"name":`), 400, "invalid_request_error", "malformed_json", nil)
	})
	t.Run("UnknownQueryParameter", func(t *testing.T) {
		wantError(t, s.do("GET", "/v1/experiments?colour=red", read, ""), 400, "invalid_request_error", "unknown_parameter", "colour")
	})
	t.Run("RepeatedQueryParameter", func(t *testing.T) {
		wantError(t, s.do("GET", "/v1/experiments?limit=1&limit=2", read, ""), 400, "invalid_request_error", "invalid_request", "limit")
	})
	t.Run("UnknownRoute", func(t *testing.T) {
		r := s.do("GET", "/v1/nothing", read, "")
		if r.status != 404 || r.errField("type") != "not_found_error" {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
	})
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(c *config.Config) { c.RateLimit.Reads, c.RateLimit.Writes = 3, 2 })
	_, read, write := s.shop(true)
	for i := 1; i <= 3; i++ {
		r := s.do("GET", "/v1/experiments", read, "")
		if r.status != 200 || r.header.Get("X-RateLimit-Limit") != "3" || r.header.Get("X-RateLimit-Remaining") != fmt.Sprint(3-i) || r.header.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("read %d: %d limit=%q remaining=%q reset=%q", i, r.status, r.header.Get("X-RateLimit-Limit"),
				r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Reset"))
		}
	}
	r := s.do("GET", "/v1/experiments", read, "")
	wantError(t, r, 429, "rate_limit_error", "rate_limited", nil)
	if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After = %q", ra)
	}
	if r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("remaining on 429 = %q", r.header.Get("X-RateLimit-Remaining"))
	}
	// Budgets are per class: writes still have theirs.
	if r := s.do("POST", "/v1/experiments", write, themeTestBody("w")); r.status != 201 || r.header.Get("X-RateLimit-Limit") != "2" {
		t.Fatalf("write after reads exhausted = %d limit=%q %s", r.status, r.header.Get("X-RateLimit-Limit"), r.raw)
	}
}

func TestRedisDown(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(c *config.Config) { c.Redis.Addr = deadAddr(t) })
	shop, read, write := s.shop(true)
	if r := s.do("GET", "/v1/experiments", read, ""); r.status != 200 {
		t.Fatalf("read with Redis down = %d %s, want served", r.status, r.raw)
	}
	r := s.do("POST", "/v1/experiments", write, themeTestBody("x"), "X-Correlation-Id", "corr-123")
	wantError(t, r, 503, "api_error", "rate_limit_unavailable", nil)
	if r.errField("request_id") != "corr-123" {
		t.Fatalf("request_id = %v, want the x-correlation-id", r.errField("request_id"))
	}
	if n := s.count(shop.ID); n != 0 {
		t.Fatalf("%d tests created with the limiter down", n)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, write := s.shop(true)
	t.Run("InvalidKey", func(t *testing.T) {
		for _, key := range []string{"", strings.Repeat("k", 256)} {
			r := s.do("POST", "/v1/experiments", write, themeTestBody("x"), "Idempotency-Key", key)
			wantError(t, r, 400, "invalid_request_error", "invalid_idempotency_key", "Idempotency-Key")
		}
	})
	t.Run("RetryReturnsFirstResponse", func(t *testing.T) {
		before := s.count(shop.ID)
		first := s.do("POST", "/v1/experiments", write, themeTestBody("retry"), "Idempotency-Key", "key-retry")
		again := s.do("POST", "/v1/experiments", write, themeTestBody("retry"), "Idempotency-Key", "key-retry")
		if first.status != 201 || again.status != 201 || !bytes.Equal(first.raw, again.raw) {
			t.Fatalf("first %d %s\nagain %d %s", first.status, first.raw, again.status, again.raw)
		}
		if n := s.count(shop.ID); n != before+1 {
			t.Fatalf("tests: %d → %d, want one more", before, n)
		}
		other := s.do("POST", "/v1/experiments", write, themeTestBody("different"), "Idempotency-Key", "key-retry")
		wantError(t, other, 409, "conflict_error", "idempotency_key_in_use", nil)
	})
	t.Run("ConcurrentDoubleCreate", func(t *testing.T) {
		before := s.count(shop.ID)
		var wg sync.WaitGroup
		replies := make([]reply, 8)
		for i := range replies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i] = s.do("POST", "/v1/experiments", write, themeTestBody("race"), "Idempotency-Key", "key-race")
			}()
		}
		wg.Wait()
		var created []byte
		for _, r := range replies {
			switch {
			case r.status == 201 && created == nil:
				created = r.raw
			case r.status == 201 && !bytes.Equal(r.raw, created):
				t.Fatalf("two different 201 bodies:\n%s\n%s", created, r.raw)
			case r.status == 409:
				wantError(t, r, 409, "conflict_error", "idempotency_key_in_use", nil)
			case r.status != 201:
				t.Fatalf("unexpected %d %s", r.status, r.raw)
			}
		}
		if n := s.count(shop.ID); n != before+1 {
			t.Fatalf("tests: %d → %d, want exactly one more", before, n)
		}
	})
}

func TestUnavailableStoresChangeNothing(t *testing.T) {
	t.Parallel()
	t.Run("AuditUnavailable", func(t *testing.T) {
		t.Parallel()
		s := newServer(t)
		shop, _, write := s.shop(true)
		s.exec("ALTER TABLE audit_log RENAME TO audit_log_away")
		r := s.do("POST", "/v1/experiments", write, themeTestBody("x"))
		wantError(t, r, 503, "api_error", "audit_unavailable", nil)
		if n := s.count(shop.ID); n != 0 {
			t.Fatalf("%d tests created without an audit record", n)
		}
	})
	t.Run("IdempotencyUnavailable", func(t *testing.T) {
		t.Parallel()
		s := newServer(t)
		shop, _, write := s.shop(true)
		s.exec("ALTER TABLE idempotency_keys RENAME TO idempotency_keys_away")
		r := s.do("POST", "/v1/experiments", write, themeTestBody("x"), "Idempotency-Key", "k1")
		wantError(t, r, 503, "api_error", "idempotency_unavailable", nil)
		if n := s.count(shop.ID); n != 0 {
			t.Fatalf("%d tests created without a usable key", n)
		}
	})
}

func TestWritesAreAudited(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, write := s.shop(true)
	r := s.do("POST", "/v1/experiments", write, themeTestBody("audited"), "X-Correlation-Id", "corr-audit")
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	entries, err := s.app.DB.FindAuditEntries(context.Background(), shop.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Action == "experiment.create" && e.ResourceID == r.body["id"] && e.Actor == "token" && e.RequestID == "corr-audit" && e.Method == "POST" {
			return
		}
	}
	t.Fatalf("no audit entry for the create among %+v", entries)
}

// TestTokensCommand runs `lift tokens create` and `lift tokens revoke` as a
// person would, and uses the printed secret.
func TestTokensCommand(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, _ := s.shop(true)
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		stdout, stderr, err := s.command(newTokensCmd(), args...)
		if err != nil {
			t.Fatalf("lift tokens %v: %v\n%s", args, err, stderr)
		}
		return stdout, stderr
	}
	stdout, stderr := run("create", "--shop", shop.Domain, "--scope", "read_experiments")
	secret := strings.TrimSpace(stdout)
	if strings.Count(stdout, "\n") != 1 || !experiment.WellFormedSecret(secret) {
		t.Fatalf("stdout must be the secret alone, got %q", stdout)
	}
	if r := s.do("GET", "/v1/experiments", secret, ""); r.status != 200 {
		t.Fatalf("GET with the new token = %d %s", r.status, r.raw)
	}
	var id int64
	if _, err := fmt.Sscanf(stderr, "token %d", &id); err != nil {
		t.Fatalf("stderr %q does not name the token id: %v", stderr, err)
	}
	run("revoke", fmt.Sprint(id))
	wantError(t, s.do("GET", "/v1/experiments", secret, ""), 401, "authentication_error", "token_revoked", nil)
}

// TestIdempotencyKeyHeldByRunningRequest holds a claim as a request still in
// flight would, and checks a retry is told the key is in use.
func TestIdempotencyKeyHeldByRunningRequest(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, write := s.shop(true)
	body := themeTestBody("slow")
	h := sha256.Sum256([]byte("POST /v1/experiments\n" + body))
	res, err := s.app.DB.ClaimIdempotencyKey(context.Background(), shop.ID, "held", h[:], time.Minute, time.Hour)
	if err != nil || res.Outcome != experiment.Claimed {
		t.Fatalf("claim: %v %v", res.Outcome, err)
	}
	r := s.do("POST", "/v1/experiments", write, body, "Idempotency-Key", "held")
	wantError(t, r, 409, "conflict_error", "idempotency_key_in_use", nil)
	if n := s.count(shop.ID); n != 0 {
		t.Fatalf("%d tests created while the key was held", n)
	}
}

// TestMigrateTwiceChangesNothing runs both stores' migrations again on
// migrated databases and compares what is recorded.
func TestMigrateTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := context.Background()
	snapshot := func() (pg int, ch uint64) {
		conn, err := pgx.Connect(ctx, s.cfg.Postgres.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&pg); err != nil {
			t.Fatal(err)
		}
		q := "SELECT count() FROM `" + s.cfg.ClickHouse.Database + "`.schema_migrations"
		if err := s.app.Warehouse.Conn().QueryRow(ctx, q).Scan(&ch); err != nil {
			t.Fatal(err)
		}
		return pg, ch
	}
	pg1, ch1 := snapshot()
	for i := 0; i < 2; i++ {
		if err := s.app.migrate(ctx); err != nil {
			t.Fatalf("migrate #%d: %v", i+1, err)
		}
	}
	if pg2, ch2 := snapshot(); pg1 != pg2 || ch1 != ch2 || pg1 == 0 || ch1 == 0 {
		t.Fatalf("recorded migrations: postgres %d → %d, clickhouse %d → %d", pg1, pg2, ch1, ch2)
	}
}

// TestOpenAPICoversTheRealRouter compares the OpenAPI document with the /v1
// routes the program really mounts (every surface, as lift serve wires them),
// so a resource wired in serve.go cannot go undocumented.
func TestOpenAPICoversTheRealRouter(t *testing.T) {
	t.Parallel()
	// The router newServer built: a second one would start a second
	// ingester on the same WAL directory, which ingest refuses.
	r := newServer(t).engine
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(v1.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" /v1"+path] = true
		}
	}
	param := regexp.MustCompile(`:([a-z_]+)`)
	mounted := map[string]bool{}
	for _, rt := range r.Routes() {
		if strings.HasPrefix(rt.Path, "/v1/") {
			mounted[rt.Method+" "+param.ReplaceAllString(rt.Path, "{$1}")] = true
		}
	}
	for route := range mounted {
		// HEAD is GET's twin on every read route (HTTP's own semantics, so
		// the document lists GET only): each GET must have it.
		if path, ok := strings.CutPrefix(route, "HEAD "); ok {
			if !documented["GET "+path] {
				t.Errorf("HEAD %s is mounted without a documented GET", path)
			}
			continue
		}
		if path, ok := strings.CutPrefix(route, "GET "); ok && !mounted["HEAD "+path] {
			t.Errorf("GET %s has no HEAD twin", path)
		}
		if !documented[route] {
			t.Errorf("mounted but not in api/v1/openapi.json: %s", route)
		}
	}
	for route := range documented {
		if !mounted[route] {
			t.Errorf("documented but not mounted: %s", route)
		}
	}
}

// TestAnalyticsMetadata reads GET /api/ga4/metadata for a group of a real
// test: found with names and the shop's measurement id, else found=false.
func TestAnalyticsMetadata(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, write := s.shop(true)
	r := s.do("POST", "/v1/experiments", write, themeTestBody("Holiday look"))
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id := r.body["id"].(string)
	get := func(group string) map[string]any {
		t.Helper()
		r := s.do("GET", "/api/ga4/metadata?experimentId="+id+"&groupIndex="+group, "", "")
		if r.status != 200 {
			t.Fatalf("metadata = %d %s", r.status, r.raw)
		}
		return r.body
	}
	off := map[string]any{"found": false, "analyticsMeasurementId": ""}
	if diff := cmp.Diff(off, get("1")); diff != "" {
		t.Errorf("feature off (-want +got):\n%s", diff)
	}
	mid := "G-TEST123"
	if _, err := s.app.DB.UpdateShop(context.Background(), shop.ID, store.ShopUpdate{AnalyticsMeasurementID: &mid}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"found": true, "experimentId": id, "experimentName": "Holiday look", "variantId": 1.0,
		"variantName": "Variant", "analyticsMeasurementId": "G-TEST123"}
	if diff := cmp.Diff(want, get("1")); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(off, get("7")); diff != "" {
		t.Errorf("no such group (-want +got):\n%s", diff)
	}
}
