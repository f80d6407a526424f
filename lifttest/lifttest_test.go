package lifttest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestPostgresIsMigratedAndIsolated(t *testing.T) {
	t.Parallel()
	a, b := PostgresURL(t), PostgresURL(t)
	if a == b {
		t.Fatalf("two calls returned one database: %s", a)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no migrations recorded")
	}
}

func TestClickHouseHasSchema(t *testing.T) {
	t.Parallel()
	conn, db := ClickHouseConn(t)
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM system.tables WHERE database = ? AND name = 'schema_migrations'", db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("schema_migrations tables in %s: %d", db, n)
	}
}

func TestRedisDatabasesDiffer(t *testing.T) {
	t.Parallel()
	_, a := Redis(t)
	_, b := Redis(t)
	if a == b {
		t.Fatalf("two calls returned database %d", a)
	}
}
