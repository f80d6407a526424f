package warehouse_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/shopspring/decimal"

	"github.com/liftab/lift/clickhouse"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/warehouse"
)

// oldSchema applies the DDL up to version upTo as a release before it did,
// on one node, and records it, so that Migrate then upgrades a database
// that already holds rows.
func oldSchema(t *testing.T, conn driver.Conn, db string, upTo int) {
	t.Helper()
	ctx := context.Background()
	stmts, err := clickhouse.All()
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(ctx, "CREATE DATABASE `"+db+"`"); err != nil {
		t.Fatal(err)
	}
	// As 18.16 renders them: the engine on one node, plain types, no codecs.
	engine := regexp.MustCompile(`\{engine:(\w+\([^)]*\))\}`)
	lowcard, codec := regexp.MustCompile(`\{lowcard:(\w+)\}`), regexp.MustCompile(`\{codec:[^{}]+\}`)
	for _, s := range stmts {
		if s.Version > upTo {
			break
		}
		sql := strings.NewReplacer("{db}", "`"+db+"`", "{on_cluster}", "").Replace(
			codec.ReplaceAllString(lowcard.ReplaceAllString(engine.ReplaceAllString(s.SQL, "$1"), "$1"), ""))
		if err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%04d: %v", s.Version, err)
		}
		b, err := conn.PrepareBatch(ctx, "INSERT INTO `"+db+"`.schema_migrations (version, name, applied_at)")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Append(uint32(s.Version), s.Name, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if err := b.Send(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateOrderAmountsToDecimal: order amounts stored as Float64 by an
// earlier release become Decimal(18,4) with the digits that were sent —
// 19.99 stays 19.99 although ClickHouse's Float64 → Decimal cast truncates
// 19.98999… to 19.9899 (clickhouse/0410, 0411).
func TestMigrateOrderAmountsToDecimal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr, _ := lifttest.ClickHouse(t) // for the address; the test upgrades a database of its own
	conn, err := ch.Open(&ch.Options{Addr: []string{addr}, DialTimeout: 5 * time.Second, ReadTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	db := lifttest.Name("lift_upgrade_")
	t.Cleanup(func() { lifttest.DropClickHouse(addr, db) })
	oldSchema(t, conn, db, 400)

	amounts := []float64{19.99, 12.345, 1500, 2.675, 0.1 + 0.2, 1234567.8901, 0.0001}
	insert := fmt.Sprintf("INSERT INTO `%s`.orders (shop_id, experiment_id, order_id, version, revenue, cost, line_prices, currency)", db)
	b, err := conn.PrepareBatch(ctx, insert)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range amounts {
		if err := b.Append(int64(1), "1", fmt.Sprint(i), uint64(1), a, a, []float64{a, 1}, "USD"); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}

	if err := warehouse.Migrate(ctx, conn, db, ""); err != nil {
		t.Fatal(err)
	}
	var typ string
	if err := conn.QueryRow(ctx, "SELECT type FROM system.columns WHERE database = ? AND table = 'orders' AND name = 'revenue'", db).
		Scan(&typ); err != nil || typ != "Decimal(18, 4)" {
		t.Fatalf("revenue type %q, %v; want Decimal(18, 4)", typ, err)
	}
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT order_id, revenue, cost, line_prices FROM `%s`.orders ORDER BY toUInt32(order_id)", db))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := []string{"19.99", "12.345", "1500", "2.675", "0.3", "1234567.8901", "0.0001"}
	i := 0
	for rows.Next() {
		var id string
		var rev, cost decimal.Decimal
		var lines []decimal.Decimal
		if err := rows.Scan(&id, &rev, &cost, &lines); err != nil {
			t.Fatal(err)
		}
		if rev.String() != want[i] || cost.String() != want[i] || len(lines) != 2 || lines[0].String() != want[i] || lines[1].String() != "1" {
			t.Errorf("order %s: revenue %s, cost %s, lines %v; want %s, %s, [%s 1]", id, rev, cost, lines, want[i], want[i], want[i])
		}
		i++
	}
	if err := rows.Err(); err != nil || i != len(want) {
		t.Fatalf("%d rows, %v", i, err)
	}

	// The version-gated steps (0420–0424): today's types on 18.16, and the
	// step left unrecorded so that it runs once the server is upgraded;
	// LowCardinality on a current server.
	var version, eventType string
	var recorded uint64
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT type FROM system.columns WHERE database = ? AND table = 'events' AND name = 'event_type'", db).
		Scan(&eventType); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count() FROM `%s`.schema_migrations WHERE version = 420", db)).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	wantType, wantRecorded := "LowCardinality(String)", uint64(1)
	if strings.HasPrefix(version, "18.") || strings.HasPrefix(version, "19.") {
		wantType, wantRecorded = "String", 0
	}
	if eventType != wantType || recorded != wantRecorded {
		t.Errorf("server %s: events.event_type %s, 0420 recorded %d times; want %s, %d", version, eventType, recorded, wantType, wantRecorded)
	}

	// Retention: a TTL where the server has one, nothing on 18.16.
	if err := warehouse.ApplyRetention(ctx, conn, db, "", 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	var create string
	if err := conn.QueryRow(ctx, "SELECT create_table_query FROM system.tables WHERE database = ? AND name = 'events'", db).
		Scan(&create); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Contains(create, " TTL created_at + toIntervalDay(30)"), wantRecorded == 1; got != want {
		t.Errorf("server %s: events TTL set %v, want %v: %s", version, got, want, create)
	}
}
