package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/liftab/lift/config"
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

// TestReadyzPerRole: each role reports only the dependencies it uses, and
// the body names them without saying where they live or what the driver said.
func TestReadyzPerRole(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, role  string
		status      int
		checks      []string
		unavailable []string
	}{
		{"IngestIgnoresWarehouseAndRedis", "ingest", 200, []string{"postgres"}, nil},
		{"APINamesBoth", "api", 503, []string{"clickhouse", "postgres", "redis"}, []string{"clickhouse", "redis"}},
		{"AllNamesBoth", "all", 503, []string{"clickhouse", "postgres", "redis"}, []string{"clickhouse", "redis"}},
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
			var unavailable []string
			list, _ := r.body["unavailable"].([]any)
			for _, n := range list {
				unavailable = append(unavailable, n.(string))
			}
			if r.status != c.status || !sameSet(names, c.checks) || !sameSet(unavailable, c.unavailable) || checks["postgres"] != "ok" {
				t.Fatalf("readyz = %d %s, want %d checking %v, unavailable %v", r.status, r.raw, c.status, c.checks, c.unavailable)
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
