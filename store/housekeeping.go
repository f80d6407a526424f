package store

import (
	"context"
	"fmt"
	"time"
)

// Purged counts what one Purge deleted.
type Purged struct {
	IdempotencyKeys, WebhookDeliveries int64
}

// DeliveryRetention is how long a processed webhook delivery is kept: its
// row refuses a redelivery of the same id, and platforms redeliver for two
// days at most, so a week leaves room.
const DeliveryRetention = 7 * 24 * time.Hour

// Purge deletes what Postgres keeps only for a while, so the tables do not
// grow for ever (ops audit 2, O2-8): finished idempotency keys older than
// keys (a retry after that is a new request: it could no longer replay),
// processed webhook deliveries older than DeliveryRetention unless a dead
// letter still points at their body (a replay reads it). Running claims
// and unprocessed deliveries stay. (Install states go as new ones are
// issued.)
func (db *DB) Purge(ctx context.Context, now time.Time, keys time.Duration) (Purged, error) {
	var p Purged
	for _, step := range []struct {
		n   *int64
		sql string
		at  time.Time
	}{
		{&p.IdempotencyKeys, `DELETE FROM idempotency_keys WHERE state = 'completed' AND completed_at < $1`, now.Add(-keys)},
		{&p.WebhookDeliveries, `DELETE FROM webhook_deliveries d WHERE processed_at < $1
			AND NOT EXISTS (SELECT 1 FROM webhook_dead_letters l WHERE l.shop_id = d.shop_id AND l.webhook_id = d.id)`, now.Add(-DeliveryRetention)},
	} {
		tag, err := db.pool.Exec(ctx, step.sql, step.at)
		if err != nil {
			return p, fmt.Errorf("store.Purge: %w", err)
		}
		*step.n = tag.RowsAffected()
	}
	return p, nil
}
