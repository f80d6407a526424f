package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
)

// Write is the one way Lift changes Postgres on behalf of someone. In a single
// transaction it runs fn, records the audit entry, and completes the request's
// Idempotency-Key claim with the response — so a write is never performed
// without its audit record, and a retried create never performs it twice.
//
// Errors: whatever fn returns (rolled back); KindUnavailable audit_unavailable
// when the audit record cannot be written (nothing performed); KindUnavailable
// internal_error when the write could not run alongside other changes (lock
// or serialization conflict; nothing attempted); KindTimeout internal_error
// when it took longer than the write timeout (rolled back).
func (db *DB) Write(ctx context.Context, meta experiment.WriteMeta, fn func(ctx context.Context, tx *Tx) (experiment.WriteResult, error)) (res experiment.WriteResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, db.writeTimeout)
	defer cancel()
	defer func() { err = translateWriteError(ctx, err) }()

	pgtx, err := db.pool.Begin(ctx)
	if err != nil {
		return res, fmt.Errorf("store.Write %s: begin: %w", meta.Action, err)
	}
	defer pgtx.Rollback(context.WithoutCancel(ctx))
	// Waiting long on another writer's lock is worse than failing fast with a
	// retryable 503: nothing has been attempted yet.
	if _, err := pgtx.Exec(ctx, "SET LOCAL lock_timeout = '3s'"); err != nil {
		return res, fmt.Errorf("store.Write %s: %w", meta.Action, err)
	}
	tx := &Tx{tx: pgtx, now: db.Now()}
	res, err = fn(ctx, tx)
	if err != nil {
		return res, err
	}
	if res.ShopID == 0 {
		res.ShopID = meta.ShopID
	}
	if err := writeAudit(ctx, tx, meta, res, experiment.ActorFrom(ctx)); err != nil {
		return res, experiment.Errorf(experiment.KindUnavailable, "audit_unavailable",
			"The change could not be recorded in the audit log, so it was not performed. Retry later.")
	}
	if c, ok := experiment.ClaimFrom(ctx); ok {
		if err := completeClaim(ctx, pgtx, c, res.Status, res.Body, tx.now); err != nil {
			return res, fmt.Errorf("store.Write %s: complete idempotency key: %w", meta.Action, err)
		}
	}
	if err := pgtx.Commit(ctx); err != nil {
		return res, fmt.Errorf("store.Write %s: commit: %w", meta.Action, err)
	}
	return res, nil
}

func translateWriteError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := experiment.AsError(err); ok {
		return err
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || sqlState(err) == "57014":
		return experiment.Errorf(experiment.KindTimeout, "internal_error",
			"The write took too long and was rolled back; nothing changed. Retry.")
	case sqlState(err) == "55P03" || sqlState(err) == "40001" || sqlState(err) == "40P01":
		return experiment.Errorf(experiment.KindUnavailable, "internal_error",
			"The write could not run alongside other changes; nothing was attempted. Retry.")
	}
	return err
}

func writeAudit(ctx context.Context, tx *Tx, meta experiment.WriteMeta, res experiment.WriteResult, a experiment.Actor) error {
	var tokenID *int64
	if a.TokenID != 0 {
		tokenID = &a.TokenID
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO audit_log
		(shop_id, actor, token_id, action, resource_type, resource_id, request_id, method, path, created_at, reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		res.ShopID, a.Name, tokenID, meta.Action, meta.ResourceType, res.ResourceID, a.RequestID, a.Method, a.Path, tx.now,
		meta.Reason)
	return err
}

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	ID           int64
	ShopID       int64
	Actor        string
	TokenID      *int64
	Action       string
	ResourceType string
	ResourceID   string
	RequestID    string
	Method       string
	Path         string
	CreatedAt    time.Time
	Reason       string // why, for a write no person asked for (an automatic pause)
}

// FindAuditEntries returns a shop's audit log, newest first.
func (db *DB) FindAuditEntries(ctx context.Context, shopID int64, limit int) ([]AuditEntry, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, shop_id, actor, token_id, action, resource_type, resource_id,
		request_id, method, path, created_at, reason FROM audit_log WHERE shop_id = $1 ORDER BY id DESC LIMIT $2`, shopID, limit)
	if err != nil {
		return nil, fmt.Errorf("store.FindAuditEntries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditEntry, error) {
		var e AuditEntry
		err := r.Scan(&e.ID, &e.ShopID, &e.Actor, &e.TokenID, &e.Action, &e.ResourceType, &e.ResourceID,
			&e.RequestID, &e.Method, &e.Path, &e.CreatedAt, &e.Reason)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store.FindAuditEntries: %w", err)
	}
	return out, nil
}

// schedulerLock is the advisory lock key of the scheduler leader.
const schedulerLock = 0x6c696674_0007 // "lift" + 7

// Lead implements jobs.Leader: fn runs inside a transaction holding the
// scheduler's advisory lock, so one process at a time leads and a crashed
// leader frees the lock with its connection.
func (db *DB) Lead(ctx context.Context, fn func(ctx context.Context) error) (bool, error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("store.Lead: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var leader bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", int64(schedulerLock)).Scan(&leader); err != nil {
		return false, fmt.Errorf("store.Lead: lock: %w", err)
	}
	if !leader {
		return false, nil
	}
	if err := fn(ctx); err != nil {
		return true, err
	}
	return true, tx.Commit(ctx)
}
