package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// A client that declares a body and stops sending is cut off after
// http.read_timeout, on every surface and before authentication, and never
// gets a 5xx: before, the server waited for the rest for ever.
func TestStalledBodyIsCutOff(t *testing.T) {
	s := newServer(t, func(c *config.Config) { c.HTTP.ReadTimeout = 300 * time.Millisecond })
	srv := s.app.httpServer(s.engine)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for _, path := range []string{"/v1/experiments", "/api/redirect-experiments/create", "/api/webhooks",
		"/api/track/event?shop=stalled.myshopify.com"} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// Two of the hundred bytes declared, then silence.
		conn.Write([]byte("POST " + path + " HTTP/1.1\r\nHost: lift\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{}"))
		conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // far beyond the 300 ms: a hang fails here
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		switch {
		case err != nil && (strings.Contains(err.Error(), "timeout") || strings.Contains(err.Error(), "deadline")):
			t.Errorf("POST %s with a stalled body: no answer and no close in 20 s (%v)", path, err)
		case err == nil && resp.StatusCode >= 500:
			t.Errorf("POST %s with a stalled body: %d", path, resp.StatusCode)
		case err == nil:
			t.Logf("POST %s with a stalled body: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		default:
			t.Logf("POST %s with a stalled body: connection closed (%v)", path, err)
		}
		conn.Close()
	}
}

// serve refuses a Postgres database that lacks this binary's migrations:
// it would report ready and answer 500 to every request.
func TestServeRefusesAnUnmigratedDatabase(t *testing.T) {
	s := newServer(t)
	if _, err := s.app.DB.Pending(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), s.cfg.Postgres.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)"); err != nil {
		t.Fatal(err)
	}
	s.cfg.SigningSecret = "a-signing-secret-of-at-least-thirty-two-bytes"
	s.cfg.HTTP.Addr = "127.0.0.1:0"
	if err := s.app.serve(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "run `lift migrate` first") {
		t.Fatalf("serve on a database one migration behind = %v, want a refusal naming lift migrate", err)
	}
}

