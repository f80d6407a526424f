package main

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/lifttest"
)

// TestExportLinksFromPublicURLAcrossNodes: with http.public_url and a
// shared signing_secret, a download link points at the public URL whatever
// X-Forwarded-Host says, and another node (or this one restarted) honours
// it; an expiry further ahead than 15 minutes is refused.
func TestExportLinksFromPublicURLAcrossNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newServer(t, func(c *config.Config) {
		c.HTTP.PublicURL = "https://lift.example.test/"
		c.SigningSecret = "shared-secret-of-every-node"
	})
	shop, read, _ := a.shop(true)
	started := time.Now().UTC().Add(-time.Hour)
	tt := lifttest.RunningTest(shop.ID, "t", started)
	lifttest.PutTest(t, a.app.DB, tt)
	evil := []string{"X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "http"}
	r := a.do("POST", "/v1/experiments/"+strconv.FormatInt(tt.ID, 10)+"/exports", read, "", evil...)
	if r.status != 202 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id := r.body["id"].(string)
	if err := a.app.results().RunExport(ctx, shop.ID, id, true); err != nil {
		t.Fatal(err)
	}
	r = a.do("GET", "/v1/exports/"+id, read, "", evil...)
	link, _ := r.body["download_url"].(string)
	if r.status != 200 || !strings.HasPrefix(link, "https://lift.example.test/v1/exports/"+id+"/download?") {
		t.Fatalf("download_url = %q (%d %s), want it on http.public_url", link, r.status, r.raw)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}

	// Node B: another process on the same configuration and stores.
	b, err := openApp(ctx, a.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	engine, stop, err := b.router("api")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engine)
	t.Cleanup(func() { srv.Close(); stop(ctx) })
	nodeB := &server{t: t, app: b, url: srv.URL, cfg: a.cfg}
	if got := nodeB.do("GET", u.RequestURI(), "", ""); got.status != 200 || !strings.HasPrefix(string(got.raw), "order_id,") {
		t.Fatalf("node B download = %d %s", got.status, got.raw)
	}

	far := url.Values{"expires": {strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10)}, "signature": {u.Query().Get("signature")}}
	wantError(t, nodeB.do("GET", "/v1/exports/"+id+"/download?"+far.Encode(), "", ""), 400, "invalid_request_error", "invalid_request", "expires")
}

// TestSigningSecret: serve and worker refuse a per-process secret; lift dev
// generates one once and keeps it in its data directory.
func TestSigningSecret(t *testing.T) {
	t.Parallel()
	for _, role := range []string{"api", "all"} {
		a := &App{Config: &config.Config{Role: role}}
		if err := a.serve(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "LIFT_SIGNING_SECRET") {
			t.Errorf("serve --role %s without a signing secret = %v, want a refusal naming LIFT_SIGNING_SECRET", role, err)
		}
	}
	if _, err := (&App{Config: &config.Config{}}).startWorker(context.Background(), time.Second); err == nil {
		t.Error("the worker started without a signing secret")
	}

	dir := filepath.Join(t.TempDir(), "data")
	first, err := devSecret(dir, "signing-secret")
	if err != nil || len(first) < 32 {
		t.Fatalf("devSecret = %q, %v", first, err)
	}
	again, err := devSecret(dir, "signing-secret")
	if err != nil || again != first {
		t.Fatalf("a restart got %q, want the kept %q (%v)", again, first, err)
	}
	st, err := os.Stat(filepath.Join(dir, "signing-secret"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("signing-secret file: %v %v, want mode 0600", st, err)
	}
	if other, _ := devSecret(t.TempDir(), "signing-secret"); other == first {
		t.Fatal("two data directories share a generated secret")
	}
}

// TestExportExpiresAfterRetention: the worker's hourly housekeeping deletes
// an export's file once exports.retention has passed since it completed;
// reading the export then answers the contract's 404 export_not_found,
// saying it expired, never a link to the missing file (ops audit 2, O2-8).
func TestExportExpiresAfterRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newServer(t, func(c *config.Config) { c.Exports.Retention = 48 * time.Hour })
	shop, read, _ := s.shop(true)
	tt := lifttest.RunningTest(shop.ID, "t", time.Now().UTC().Add(-time.Hour))
	lifttest.PutTest(t, s.app.DB, tt)
	r := s.do("POST", "/v1/experiments/"+strconv.FormatInt(tt.ID, 10)+"/exports", read, "")
	if r.status != 202 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id := r.body["id"].(string)
	if err := s.app.results().RunExport(ctx, shop.ID, id, true); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(s.app.exportsDir(), id+".csv")

	if err := s.app.housekeep(ctx, time.Now().Add(47*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if r := s.do("GET", "/v1/exports/"+id, read, ""); r.status != 200 || r.body["download_url"] == nil {
		t.Fatalf("within the retention: %d %s", r.status, r.raw)
	}
	if err := s.app.housekeep(ctx, time.Now().Add(49*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the file is still there after the retention: %v", err)
	}
	r = s.do("GET", "/v1/exports/"+id, read, "")
	wantError(t, r, 404, "not_found_error", "export_not_found", nil)
	if msg, _ := r.errField("message").(string); !strings.Contains(msg, "expired") || !strings.Contains(msg, "2 days") {
		t.Fatalf("message %q, want it to say the export expired", msg)
	}
}
