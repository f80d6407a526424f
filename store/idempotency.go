package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
)

// ClaimIdempotencyKey claims key for a request whose method, path and body
// hash to requestHash. The claim is committed at once so a concurrent request
// with the same key sees it. A claim left running longer than staleAfter (its
// request crashed; writes time out long before) may be taken again, and a
// finished one older than retention is forgotten.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, shopID int64, key string, requestHash []byte, staleAfter, retention time.Duration) (experiment.ClaimResult, error) {
	var res experiment.ClaimResult
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		now := db.Now()
		tag, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (shop_id, key, request_hash, state, claimed_at)
			VALUES ($1, $2, $3, 'running', $4) ON CONFLICT DO NOTHING`, shopID, key, requestHash, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			res.Outcome = experiment.Claimed
			return nil
		}
		var (
			hash      []byte
			state     string
			status    *int
			body      []byte
			claimedAt time.Time
			doneAt    *time.Time
		)
		err = tx.QueryRow(ctx, `SELECT request_hash, state, response_status, response_body, claimed_at, completed_at
			FROM idempotency_keys WHERE shop_id = $1 AND key = $2 FOR UPDATE`, shopID, key).
			Scan(&hash, &state, &status, &body, &claimedAt, &doneAt)
		if err != nil {
			return err
		}
		expired := state == "completed" && doneAt != nil && now.Sub(*doneAt) > retention
		stale := state == "running" && now.Sub(claimedAt) > staleAfter
		switch {
		case expired || stale:
			_, err = tx.Exec(ctx, `UPDATE idempotency_keys SET request_hash = $3, state = 'running', claimed_at = $4,
				response_status = NULL, response_body = NULL, completed_at = NULL WHERE shop_id = $1 AND key = $2`,
				shopID, key, requestHash, now)
			res.Outcome = experiment.Claimed
			return err
		case !bytes.Equal(hash, requestHash):
			res.Outcome = experiment.Mismatch
		case state == "running":
			res.Outcome = experiment.InUse
		default:
			res = experiment.ClaimResult{Outcome: experiment.Replay, Status: *status, Body: body}
		}
		return nil
	})
	if err != nil {
		return experiment.ClaimResult{}, fmt.Errorf("store.ClaimIdempotencyKey: %w", err)
	}
	return res, nil
}

// CompleteIdempotencyKey stores the response of a request that changed
// nothing (a refusal), so a retry gets the same answer. A successful write
// completes its claim inside Write instead.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, c experiment.IdempotencyClaim, status int, body []byte) error {
	if err := completeClaim(ctx, db.pool, c, status, body, db.Now()); err != nil {
		return fmt.Errorf("store.CompleteIdempotencyKey: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey drops a running claim whose request failed on our
// side, so a retry with the same key performs the request afresh.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, c experiment.IdempotencyClaim) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE shop_id = $1 AND key = $2 AND state = 'running'`, c.ShopID, c.Key)
	if err != nil {
		return fmt.Errorf("store.ReleaseIdempotencyKey: %w", err)
	}
	return nil
}

var errClaimLost = errors.New("idempotency claim no longer running")

func completeClaim(ctx context.Context, q querier, c experiment.IdempotencyClaim, status int, body []byte, now time.Time) error {
	tag, err := q.Exec(ctx, `UPDATE idempotency_keys SET state = 'completed', response_status = $3,
		response_body = $4, completed_at = $5 WHERE shop_id = $1 AND key = $2 AND state = 'running'`,
		c.ShopID, c.Key, status, body, now)
	if err == nil && tag.RowsAffected() != 1 {
		err = errClaimLost
	}
	return err
}
