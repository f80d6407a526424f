// Package lifttest gives tests real, isolated services: a fresh Postgres
// database migrated to head, a fresh ClickHouse database with every DDL
// statement applied, and a Redis database of their own, each removed when the
// test ends. It starts the local stack (package devstack) when it is not up, so
// `go test ./somepkg/` works on its own; LIFT_POSTGRES_URL, LIFT_REDIS_ADDR and
// LIFT_CLICKHOUSE_ADDR point it at servers that are already running instead.
package lifttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/liftab/lift/devstack"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

var (
	stackOnce sync.Once
	stack     *devstack.Stack
	stackErr  error
)

// Stack returns the addresses of the running services, starting them once
// per test binary if needed.
func Stack(t testing.TB) *devstack.Stack {
	t.Helper()
	stackOnce.Do(func() {
		root, err := devstack.FindRoot(".")
		if err != nil {
			stackErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		stack, stackErr = devstack.Up(ctx, devstack.Options{
			Root:           root,
			PostgresURL:    os.Getenv("LIFT_POSTGRES_URL"),
			RedisAddr:      os.Getenv("LIFT_REDIS_ADDR"),
			ClickHouseAddr: os.Getenv("LIFT_CLICKHOUSE_ADDR"),
		})
	})
	if stackErr != nil {
		t.Fatalf("lifttest: local stack: %v", stackErr)
	}
	return stack
}

// Name returns a fresh database name with the given prefix.
func Name(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// PostgresURL creates a database migrated to head and returns its URL. The
// database is dropped when the test ends.
func PostgresURL(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	base, err := url.Parse(Stack(t).PostgresURL)
	if err != nil {
		t.Fatalf("lifttest: postgres url: %v", err)
	}
	name := Name("lift_test_")
	admin := *base
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		t.Fatalf("lifttest: connect postgres: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("lifttest: create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin.String())
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u := *base
	u.Path = "/" + name
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		t.Fatalf("lifttest: %v", err)
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatalf("lifttest: migrate: %v", err)
	}
	return u.String()
}

// ClickHouse creates a database with every DDL statement applied and returns
// the server address and the database name. It is dropped when the test ends.
func ClickHouse(t testing.TB) (addr, database string) {
	t.Helper()
	addr = Stack(t).ClickHouseAddr
	conn, err := ch.Open(&ch.Options{Addr: []string{addr}, DialTimeout: 5 * time.Second, ReadTimeout: 60 * time.Second})
	if err != nil {
		t.Fatalf("lifttest: clickhouse: %v", err)
	}
	defer conn.Close()
	database = Name("lift_test_")
	if err := warehouse.Migrate(context.Background(), conn, database, ""); err != nil {
		t.Fatalf("lifttest: clickhouse migrate: %v", err)
	}
	t.Cleanup(func() { DropClickHouse(addr, database) })
	return addr, database
}

// ClickHouseConn is ClickHouse plus an open connection to that database,
// closed when the test ends.
func ClickHouseConn(t testing.TB) (driver.Conn, string) {
	t.Helper()
	addr, db := ClickHouse(t)
	conn, err := ch.Open(&ch.Options{Addr: []string{addr}, Auth: ch.Auth{Database: db}, DialTimeout: 5 * time.Second, ReadTimeout: 60 * time.Second})
	if err != nil {
		t.Fatalf("lifttest: clickhouse: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, db
}

// DropClickHouse removes a test database; errors are ignored because the
// database is scratch.
func DropClickHouse(addr, database string) {
	conn, err := ch.Open(&ch.Options{Addr: []string{addr}, DialTimeout: 5 * time.Second, ReadTimeout: 60 * time.Second})
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS `%s`", database))
}

// Redis returns the server address and a database number no other running
// test uses; the database is emptied now and when the test ends.
func Redis(t testing.TB) (addr string, db int) {
	t.Helper()
	addr = Stack(t).RedisAddr
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	n, err := c.Incr(ctx, "lifttest:next_db").Result()
	if err != nil {
		t.Fatalf("lifttest: redis: %v", err)
	}
	db = int(n%255) + 1 // database 0 holds the counter
	flush := func() {
		d := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
		defer d.Close()
		d.FlushDB(context.Background())
	}
	flush()
	t.Cleanup(flush)
	return addr, db
}
