package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// server is the real program wired as `lift serve --role all` wires it, on
// real Postgres, Redis and ClickHouse, reached over HTTP.
type server struct {
	t      *testing.T
	app    *App
	url    string
	cfg    *config.Config
	engine *gin.Engine // the router serving url
	// stop drains and closes the ingest role (a test that reads what it
	// sent calls it first; cleanup calls it again, which is harmless).
	stop func(context.Context) error
}

type option func(*config.Config)

func newServer(t *testing.T, opts ...option) *server {
	t.Helper()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Postgres.URL = lifttest.PostgresURL(t)
	addr, db := lifttest.Redis(t)
	cfg.Redis.Addr, cfg.Redis.DB = addr, db
	cfg.ClickHouse.Addr, cfg.ClickHouse.Database = lifttest.ClickHouse(t)
	cfg.DataDir = t.TempDir()
	// Tests read back what they just sent; the default flush interval (5 s)
	// spares ClickHouse parts under load (ingest.flushEvery), not latency.
	cfg.Ingest.FlushInterval = 250 * time.Millisecond
	for _, o := range opts {
		o(cfg)
	}
	ctx := context.Background()
	app, err := openApp(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	r, stop, err := app.router("all")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() { srv.Close(); stop(context.Background()) })
	return &server{t: t, app: app, url: srv.URL, cfg: cfg, engine: r, stop: stop}
}

// testDB opens a fresh migrated Postgres database for one test.
func testDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{URL: lifttest.PostgresURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// shop installs a shop with the demo catalog and returns its read and write
// tokens.
func (s *server) shop(apiEnabled bool) (shop *experiment.Shop, read, write string) {
	s.t.Helper()
	ctx := context.Background()
	shop, err := s.app.DB.CreateShop(ctx, experiment.Shop{Domain: lifttest.Name("shop-") + ".myshopify.com"})
	if err != nil {
		s.t.Fatal(err)
	}
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.app.DB.ImportCatalog(ctx, shop.ID, f); err != nil {
		s.t.Fatal(err)
	}
	on := true
	if _, err := s.app.DB.UpdateShop(ctx, shop.ID, store.ShopUpdate{APIEnabled: &on}); err != nil {
		s.t.Fatal(err)
	}
	if _, read, err = s.app.DB.CreateToken(ctx, shop.ID, experiment.ScopeRead); err != nil {
		s.t.Fatal(err)
	}
	if _, write, err = s.app.DB.CreateToken(ctx, shop.ID, experiment.ScopeWrite); err != nil {
		s.t.Fatal(err)
	}
	if !apiEnabled {
		off := false
		if _, err := s.app.DB.UpdateShop(ctx, shop.ID, store.ShopUpdate{APIEnabled: &off}); err != nil {
			s.t.Fatal(err)
		}
	}
	return shop, read, write
}

type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// errField returns error.<name> of the envelope.
func (r reply) errField(name string) any {
	e, _ := r.body["error"].(map[string]any)
	return e[name]
}

func (s *server) do(method, path, token, body string, header ...string) reply {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return s.roundTrip(req)
}

// sessionToken is an admin panel session token for domain, signed as the
// test servers' platform (API key "key", secret "secret") signs them.
func sessionToken(t *testing.T, domain string) string {
	now := time.Now()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "https://" + domain + "/admin",
		"dest": "https://" + domain, "aud": "key", "sub": "1", "exp": now.Add(time.Minute).Unix(), "nbf": now.Unix(),
		"iat": now.Unix(), "jti": "j", "sid": "s"}).SignedString([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// roundTrip sends req and reads the whole answer, its body decoded as JSON
// when it is.
func (s *server) roundTrip(req *http.Request) reply {
	s.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, header: res.Header, raw: raw}
	json.Unmarshal(raw, &r.body)
	return r
}

// wantError checks status, type, code and param of the contract's envelope,
// and that a request_id is present exactly on 5xx.
func wantError(t *testing.T, r reply, status int, typ, code string, param any) {
	t.Helper()
	if r.status != status || r.errField("type") != typ || r.errField("code") != code || r.errField("param") != param {
		t.Fatalf("got %d %s\nwant %d type=%s code=%s param=%v", r.status, r.raw, status, typ, code, param)
	}
	e := r.body["error"].(map[string]any)
	if _, has := e["param"]; !has {
		t.Errorf("param missing from envelope: %s", r.raw)
	}
	if _, has := e["request_id"]; has != (status >= 500) {
		t.Errorf("request_id present=%v on a %d: %s", has, status, r.raw)
	}
}

// count is how many tests the shop has, read straight from Postgres.
func (s *server) count(shopID int64) int {
	s.t.Helper()
	conn, err := pgx.Connect(context.Background(), s.cfg.Postgres.URL)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM experiments WHERE shop_id = $1", shopID).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

func (s *server) exec(sql string) {
	s.t.Helper()
	conn, err := pgx.Connect(context.Background(), s.cfg.Postgres.URL)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		s.t.Fatal(err)
	}
}

// command runs cmd with args as a person would, against s's stores (their
// flags appended), and returns its stdout, its stderr and its error.
func (s *server) command(cmd *cobra.Command, args ...string) (stdout, stderr string, err error) {
	s.t.Helper()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append(args, "--postgres-url="+s.cfg.Postgres.URL, "--redis-addr="+s.cfg.Redis.Addr,
		"--clickhouse-addr="+s.cfg.ClickHouse.Addr, "--clickhouse-database="+s.cfg.ClickHouse.Database,
		"--data-dir="+s.cfg.DataDir)) // else a command's local state lands in cmd/lift/.lift
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = cmd.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}
