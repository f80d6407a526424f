package lifttest

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/liftab/lift/migrations"
)

func TestPostgresIsMigratedAndIsolated(t *testing.T) {
	t.Parallel()
	a, b := PostgresURL(t), PostgresURL(t)
	if a == b {
		t.Fatalf("two calls returned one database: %s", a)
	}
	ctx := context.Background()
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	connA, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer connA.Close(ctx)
	var n int
	if err := connA.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(all) {
		t.Fatalf("%d migrations recorded, want %d", n, len(all))
	}
	// A write to one clone is not in the other, nor in the template.
	if _, err := connA.Exec(ctx, "CREATE TABLE only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	connB, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer connB.Close(ctx)
	var found bool
	if err := connB.QueryRow(ctx, "SELECT to_regclass('only_in_a') IS NOT NULL").Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found {
		t.Fatal("a table created in one test database shows in another")
	}
	c := PostgresURL(t)
	connC, err := pgx.Connect(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer connC.Close(ctx)
	if err := connC.QueryRow(ctx, "SELECT to_regclass('only_in_a') IS NOT NULL").Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found {
		t.Fatal("a table created in a clone reached the template")
	}
}

// The template is marked only once migrated, and nobody may connect to it
// (Postgres refuses to clone a database with sessions on it).
func TestPostgresTemplateIsSealed(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/postgres"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var isTemplate, allowConn bool
	if err := conn.QueryRow(ctx, "SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1", template.name).
		Scan(&isTemplate, &allowConn); err != nil {
		t.Fatalf("template %s: %v", template.name, err)
	}
	if !isTemplate || allowConn {
		t.Fatalf("template %s: datistemplate %v, datallowconn %v; want true, false", template.name, isTemplate, allowConn)
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
	for _, db := range []int{a, b} {
		if db < 1 || db >= redisDatabases {
			t.Errorf("database %d is not one of 1–%d that a stock Redis has", db, redisDatabases-1)
		}
	}
}

// A database is leased while its test runs, and free again after.
func TestRedisLeaseIsHeldThenReleased(t *testing.T) {
	t.Parallel()
	var addr, token string
	var db int
	ctx := context.Background()
	t.Run("Holder", func(t *testing.T) {
		addr, db = Redis(t)
		c := goredis.NewClient(&goredis.Options{Addr: addr})
		defer c.Close()
		var err error
		if token, err = c.Get(ctx, leaseKey(db)).Result(); err != nil {
			t.Fatalf("lease of database %d: %v", db, err)
		}
		ttl, err := c.PTTL(ctx, leaseKey(db)).Result()
		if err != nil || ttl <= 0 || ttl > leaseTTL {
			t.Fatalf("lease of database %d: ttl %v, %v; want a live lease of at most %v", db, ttl, err, leaseTTL)
		}
		d := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
		defer d.Close()
		if err := d.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	})
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	// Another test may have leased the database since, under its own token.
	if got, err := c.Get(ctx, leaseKey(db)).Result(); got == token || (err != nil && err != goredis.Nil) {
		t.Fatalf("lease of database %d after the test: %q, %v; want released", db, got, err)
	}
	d := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	defer d.Close()
	if v, err := d.Get(ctx, "k").Result(); err != goredis.Nil && v == "v" {
		t.Fatalf("database %d still holds the finished test's key", db)
	}
}
