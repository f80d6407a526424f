package config

import (
	"os"
	"path/filepath"
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
