package store

import (
	"context"
	"fmt"
)

// CountDeadLetters counts, across shops, the deliveries the worker gave up
// on that no redelivery has completed since (a completed one deletes its
// dead letter): what an operator alerts on, beside `lift webhooks
// dead-letters`, which lists one shop's.
func (db *DB) CountDeadLetters(ctx context.Context) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_dead_letters`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store.CountDeadLetters: %w", err)
	}
	return n, nil
}
