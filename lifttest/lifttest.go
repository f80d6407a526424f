// Package lifttest gives tests real, isolated services: a fresh Postgres
// database cloned from a template migrated to head (postgres.go), a fresh
// ClickHouse database with every DDL statement applied, and a Redis database
// leased for the test (redis.go), each removed or released when the test
// ends. It starts the local stack (package devstack) when it is not up, so
// `go test ./somepkg/` works on its own; LIFT_POSTGRES_URL, LIFT_REDIS_ADDR and
// LIFT_CLICKHOUSE_ADDR point it at servers that are already running instead.
package lifttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/devstack"
	"github.com/liftab/lift/experiment"
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

// DB opens the store on a fresh migrated Postgres database of the test's
// own (PostgresURL) and closes it when the test ends.
func DB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{URL: PostgresURL(t)})
	if err != nil {
		t.Fatalf("lifttest: open the store: %v", err)
	}
	t.Cleanup(db.Close)
	return db
}

// InstallShop installs a shop as the OAuth callback does (store.InstallRepo),
// with what in says (a sealed platform token, say).
func InstallShop(t testing.TB, db *store.DB, in experiment.ShopInstall) *experiment.Shop {
	t.Helper()
	var s *experiment.Shop
	_, err := store.InstallRepo{DB: db}.Write(context.Background(), experiment.WriteMeta{Action: "shop.install", ResourceType: "shop"},
		func(ctx context.Context, tx experiment.InstallTx) (experiment.WriteResult, error) {
			var err error
			s, err = tx.InstallShop(ctx, in)
			return experiment.WriteResult{}, err
		})
	if err != nil {
		t.Fatalf("lifttest: install %s: %v", in.Domain, err)
	}
	return s
}

// UninstallShop marks a shop uninstalled, as APP_UNINSTALLED does.
func UninstallShop(t testing.TB, db *store.DB, shopID int64) {
	t.Helper()
	_, err := db.Write(context.Background(), experiment.WriteMeta{ShopID: shopID, Action: "shop.uninstall", ResourceType: "shop"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{}, tx.UninstallShop(ctx, shopID)
		})
	if err != nil {
		t.Fatalf("lifttest: uninstall %d: %v", shopID, err)
	}
}

// PutTest writes t to db as it is (any status, any timestamps), the way a
// fixture needs a test the use cases would never produce in one step. It goes
// through the store's audited unit of work like every other write.
func PutTest(t testing.TB, db *store.DB, tt *experiment.Test) {
	t.Helper()
	_, err := db.Write(context.Background(), experiment.WriteMeta{ShopID: tt.ShopID, Action: "fixture.put_test", ResourceType: "experiment"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			if tt.ID == 0 {
				return experiment.WriteResult{}, tx.CreateTest(ctx, tt)
			}
			return experiment.WriteResult{}, tx.SaveTest(ctx, tt)
		})
	if err != nil {
		t.Fatalf("lifttest: put test: %v", err)
	}
}

// RunningTest is the fixture most tests start from: an active URL-redirect
// test of the shop, Control against Variant at 50/50 on all traffic,
// started at started. Put it with PutTest.
func RunningTest(shopID int64, name string, started time.Time) *experiment.Test {
	return &experiment.Test{ShopID: shopID, Type: experiment.TypeURLRedirect, Status: experiment.StatusActive, Name: name,
		TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Groups:    []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}},
		CreatedAt: started, UpdatedAt: started, StartedAt: &started}
}

// Pool opens a pgx pool on a database PostgresURL made, for tests that look
// below the ports (lock waits, hand-made rows); closed when the test ends.
func Pool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("lifttest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}
