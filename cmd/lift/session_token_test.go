package main

import (
	"bytes"
	"strings"
	"testing"
)

// A node running the built-in fake platform keeps its app secret in the
// data directory, and `lift shops session-token` signs with it: the token
// opens the session API there (docs audit 2 #4: the secret was made anew
// by each process, so no one could sign a token a dev server accepted).
// Not parallel: it drives the shared rootCmd.
func TestSessionTokenCommand(t *testing.T) {
	s := newServer(t) // no platform.api_secret: the fake's, kept in its data_dir
	shop, _, _ := s.shop(true)
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		rootCmd.SetOut(&out)
		rootCmd.SetErr(&errOut)
		rootCmd.SetArgs(args)
		defer rootCmd.SetArgs(nil)
		defer rootCmd.SetOut(nil)
		defer rootCmd.SetErr(nil)
		err := rootCmd.Execute()
		return strings.TrimSpace(out.String()), err
	}

	tok, err := run("shops", "session-token", shop.Domain, "--data-dir", s.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.do("GET", "/api/experiments", tok, ""); r.status != 200 || r.body["status"] != "success" {
		t.Fatalf("GET /api/experiments with the printed token = %d %s, want 200 success", r.status, r.raw)
	}
	// Another data directory holds another secret: its token is refused.
	other, err := run("shops", "session-token", shop.Domain, "--data-dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r := s.do("GET", "/api/experiments", other, ""); r.status != 401 || r.body["message"] != "The session token is not valid." {
		t.Fatalf("a token of another data_dir = %d %s, want 401 The session token is not valid.", r.status, r.raw)
	}
	// A real platform's tokens come from its App Bridge only.
	t.Setenv("LIFT_PLATFORM_URL", "https://{shop}/admin")
	t.Setenv("LIFT_HTTP_PUBLIC_URL", "https://lift.example.com")
	if _, err := run("shops", "session-token", shop.Domain); err == nil || !strings.Contains(err.Error(), "App Bridge") {
		t.Fatalf("with a real platform: %v, want a refusal naming App Bridge", err)
	}
}
