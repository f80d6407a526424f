package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// TestPurge: old finished idempotency keys and old processed webhook
// deliveries go; running claims, recent rows, unprocessed deliveries and
// a delivery a dead letter still points at stay (ops audit 2, O2-8).
func TestPurge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := lifttest.PostgresURL(t) // migrated already
	db, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	pool := lifttest.Pool(t, url)
	shop := newShop(t, db, "purge.myshopify.com", false)
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-30*24*time.Hour), now.Add(-time.Hour)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	key := `INSERT INTO idempotency_keys (shop_id, key, request_hash, state, claimed_at, completed_at) VALUES ($1, $2, '\x00', $3, $4, $5)`
	exec(key, shop.ID, "old-done", "completed", old, old)
	exec(key, shop.ID, "recent-done", "completed", recent, recent)
	exec(key, shop.ID, "old-running", "running", old, nil)
	delivery := `INSERT INTO webhook_deliveries (shop_id, id, topic, body, received_at, processed_at) VALUES ($1, $2, 'orders/create', '{}', $3, $4)`
	exec(delivery, shop.ID, "old-done", old, old)
	exec(delivery, shop.ID, "old-dead", old, old)
	exec(delivery, shop.ID, "old-waiting", old, nil)
	exec(delivery, shop.ID, "recent-done", recent, recent)
	exec(`INSERT INTO webhook_dead_letters (shop_id, webhook_id, topic, body, last_error, tries, created_at) VALUES ($1, 'old-dead', 'orders/create', '{}', 'x', 5, $2)`, shop.ID, old)

	p, err := db.Purge(ctx, now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if p.IdempotencyKeys != 1 || p.WebhookDeliveries != 1 {
		t.Fatalf("purged %+v, want one key and one delivery", p)
	}
	left := func(table, col string) []string {
		rows, err := pool.Query(ctx, `SELECT `+col+` FROM `+table+` WHERE shop_id = $1 ORDER BY 1`, shop.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	if got := left("idempotency_keys", "key"); len(got) != 2 || got[0] != "old-running" || got[1] != "recent-done" {
		t.Fatalf("keys left %v", got)
	}
	if got := left("webhook_deliveries", "id"); len(got) != 3 || got[0] != "old-dead" || got[1] != "old-waiting" || got[2] != "recent-done" {
		t.Fatalf("deliveries left %v", got)
	}
}
