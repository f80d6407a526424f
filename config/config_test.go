package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestLoadPrecedence checks defaults < file < environment < flags, one key at
// each level so a wrong order shows as a wrong value.
func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lift.yaml")
	yaml := "http:\n  addr: \":7000\"\nratelimit:\n  reads: 5\n  writes: 6\nclickhouse:\n  database: fromfile\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LIFT_RATELIMIT_WRITES", "7")
	t.Setenv("LIFT_CLICKHOUSE_DATABASE", "fromenv")

	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	BindFlags(fs)
	if err := fs.Parse([]string{"--clickhouse-database=fromflag"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(file, fs)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"default", c.RateLimit.Queries, 30},
		{"default duration", c.RateLimit.Window, 60 * time.Second},
		{"file", c.HTTP.Addr, ":7000"},
		{"file over default", c.RateLimit.Reads, 5},
		{"env over file", c.RateLimit.Writes, 7},
		{"flag over env", c.ClickHouse.Database, "fromflag"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestLoadRejectsBadRole(t *testing.T) {
	t.Setenv("LIFT_ROLE", "everything")
	if _, err := Load("", nil); err == nil {
		t.Fatal("role everything: want an error, got none")
	}
}

func TestEnvName(t *testing.T) {
	if got := EnvName("clickhouse.addr"); got != "LIFT_CLICKHOUSE_ADDR" {
		t.Fatalf("EnvName = %q", got)
	}
}

func TestTrustedProxies(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lift.yaml")
	if err := os.WriteFile(file, []byte("http:\n  trusted_proxies: [\"10.0.0.0/8\", \"::1\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, env string
		want            []string
		wantErr         bool
	}{
		{"DefaultTrustsNone", "", "", nil, false},
		{"EnvCommaSeparated", "", "10.0.0.0/8, 192.168.1.7 ,", []string{"10.0.0.0/8", "192.168.1.7"}, false},
		{"FileList", file, "", []string{"10.0.0.0/8", "::1"}, false},
		{"NotAnAddress", "", "10.0.0.0/8,proxy.internal", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LIFT_HTTP_TRUSTED_PROXIES", tc.env)
			if tc.env == "" {
				os.Unsetenv("LIFT_HTTP_TRUSTED_PROXIES") // an empty variable is a value, which would hide the file's; t.Setenv restores it
			}
			c, err := Load(tc.file, nil)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Load: %v, want error %v", err, tc.wantErr)
			}
			if err == nil && fmt.Sprint(c.HTTP.TrustedProxies) != fmt.Sprint(tc.want) {
				t.Fatalf("trusted proxies %q, want %q", c.HTTP.TrustedProxies, tc.want)
			}
		})
	}
}

// TestKebabFlags: every key's flag is kebab case and sets the key; the key
// and its environment name keep their underscores.
func TestKebabFlags(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	BindFlags(fs)
	err := fs.Parse([]string{"--data-dir=/tmp/x", "--http-max-body-bytes=1234", "--http-trusted-proxies=10.0.0.0/8", "--log-level=debug"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load("", fs)
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/tmp/x" || c.HTTP.MaxBodyBytes != 1234 || fmt.Sprint(c.HTTP.TrustedProxies) != "[10.0.0.0/8]" || c.Log.Level != "debug" {
		t.Fatalf("flags did not set their keys: %+v", c)
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.Contains(f.Name, "_") || strings.Contains(f.Name, ".") {
			t.Errorf("flag --%s is not kebab case", f.Name)
		}
	})
	if got := EnvName("http.max_body_bytes"); got != "LIFT_HTTP_MAX_BODY_BYTES" {
		t.Errorf("EnvName = %q", got)
	}
	if fs.Lookup("data-dir").Hidden || !fs.Lookup("http-max-body-bytes").Hidden {
		t.Errorf("want --data-dir shown and --http-max-body-bytes hidden in --help")
	}
}

func TestLogSettings(t *testing.T) {
	tests := []struct {
		format, level string
		ok            bool
	}{
		{"", "info", true},
		{"json", "debug", true},
		{"text", "WARN", true},
		{"logfmt", "info", false},
		{"json", "verbose", false},
	}
	for _, tc := range tests {
		t.Run(tc.format+"/"+tc.level, func(t *testing.T) {
			t.Setenv("LIFT_LOG_FORMAT", tc.format)
			t.Setenv("LIFT_LOG_LEVEL", tc.level)
			if _, err := Load("", nil); (err == nil) != tc.ok {
				t.Fatalf("Load: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestIngestFlushInterval(t *testing.T) {
	tests := []struct {
		env  string
		want time.Duration // 0: refused
	}{
		{"", 5 * time.Second},
		{"250ms", 250 * time.Millisecond},
		{"5m", 5 * time.Minute},
		{"5ms", 0},
		{"6m", 0},
		{"-1s", 0},
	}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("LIFT_INGEST_FLUSH_INTERVAL", tc.env)
			}
			cfg, err := Load("", nil)
			switch {
			case tc.want == 0 && err == nil:
				t.Fatalf("Load: flush interval %s accepted", cfg.Ingest.FlushInterval)
			case tc.want != 0 && err != nil:
				t.Fatalf("Load: %v", err)
			case tc.want != 0 && cfg.Ingest.FlushInterval != tc.want:
				t.Fatalf("flush interval %s, want %s", cfg.Ingest.FlushInterval, tc.want)
			}
		})
	}
}

// A value a typo would turn into a server that starts and then misbehaves
// is refused at start, naming its key.
func TestLoadRefusesBadLimits(t *testing.T) {
	for _, tc := range []struct{ env, value, key string }{
		{"LIFT_POSTGRES_MAX_CONNS", "-1", "postgres.max_conns"},
		{"LIFT_REDIS_DB", "16", "redis.db"},
		{"LIFT_REDIS_DB", "-1", "redis.db"},
		{"LIFT_CLICKHOUSE_RETENTION", "-24h", "clickhouse.retention"},
		{"LIFT_EXPORTS_RETENTION", "-1h", "exports.retention"},
		{"LIFT_JOBS_CATALOG_REFRESH_EVERY", "-24h", "jobs.catalog_refresh_every"},
		{"LIFT_JOBS_CATALOG_REFRESH_EVERY", "10m", "jobs.catalog_refresh_every"},
		{"LIFT_JOBS_RELEASE_AFTER", "-24h", "jobs.release_after"},
		{"LIFT_JOBS_RELEASE_AFTER", "1h", "jobs.release_after"},
		{"LIFT_IDEMPOTENCY_STALE_AFTER", "-1s", "idempotency.stale_after"},
		{"LIFT_IDEMPOTENCY_STALE_AFTER", "5s", "idempotency.stale_after"},
		{"LIFT_IDEMPOTENCY_RETENTION", "1m", "idempotency.retention"},
		{"LIFT_INGEST_DISK_BUDGET", "1000", "ingest.disk_budget"},
		{"LIFT_HTTP_READ_TIMEOUT", "0s", "http.read_timeout"},
		{"LIFT_HTTP_REQUEST_TIMEOUT", "5s", "http.request_timeout"},
		{"LIFT_HTTP_WRITE_TIMEOUT", "-1s", "http.write_timeout"},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			if _, err := Load("", nil); err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("Load: %v, want an error naming %s", err, tc.key)
			}
		})
	}
	if _, err := Load("", nil); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
}

// TestCatalogRefreshEvery: a day by default, 0 turns the refresh off, an
// hour or more is taken as set.
func TestCatalogRefreshEvery(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
	}{{"", 24 * time.Hour}, {"0s", 0}, {"1h", time.Hour}, {"168h", 7 * 24 * time.Hour}} {
		t.Run(tc.env, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("LIFT_JOBS_CATALOG_REFRESH_EVERY", tc.env)
			}
			c, err := Load("", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Jobs.CatalogRefreshEvery; got != tc.want {
				t.Fatalf("jobs.catalog_refresh_every = %s, want %s", got, tc.want)
			}
		})
	}
}
