package main

import (
	"context"
	"strings"
	"testing"

	"github.com/liftab/lift/config"
)

// describePostgres never prints a password, in any form pgx accepts, and
// still names where it tried to connect (ops audit O2-4: the keyword/value
// and ?password= forms were printed whole in startup errors).
func TestDescribePostgresHidesThePassword(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, dsn, want string }{
		{"URLUserinfo", "postgres://app:Secret1@db.internal:5433/lift?sslmode=disable",
			"host=db.internal port=5433 dbname=lift user=app"},
		{"URLQuery", "postgres://app@db.internal/lift?sslmode=disable&password=Secret1",
			"host=db.internal port=5432 dbname=lift user=app"},
		{"URLBoth", "postgresql://app:Secret1@db.internal/lift?password=Secret1&sslpassword=Secret1",
			"host=db.internal port=5432 dbname=lift user=app"},
		{"KeyValue", "host=127.0.0.1 port=1 user=postgres password=Secret1 dbname=x sslmode=disable",
			"host=127.0.0.1 port=1 dbname=x user=postgres"},
		{"KeyValueQuoted", `host=db user=app password='Secret1 with \' quote' dbname=lift`,
			"host=db port=5432 dbname=lift user=app"},
		{"KeyValueSpaced", "host = db password = Secret1 user=app dbname=lift",
			"host=db port=5432 dbname=lift user=app"},
		{"Unparseable", "postgres://app:Secret1@db:notaport/lift", "(postgres.url does not parse)"},
		{"NoPassword", "postgres://postgres@127.0.0.1:54329/lift", "host=127.0.0.1 port=54329 dbname=lift user=postgres"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := describePostgres(c.dsn)
			if got != c.want || strings.Contains(got, "Secret1") {
				t.Errorf("describePostgres(%q) = %q, want %q", c.dsn, got, c.want)
			}
		})
	}
}

// The startup error of every command that opens Postgres names the server
// it could not reach, not its password.
func TestOpenAppErrorHidesThePassword(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir() // the built-in fake platform keeps its secret there
	cfg.Postgres.URL = "host=127.0.0.1 port=1 user=postgres password=TopSecret1 dbname=x sslmode=disable connect_timeout=2"
	a, err := openApp(context.Background(), cfg)
	if err == nil {
		a.Close()
		t.Fatal("openApp reached a Postgres on port 1")
	}
	if msg := err.Error(); strings.Contains(msg, "TopSecret1") || !strings.Contains(msg, "host=127.0.0.1 port=1") {
		t.Errorf("openApp error = %q, want the host without the password", msg)
	}
}
