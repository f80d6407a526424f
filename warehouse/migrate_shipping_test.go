package warehouse_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/shopspring/decimal"

	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/warehouse"
)

// TestMigrateAddsShippingOnce: 0430 gives orders written before it
// "shipping not recorded" (0, 0), and a rerun after the ALTER ran but
// before its record was written (a crash between the two) records it
// instead of failing: 18.16 has no ADD COLUMN IF NOT EXISTS.
func TestMigrateAddsShippingOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr, _ := lifttest.ClickHouse(t)
	conn, err := ch.Open(&ch.Options{Addr: []string{addr}, DialTimeout: 5 * time.Second, ReadTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	db := lifttest.Name("lift_shipping_")
	t.Cleanup(func() { lifttest.DropClickHouse(addr, db) })
	oldSchema(t, conn, db, 411)
	// A batch: 18.16 stalls on INSERT … VALUES over the native protocol.
	b, err := conn.PrepareBatch(ctx, fmt.Sprintf("INSERT INTO `%s`.orders (shop_id, experiment_id, order_id, version, revenue, currency)", db))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(int64(1), "1", "old", uint64(1), decimal.NewFromInt(20), "USD"); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	// The crash: the columns are there, 0430 is not recorded.
	if err := conn.Exec(ctx, fmt.Sprintf("ALTER TABLE `%s`.orders ADD COLUMN shipping Decimal(18, 4) DEFAULT 0, "+
		"ADD COLUMN shipping_recorded UInt8 DEFAULT 0", db)); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		if err := warehouse.Migrate(ctx, conn, db, ""); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	var recorded uint64
	if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count() FROM `%s`.schema_migrations WHERE version = 430", db)).
		Scan(&recorded); err != nil || recorded != 1 {
		t.Fatalf("0430 recorded %d times (%v), want 1", recorded, err)
	}
	var shipping decimal.Decimal
	var known uint8
	if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT shipping, shipping_recorded FROM `%s`.orders WHERE order_id = 'old'", db)).
		Scan(&shipping, &known); err != nil {
		t.Fatal(err)
	}
	if !shipping.IsZero() || known != 0 {
		t.Errorf("an order from before 0430: shipping %s, recorded %d; want 0, 0 (not recorded)", shipping, known)
	}
}