// A node whose token key opens none of the stored platform tokens refuses
// to start (the ops audit's node started and answered every launch 500); a
// node without any key does too; one unopened shop among others only warns.
func TestServeRefusesAnotherTokenKey(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.cfg.Postgres.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	seal := func(key []byte, domain string) {
		t.Helper()
		sealer, err := experiment.NewAESSealer(key)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := sealer.Seal([]byte("shpat_" + domain))
		if err != nil {
			t.Fatal(err)
		}
		shop, err := s.app.DB.CreateShop(ctx, experiment.Shop{Domain: domain, Timezone: "UTC"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `UPDATE shops SET access_token_sealed = $1 WHERE id = $2`, sealed, shop.ID); err != nil {
			t.Fatal(err)
		}
	}
	sealing, other := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	if err := s.app.requireTokenKey(ctx); err != nil {
		t.Fatalf("no stored tokens: %v", err)
	}
	seal(sealing, "sealed-a.myshopify.com")
	seal(sealing, "sealed-b.myshopify.com")

	node := func(key []byte) *App {
		cfg := *s.cfg
		cfg.DataDir = t.TempDir()
		if key != nil {
			cfg.Platform.TokenKey = base64.StdEncoding.EncodeToString(key)
		}
		return &App{Config: &cfg, DB: s.app.DB, Log: s.app.Log}
	}
	if err := node(sealing).requireTokenKey(ctx); err != nil {
		t.Fatalf("the sealing key: %v", err)
	}
	if err := node(other).requireTokenKey(ctx); err == nil || !strings.Contains(err.Error(), "opens none of the 2 newest") {
		t.Fatalf("another key = %v, want a refusal", err)
	}
	if err := node(nil).requireTokenKey(ctx); err == nil || !strings.Contains(err.Error(), "no token key") {
		t.Fatalf("no key at all = %v, want a refusal", err)
	}
	// serve runs the check before it listens.
	s.cfg.SigningSecret = "a-signing-secret-of-at-least-thirty-two-bytes"
	s.cfg.HTTP.Addr = "127.0.0.1:0"
	s.cfg.Platform.TokenKey = base64.StdEncoding.EncodeToString(other)
	if err := s.app.serve(ctx, nil); err == nil || !strings.Contains(err.Error(), "opens none") {
		t.Fatalf("serve with another key = %v, want a refusal", err)
	}
	// A shop sealed elsewhere among shops this key opens: start, and warn.
	seal(other, "sealed-elsewhere.myshopify.com")
	logs := &lifttest.Logs{}
	n := node(sealing)
	n.Log = slog.New(slog.NewTextHandler(logs, nil))
	if err := n.requireTokenKey(ctx); err != nil {
		t.Fatalf("one shop sealed elsewhere: %v", err)
	}
	if !strings.Contains(logs.String(), "launch_blocked until the app is reinstalled") {
		t.Fatalf("no warning naming the shop: %s", logs.String())
	}
}

// The error that stops a server is its last log record, in the configured
// format: with JSON logs, every line on stderr is JSON (before, a plain
// "lift: …" line came last, which a JSON log pipeline chokes on).
func TestServeLogsWhyItStopped(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// An ingest node starts without Postgres (TestIngestStartsWithoutPostgres);
	// an API node does not.
	for _, c := range []struct{ name, role, postgres, why string }{
		{"TakenAddress", "ingest", s.cfg.Postgres.URL, "address already in use"},
		{"PostgresDown", "api", "postgres://postgres@" + taken.Addr().String() + "/lift?sslmode=disable&connect_timeout=2", "postgres"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "serve", "--role", c.role, "--http-addr", taken.Addr().String(), "--log-format", "json")
			cmd.Env = append(os.Environ(), liftMainEnv+"=1", "LIFT_POSTGRES_URL="+c.postgres, "LIFT_REDIS_ADDR="+s.cfg.Redis.Addr,
				"LIFT_CLICKHOUSE_ADDR="+s.cfg.ClickHouse.Addr, "LIFT_CLICKHOUSE_DATABASE="+s.cfg.ClickHouse.Database, "LIFT_DATA_DIR="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("serve: %v, want exit status 1\n%s", err, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			for _, l := range lines {
				if !json.Valid([]byte(l)) {
					t.Fatalf("a line that is not JSON: %q\nstderr:\n%s", l, stderr.String())
				}
			}
			var last struct{ Level, Msg, Err string }
			json.Unmarshal([]byte(lines[len(lines)-1]), &last)
			if last.Level != "ERROR" || last.Msg != "lift serve stopped" || !strings.Contains(last.Err, c.why) {
				t.Fatalf("last line %+v, want the reason it stopped (%s)", last, c.why)
			}
		})
	}
}

// A launch for a shop whose stored platform token this node cannot open
// answers the contract's 422 launch_blocked (validation_error, no param),
// naming the fix, and leaves the test a draft: before, it was a 500.
func TestLaunchWithAnotherShopsKeyIsBlocked(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	shop, _, write := s.shop(true)
	ctx := context.Background()
	sealer, err := experiment.NewAESSealer(bytes.Repeat([]byte{7}, 32)) // not this node's key
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := sealer.Seal([]byte("shpat_elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, s.cfg.Postgres.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE shops SET access_token_sealed = $1 WHERE id = $2`, sealed, shop.ID); err != nil {
		t.Fatal(err)
	}
	created := s.do("POST", "/v1/experiments", write, `{"type":"url_redirect","name":"Sale landing","shared":{"url_redirect":{"source_path":"/collections/sale"}},`+
		`"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"New landing","split":50,"content":{"destination":"/pages/sale-2"}}]}`)
	if created.status != 201 {
		t.Fatalf("create = %d %s", created.status, created.raw)
	}
	e := fmt.Sprintf("/v1/experiments/%v", created.body["id"])
	r := s.do("POST", e+"/start", write, "")
	errBody, _ := r.body["error"].(map[string]any)
	if r.status != 422 || errBody["type"] != "validation_error" || errBody["code"] != "launch_blocked" || errBody["param"] != nil ||
		!strings.Contains(fmt.Sprint(errBody["message"]), "reinstall the app") || errBody["request_id"] != nil {
		t.Fatalf("start = %d %s, want 422 launch_blocked naming the reinstall", r.status, r.raw)
	}
	if got := s.do("GET", e, write, ""); got.body["status"] != "draft" {
		t.Fatalf("after the blocked launch the test is %v", got.body["status"])
	}
}
