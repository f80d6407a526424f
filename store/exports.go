package store

import (
	"context"
	"fmt"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
)

const exportColumns = `id, shop_id, experiment_id, status, row_count, file, failure, created_at, started_at, completed_at, expired_at`

func scanExport(row scanner) (*results.Export, error) {
	var e results.Export
	err := row.Scan(&e.ID, &e.ShopID, &e.ExperimentID, &e.Status, &e.RowCount, &e.File, &e.Failure,
		&e.CreatedAt, &e.StartedAt, &e.CompletedAt, &e.ExpiredAt)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// CreateExport records a pending export in tx; e.CreatedAt is set to the
// transaction's time. It holds the export's lock until tx ends, so a job
// queued inside tx (before it commits) waits for the commit in StartExport
// instead of finding nothing.
func (tx *Tx) CreateExport(ctx context.Context, e *results.Export) error {
	e.Status, e.CreatedAt = results.ExportPending, tx.now
	if err := lockExport(ctx, tx, e.ID); err != nil {
		return fmt.Errorf("store.CreateExport %s: %w", e.ID, err)
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO exports (id, shop_id, experiment_id, status, created_at)
		VALUES ($1, $2, $3, $4, $5)`, e.ID, e.ShopID, e.ExperimentID, e.Status, e.CreatedAt)
	if err != nil {
		return fmt.Errorf("store.CreateExport %s: %w", e.ID, err)
	}
	return nil
}

// FindExport returns the shop's export, or KindNotFound export_not_found
// (also when the export belongs to another shop).
func (db *DB) FindExport(ctx context.Context, shopID int64, id string) (*results.Export, error) {
	e, err := scanExport(db.pool.QueryRow(ctx, `SELECT `+exportColumns+` FROM exports WHERE shop_id = $1 AND id = $2`, shopID, id))
	if err != nil {
		return nil, fmt.Errorf("store.FindExport %s: %w", id, notFound(err, "export_not_found", "No export %s exists.", id))
	}
	return e, nil
}

// FindExportByID returns any shop's export, for the signed download link
// and the export job, or KindNotFound export_not_found.
func (db *DB) FindExportByID(ctx context.Context, id string) (*results.Export, error) {
	e, err := scanExport(db.pool.QueryRow(ctx, `SELECT `+exportColumns+` FROM exports WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("store.FindExportByID %s: %w", id, notFound(err, "export_not_found", "No export %s exists.", id))
	}
	return e, nil
}

// StartExport moves a pending (or retried running) export to running and
// returns it. A completed or failed export is returned unchanged, so a
// redelivered job does nothing. It first waits for the transaction that
// creates the export, if one is still open. Returns KindNotFound
// export_not_found.
func (tx *Tx) StartExport(ctx context.Context, shopID int64, id string) (*results.Export, error) {
	if err := lockExport(ctx, tx, id); err != nil {
		return nil, fmt.Errorf("store.StartExport %s: %w", id, err)
	}
	out, err := scanExport(tx.tx.QueryRow(ctx, `UPDATE exports SET status = 'running', started_at = COALESCE(started_at, $3)
		WHERE shop_id = $1 AND id = $2 AND status IN ('pending', 'running') RETURNING `+exportColumns, shopID, id, tx.now))
	if err == nil {
		return out, nil
	}
	if out, err = scanExport(tx.tx.QueryRow(ctx, `SELECT `+exportColumns+` FROM exports WHERE shop_id = $1 AND id = $2`, shopID, id)); err != nil {
		return nil, fmt.Errorf("store.StartExport %s: %w", id, notFound(err, "export_not_found", "No export %s exists.", id))
	}
	return out, nil
}

// CompleteExport marks a running export completed with its file and rows.
func (tx *Tx) CompleteExport(ctx context.Context, shopID int64, id, file string, rows int64) error {
	return tx.finishExport(ctx, shopID, id, "CompleteExport", `UPDATE exports SET status = 'completed', file = $3,
		row_count = $4, completed_at = $5 WHERE shop_id = $1 AND id = $2 AND status = 'running'`, file, rows)
}

// FailExport marks an export failed with the reason.
func (tx *Tx) FailExport(ctx context.Context, shopID int64, id, reason string) error {
	return tx.finishExport(ctx, shopID, id, "FailExport", `UPDATE exports SET status = 'failed', failure = $3,
		completed_at = $4 WHERE shop_id = $1 AND id = $2 AND status IN ('pending', 'running')`, reason)
}

func (tx *Tx) finishExport(ctx context.Context, shopID int64, id, op, sql string, args ...any) error {
	tag, err := tx.tx.Exec(ctx, sql, append([]any{shopID, id}, append(args, tx.now)...)...)
	if err != nil {
		return fmt.Errorf("store.%s %s: %w", op, id, err)
	}
	if tag.RowsAffected() == 0 {
		return experiment.Errorf(experiment.KindConflict, "export_not_running", "export %s is not running", id)
	}
	return nil
}

// ExpireExports marks the exports completed before `before` expired at at,
// keeping their file names, and returns them together with the exports an
// earlier run marked and whose file it did not delete (ForgetExportFile was
// not reached). Marking first means no completed export ever points at a
// deleted file.
func (db *DB) ExpireExports(ctx context.Context, before, at time.Time) ([]*results.Export, error) {
	// The statements of one query share a snapshot: the second SELECT does
	// not see the rows the UPDATE marks, so none is returned twice.
	rows, err := db.pool.Query(ctx, `WITH marked AS (
			UPDATE exports SET status = 'expired', expired_at = $2
			WHERE status = 'completed' AND completed_at < $1 RETURNING `+exportColumns+`)
		SELECT `+exportColumns+` FROM marked
		UNION ALL SELECT `+exportColumns+` FROM exports WHERE status = 'expired' AND file <> ''`, before, at)
	if err != nil {
		return nil, fmt.Errorf("store.ExpireExports: %w", err)
	}
	defer rows.Close()
	var out []*results.Export
	for rows.Next() {
		e, err := scanExport(rows)
		if err != nil {
			return nil, fmt.Errorf("store.ExpireExports: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store.ExpireExports: %w", err)
	}
	return out, nil
}

// ForgetExportFile records that an expired export's file is deleted; an
// export that is not expired keeps its file name.
func (db *DB) ForgetExportFile(ctx context.Context, id string) error {
	if _, err := db.pool.Exec(ctx, `UPDATE exports SET file = '' WHERE id = $1 AND status = 'expired'`, id); err != nil {
		return fmt.Errorf("store.ForgetExportFile %s: %w", id, err)
	}
	return nil
}

// lockExport takes the export's transaction-scoped advisory lock.
func lockExport(ctx context.Context, tx *Tx, id string) error {
	_, err := tx.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('lift.export:' || $1))`, id)
	return err
}
