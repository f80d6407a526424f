package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// roleServer is the real program wired as `lift serve --role role` wires
// it, on the shared Postgres, Redis and ClickHouse unless opts point a
// dependency elsewhere.
func roleServer(t *testing.T, role string, opts ...option) *server {
	t.Helper()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Role = role
	cfg.Postgres.URL = lifttest.PostgresURL(t)
	addr, db := lifttest.Redis(t)
	cfg.Redis.Addr, cfg.Redis.DB = addr, db
	cfg.ClickHouse.Addr, cfg.ClickHouse.Database = lifttest.ClickHouse(t)
	cfg.DataDir = t.TempDir()
	for _, o := range opts {
		o(cfg)
	}
	app, err := openApp(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	r, stop, err := app.router(role)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() { srv.Close(); stop(context.Background()) })
	return &server{t: t, app: app, url: srv.URL, cfg: cfg}
}

// TestReadyzPerRole: each role reports only the dependencies it uses; with
// Redis and ClickHouse down an API node is degraded, not unready (reads and
// writes to Postgres still work), and an ingest node, whose WAL takes
// appends, is ready. The body names them without saying where they live or
// what the driver said.
func TestReadyzPerRole(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, role, state string
		checks, listed    []string
	}{
		{"IngestNeedsItsWAL", "ingest", "ready", []string{"postgres", "wal"}, nil},
		{"APIDegraded", "api", "degraded", []string{"clickhouse", "postgres", "redis"}, []string{"clickhouse", "redis"}},
		{"AllDegraded", "all", "degraded", []string{"clickhouse", "postgres", "redis", "wal"}, []string{"clickhouse", "redis"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			deadRedis, deadCH := deadAddr(t), deadAddr(t)
			s := roleServer(t, c.role, func(c *config.Config) { c.Redis.Addr, c.ClickHouse.Addr = deadRedis, deadCH })
			r := s.do("GET", "/readyz", "", "")
			checks, _ := r.body["checks"].(map[string]any)
			var names []string
			for n := range checks {
				names = append(names, n)
			}
			var listed []string
			list, _ := r.body["degraded"].([]any)
			for _, n := range list {
				listed = append(listed, n.(string))
			}
			if r.status != 200 || r.body["status"] != c.state || !sameSet(names, c.checks) || !sameSet(listed, c.listed) || checks["postgres"] != "ok" {
				t.Fatalf("readyz = %d %s, want 200 %s checking %v, degraded %v", r.status, r.raw, c.state, c.checks, c.listed)
			}
			for _, leak := range []string{deadRedis, deadCH, "127.0.0.1", "dial", "refused", "postgres://"} {
				if strings.Contains(string(r.raw), leak) {
					t.Errorf("readyz body names %q: %s", leak, r.raw)
				}
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

// TestShopsCreateFindsExistingSpelling: `lift shops create` with another
// case of an installed domain names the installed shop instead of adding one.
func TestShopsCreateFindsExistingSpelling(t *testing.T) {
	t.Parallel()
	s := roleServer(t, "all")
	domain := lifttest.Name("cli-") + ".myshopify.com"
	shop, err := s.app.DB.CreateShop(context.Background(), experiment.Shop{Domain: domain})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.command(newShopsCmd(), "create", strings.ToUpper(domain[:1])+domain[1:]+".")
	want := fmt.Sprintf("shop %s is already installed (id %d)", domain, shop.ID)
	if err == nil || err.Error() != want {
		t.Fatalf("shops create = %v, want %q", err, want)
	}
	if n := s.countWhere("SELECT count(*) FROM shops WHERE lower(domain) = lower($1)", domain); n != 1 {
		t.Fatalf("%d shops for %s, want 1", n, domain)
	}
}

// TestTrackingWithAnySpellingOfTheShop: the storefront's shop parameter in
// another case or with a trailing dot lands on the installed shop.
func TestTrackingWithAnySpellingOfTheShop(t *testing.T) {
	t.Parallel()
	s := roleServer(t, "all")
	domain := lifttest.Name("track-") + ".myshopify.com"
	shop, err := s.app.DB.CreateShop(context.Background(), experiment.Shop{Domain: domain})
	if err != nil {
		t.Fatal(err)
	}
	spellings := []string{strings.ToUpper(domain), domain + ".", " " + strings.ToUpper(domain[:3]) + domain[3:] + ". "}
	for i, sp := range spellings {
		body := fmt.Sprintf(`{"sessionId":"3f2504e0-4f89-41d3-9a0c-0305e82c33%02d","visitorId":"v-%d","eventType":"page_viewed",
			"source":"webpixel","createdAt":%d,"experimentIds":["9"],"pagePath":"/"}`, i, i, time.Now().UnixMilli())
		r := s.do("POST", "/api/track/event?shop="+url.QueryEscape(sp), "", body, "Content-Type", "application/json")
		if r.status != 202 {
			t.Fatalf("track with shop %q = %d %s", sp, r.status, r.raw)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n uint64
		if err := s.app.Warehouse.Conn().QueryRow(context.Background(),
			"SELECT count() FROM events WHERE shop_id = ? AND event_type = 'page_viewed'", uint64(shop.ID)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == uint64(len(spellings)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events stored for shop %d, want %d", n, shop.ID, len(spellings))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// countWhere runs a count query with one argument on the test's Postgres.
func (s *server) countWhere(sql string, arg any) int {
	s.t.Helper()
	conn, err := pgx.Connect(context.Background(), s.cfg.Postgres.URL)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), sql, arg).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// TestForwardedHeadersNeedATrustedProxy: the country endpoint, looking the
// client up in a real country database (testdata: 192.0.2.0/24 is NZ),
// ignores a forged X-Forwarded-For and CF-IPCountry from a client, and
// believes them from a proxy named in http.trusted_proxies.
func TestForwardedHeadersNeedATrustedProxy(t *testing.T) {
	t.Parallel()
	db, err := filepath.Abs("testdata/country.mmdb")
	if err != nil {
		t.Fatal(err)
	}
	geo := func(c *config.Config) { c.Ingest.GeoIPPath = db }
	untrusted := roleServer(t, "ingest", geo)
	trusted := roleServer(t, "ingest", geo, func(c *config.Config) { c.HTTP.TrustedProxies = []string{"127.0.0.1/32", "::1"} })
	cases := []struct {
		name   string
		s      *server
		header []string
		want   any
	}{
		{"UntrustedForwardedFor", untrusted, []string{"X-Forwarded-For", "192.0.2.10"}, nil},
		{"UntrustedCountryHeader", untrusted, []string{"CF-IPCountry", "JP"}, nil},
		{"TrustedForwardedFor", trusted, []string{"X-Forwarded-For", "192.0.2.10"}, "NZ"},
		{"TrustedCountryHeader", trusted, []string{"CF-IPCountry", "JP"}, "JP"},
		{"TrustedWithoutHeaders", trusted, nil, nil},
	}
	for _, c := range cases {
		r := c.s.do("GET", "/api/public/get-country-code", "", "", c.header...)
		if r.status != 200 || r.body["countryCode"] != c.want {
			t.Errorf("%s: %d %s, want countryCode %v", c.name, r.status, r.raw, c.want)
		}
	}
}

// TestUnauthenticatedBudget: 401s carry the client address's budget for
// refused authentications; once spent the address's failures get 429, while
// a valid token from it still proceeds on its own budget. A forged
// X-Forwarded-For does not buy a fresh budget unless the peer is a trusted
// proxy.
func TestUnauthenticatedBudget(t *testing.T) {
	t.Parallel()
	three := func(c *config.Config) { c.RateLimit.Unauthenticated = 3 }
	limits := func(r reply) string {
		return r.header.Get("X-RateLimit-Limit") + "/" + r.header.Get("X-RateLimit-Remaining")
	}
	t.Run("Untrusted", func(t *testing.T) {
		t.Parallel()
		s := roleServer(t, "api", three)
		_, read, _ := s.shop(true)
		for i, xff := range []string{"", "198.51.100.1", "198.51.100.2"} {
			r := s.do("GET", "/v1/experiments", "", "", "X-Forwarded-For", xff)
			if r.status != 401 || limits(r) != fmt.Sprintf("3/%d", 2-i) || r.header.Get("X-RateLimit-Reset") == "" {
				t.Fatalf("refusal %d: %d with limits %s, want 401 with 3/%d", i+1, r.status, limits(r), 2-i)
			}
		}
		for _, token := range []string{"", "lift_" + strings.Repeat("x", 43)} { // missing, then unknown
			r := s.do("GET", "/v1/experiments", token, "", "X-Forwarded-For", "198.51.100.3")
			if r.status != 429 || r.errField("code") != "rate_limited" || r.errField("type") != "rate_limit_error" ||
				r.header.Get("Retry-After") == "" || limits(r) != "3/0" {
				t.Fatalf("a failure after the budget: %d %s limits %s, want 429 rate_limited with Retry-After and 3/0",
					r.status, r.raw, limits(r))
			}
		}
		// The address's spent budget throttles only failures: a valid token
		// from the same address (another client behind the same NAT) goes
		// on to its own budget.
		for i := range 2 {
			r := s.do("GET", "/v1/experiments", read, "", "X-Forwarded-For", "198.51.100.3")
			if r.status != 200 || limits(r) != fmt.Sprintf("600/%d", 599-i) || r.header.Get("Retry-After") != "" {
				t.Fatalf("a valid token after the budget: %d %s limits %s, want 200 with the token's 600/%d", r.status, r.raw, limits(r), 599-i)
			}
		}
	})
	t.Run("TrustedProxy", func(t *testing.T) {
		t.Parallel()
		s := roleServer(t, "api", three, func(c *config.Config) { c.HTTP.TrustedProxies = []string{"127.0.0.1", "::1"} })
		_, read, _ := s.shop(true)
		for _, xff := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.1"} {
			s.do("GET", "/v1/experiments", "", "", "X-Forwarded-For", xff)
		}
		if r := s.do("GET", "/v1/experiments", "", "", "X-Forwarded-For", "198.51.100.1"); r.status != 401 || limits(r) != "3/0" {
			t.Fatalf("first client's third refusal: %d limits %s, want 401 with 3/0", r.status, limits(r))
		}
		if r := s.do("GET", "/v1/experiments", "", "", "X-Forwarded-For", "198.51.100.2"); r.status != 401 || limits(r) != "3/1" {
			t.Fatalf("second client's second refusal: %d limits %s, want 401 with 3/1", r.status, limits(r))
		}
		if r := s.do("GET", "/v1/experiments", "", "", "X-Forwarded-For", "198.51.100.3"); r.status != 401 || limits(r) != "3/2" {
			t.Fatalf("third client: %d limits %s, want 401 with 3/2", r.status, limits(r))
		}
		if r := s.do("GET", "/v1/experiments", read, "", "X-Forwarded-For", "198.51.100.3"); r.status != 200 || limits(r) != "600/599" {
			t.Fatalf("with a token: %d limits %s, want 200 with the token's 600/599", r.status, limits(r))
		}
	})
}

// TestShopsCreateRefusesBadZoneOrCurrency: `lift shops create` refuses a
// time zone Go cannot load (the shop's dates would be read as UTC without a
// word) and a currency that is not three letters, and installs nothing.
func TestShopsCreateRefusesBadZoneOrCurrency(t *testing.T) {
	t.Parallel()
	s := roleServer(t, "all")
	for _, c := range []struct{ flag, value, want string }{
		{"--timezone", "Mars/Base", `--timezone "Mars/Base" is not an IANA time zone`},
		{"--timezone", "Local", `--timezone "Local" is not an IANA time zone`},
		{"--currency", "EURO", `--currency "EURO" is not an ISO 4217 code`},
		{"--currency", "U$D", `--currency "U$D" is not an ISO 4217 code`},
	} {
		domain := lifttest.Name("cli-") + ".myshopify.com"
		_, _, err := s.command(newShopsCmd(), "create", domain, c.flag, c.value, "--data-dir", t.TempDir())
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("shops create %s %s = %v, want %q", c.flag, c.value, err, c.want)
		}
		if n := s.countWhere("SELECT count(*) FROM shops WHERE domain = $1", domain); n != 0 {
			t.Errorf("%s %s installed the shop anyway", c.flag, c.value)
		}
	}
}
