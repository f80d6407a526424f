package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "lift.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// everyKeyYAML is a lift.yaml that sets every declared key to its default.
func everyKeyYAML() string {
	sections := map[string][]string{}
	var order []string
	var b strings.Builder
	for _, k := range keys {
		v := fmt.Sprintf("%q", fmt.Sprint(k.def))
		section, leaf, nested := strings.Cut(k.name, ".")
		if !nested {
			fmt.Fprintf(&b, "%s: %s\n", k.name, v)
			continue
		}
		if sections[section] == nil {
			order = append(order, section)
		}
		sections[section] = append(sections[section], fmt.Sprintf("  %s: %s\n", leaf, v))
	}
	for _, s := range order {
		b.WriteString(s + ":\n" + strings.Join(sections[s], ""))
	}
	return b.String()
}

// A key the file misspells is refused, named, instead of dropped while
// the server runs on the default (ops audit O2-5); every declared key,
// from the file or from its LIFT_* variable, still loads.
func TestLoadRefusesUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ name, yaml, key string }{
		{"Leaf", "ingest:\n  disk_budgett: 100\n", "ingest.disk_budgett"},
		{"Secret", "clickhouse:\n  pasword: s3cret\n", "clickhouse.pasword"},
		{"FallsBackToADefault", "http:\n  adr: \"127.0.0.1:18181\"\n", "http.adr"},
		{"TopLevel", "rol: api\n", "rol"},
		{"Section", "clikhouse:\n  addr: 127.0.0.1:9000\n", "clikhouse.addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeFile(t, tc.yaml), nil)
			if err == nil || !strings.Contains(err.Error(), "unknown key "+tc.key) {
				t.Fatalf("Load: %v, want an error naming %s", err, tc.key)
			}
		})
	}
	t.Run("EveryKeyInTheFile", func(t *testing.T) {
		if _, err := Load(writeFile(t, everyKeyYAML()), nil); err != nil {
			t.Fatalf("a file setting every key to its default: %v\n%s", err, everyKeyYAML())
		}
	})
	t.Run("EveryKeyInTheEnvironment", func(t *testing.T) {
		for _, k := range keys {
			if d := fmt.Sprint(k.def); d != "" {
				t.Setenv(EnvName(k.name), d)
			}
		}
		if _, err := Load(writeFile(t, "http:\n  addr: \":7000\"\n"), nil); err != nil {
			t.Fatalf("every LIFT_* variable set: %v", err)
		}
	})
}

// The dependency addresses and the platform URL are checked at start: a
// typo used to start a server that failed every call needing them (ops
// audit O2-5).
func TestLoadChecksAddresses(t *testing.T) {
	for _, tc := range []struct {
		env, value, key string // key "": accepted
	}{
		{"LIFT_REDIS_ADDR", "127.0.0.1", "redis.addr"},
		{"LIFT_REDIS_ADDR", "127.0.0.1:0", "redis.addr"},
		{"LIFT_REDIS_ADDR", "127.0.0.1:65536", "redis.addr"},
		{"LIFT_REDIS_ADDR", "127.0.0.1:redis", "redis.addr"},
		{"LIFT_REDIS_ADDR", "redis.internal:6379", ""},
		{"LIFT_REDIS_ADDR", "[::1]:16379", ""},
		{"LIFT_CLICKHOUSE_ADDR", "127.0.0.1:-5", "clickhouse.addr"},
		{"LIFT_CLICKHOUSE_ADDR", "ch.internal", "clickhouse.addr"},
		{"LIFT_CLICKHOUSE_ADDR", "ch.internal:9000", ""},
		{"LIFT_CLICKHOUSE_ADDR", "", ""}, // the local stack's
		{"LIFT_PLATFORM_URL", "htps//platform.example.com", "platform.url"},
		{"LIFT_PLATFORM_URL", "ftp://platform.example.com", "platform.url"},
		{"LIFT_PLATFORM_URL", "https://", "platform.url"},
		{"LIFT_PLATFORM_URL", "platform.example.com", "platform.url"},
		{"LIFT_PLATFORM_URL", "https://platform.example.com", ""},
		{"LIFT_PLATFORM_URL", "http://127.0.0.1:18099/base", ""},
		// A real platform's per-shop host, with the public URL it calls back.
		{"LIFT_PLATFORM_URL", "https://{shop}/admin", "http.public_url"},
		{"LIFT_PLATFORM_URL", "https://{shop/admin", "platform.url"},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			_, err := Load("", nil)
			if tc.key == "" && err != nil {
				t.Fatalf("Load: %v, want it accepted", err)
			}
			if tc.key != "" && (err == nil || !strings.Contains(err.Error(), tc.key)) {
				t.Fatalf("Load: %v, want an error naming %s", err, tc.key)
			}
		})
	}
}

// A real platform is configured as README says: its per-shop host as
// {shop}, with the public URL the install registers (docs audit 2 #1: the
// documented https://{shop}/admin was refused at start).
func TestLoadRealPlatform(t *testing.T) {
	t.Setenv("LIFT_PLATFORM_URL", "https://{shop}/admin")
	t.Setenv("LIFT_HTTP_PUBLIC_URL", "https://lift.example.com")
	c, err := Load("", nil)
	if err != nil {
		t.Fatalf("Load: %v, want https://{shop}/admin accepted", err)
	}
	if c.Platform.URL != "https://{shop}/admin" {
		t.Fatalf("platform.url %q, want https://{shop}/admin", c.Platform.URL)
	}
}

// An empty LIFT_* variable is a value, as an empty key in the file is:
// LIFT_WORKER_METRICS_ADDR= turns the worker's listener off as README says
// (ops audit O2-6: it was read as unset and the worker bound :9091). For a
// key whose default is not empty, empty either means what its help says or
// is refused with the key named, never silently something else.
func TestEmptyEnvironmentVariables(t *testing.T) {
	t.Run("WorkerMetricsOff", func(t *testing.T) {
		t.Setenv("LIFT_WORKER_METRICS_ADDR", "")
		c, err := Load(writeFile(t, "worker:\n  metrics_addr: \"127.0.0.1:9191\"\n"), nil)
		if err != nil || c.Worker.MetricsAddr != "" {
			t.Fatalf("LIFT_WORKER_METRICS_ADDR= over a file's address: %v %q, want empty (no listener)", err, c.Worker.MetricsAddr)
		}
	})
	meaningful := map[string]bool{
		"worker.metrics_addr": true, // serves none
		"postgres.max_conns":  true, // 0: the driver's default
	}
	for _, k := range keys {
		if fmt.Sprint(k.def) == "" || fmt.Sprint(k.def) == "0" || fmt.Sprint(k.def) == "0s" {
			continue // empty is the default
		}
		t.Run(k.name, func(t *testing.T) {
			t.Setenv(EnvName(k.name), "")
			_, err := Load("", nil)
			if meaningful[k.name] && err != nil {
				t.Fatalf("%s= : %v, want it accepted", EnvName(k.name), err)
			}
			if !meaningful[k.name] && (err == nil || !strings.Contains(err.Error(), k.name)) {
				t.Fatalf("%s= : %v, want an error naming %s", EnvName(k.name), err, k.name)
			}
		})
	}
}
