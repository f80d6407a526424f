package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
)

// ResultsRepository is the results domain's repository on Postgres: every
// read of DB, and a Write whose unit of work is a *Tx seen as results.Tx.
type ResultsRepository struct{ *DB }

var _ results.Repository = ResultsRepository{}

// Write is DB.Write with the transaction handed over as a results.Tx.
func (r ResultsRepository) Write(ctx context.Context, meta experiment.WriteMeta,
	fn func(ctx context.Context, tx results.Tx) (experiment.WriteResult, error)) (experiment.WriteResult, error) {
	return r.DB.Write(ctx, meta, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) { return fn(ctx, tx) })
}

// CreateSnapshot records s and sets s.ID.
func (tx *Tx) CreateSnapshot(ctx context.Context, s *results.Snapshot) error {
	err := tx.tx.QueryRow(ctx, `INSERT INTO results_snapshots (shop_id, experiment_id, computed_at, final, body, summary)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		s.ShopID, s.TestID, s.ComputedAt, s.Final, string(s.Body), string(s.Summary)).Scan(&s.ID)
	if err != nil {
		return fmt.Errorf("store.CreateSnapshot %d: %w", s.TestID, err)
	}
	return nil
}

// LatestSnapshot returns the newest snapshot of a test of the shop, or nil
// when none has been computed.
func (db *DB) LatestSnapshot(ctx context.Context, shopID, testID int64) (*results.Snapshot, error) {
	var s results.Snapshot
	var body, summary string
	err := db.pool.QueryRow(ctx, `SELECT id, shop_id, experiment_id, computed_at, final, body::text, summary::text
		FROM results_snapshots WHERE shop_id = $1 AND experiment_id = $2
		ORDER BY computed_at DESC, id DESC LIMIT 1`, shopID, testID).
		Scan(&s.ID, &s.ShopID, &s.TestID, &s.ComputedAt, &s.Final, &body, &summary)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store.LatestSnapshot %d: %w", testID, err)
	}
	s.Body, s.Summary = json.RawMessage(body), json.RawMessage(summary)
	return &s, nil
}

// FindSnapshotsDue lists running tests whose latest snapshot is p.Every
// old or older than the test's last change (ChangedAt: its analysis
// options, guardrails or splits may differ from what the snapshot used),
// or that have none and started p.FirstAfter ago, and ended tests whose
// latest snapshot predates the end and is not final yet. A test that ended
// before any snapshot was computed is not listed: it keeps answering 202
// (contract §4.4). Paused tests are never listed, so they keep the numbers
// they had.
func (db *DB) FindSnapshotsDue(ctx context.Context, now time.Time, p results.SnapshotPolicy, limit int) ([]results.SnapshotDue, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT e.shop_id, e.id, e.status <> 'active',
			CASE WHEN e.status = 'active' AND s.computed_at < e.updated_at THEN e.updated_at END
		FROM experiments e
		LEFT JOIN LATERAL (
			SELECT computed_at, final FROM results_snapshots s
			WHERE s.experiment_id = e.id ORDER BY computed_at DESC, id DESC LIMIT 1) s ON true
		WHERE (e.status = 'active' AND (s.computed_at <= $1 OR s.computed_at < e.updated_at
				OR (s.computed_at IS NULL AND COALESCE(e.started_at, e.created_at) <= $3)))
		   OR (e.status IN ('ended', 'archived') AND e.ended_at IS NOT NULL AND s.computed_at IS NOT NULL AND NOT s.final)
		ORDER BY s.computed_at NULLS FIRST
		LIMIT $2`, now.Add(-p.Every), limit, now.Add(-p.FirstAfter))
	if err != nil {
		return nil, fmt.Errorf("store.FindSnapshotsDue: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (results.SnapshotDue, error) {
		var d results.SnapshotDue
		err := r.Scan(&d.ShopID, &d.TestID, &d.Final, &d.ChangedAt)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("store.FindSnapshotsDue: %w", err)
	}
	return out, nil
}

// FindRunningTests lists up to limit running tests of every shop, oldest
// first.
func (db *DB) FindRunningTests(ctx context.Context, limit int) ([]results.RunningTest, error) {
	rows, err := db.pool.Query(ctx, `SELECT shop_id, id FROM experiments WHERE status = 'active' ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("store.FindRunningTests: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (results.RunningTest, error) {
		var t results.RunningTest
		err := r.Scan(&t.ShopID, &t.TestID)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("store.FindRunningTests: %w", err)
	}
	return out, nil
}

// CreateResultQuery records a new pending query.
func (tx *Tx) CreateResultQuery(ctx context.Context, q *results.ResultQuery) error {
	_, err := tx.tx.Exec(ctx, `INSERT INTO results_queries (id, shop_id, experiment_id, spec, spec_key, status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, q.ID, q.ShopID, q.TestID, string(q.Spec), q.SpecKey, q.Status, q.CreatedAt)
	if err != nil {
		return fmt.Errorf("store.CreateResultQuery %d: %w", q.TestID, err)
	}
	return nil
}

const queryColumns = `id, shop_id, experiment_id, spec::text, spec_key, status, failure_reason, created_at, computed_at, body::text`

func scanQuery(row pgx.Row) (*results.ResultQuery, error) {
	var q results.ResultQuery
	var spec string
	var body *string
	if err := row.Scan(&q.ID, &q.ShopID, &q.TestID, &spec, &q.SpecKey, &q.Status, &q.FailureReason, &q.CreatedAt,
		&q.ComputedAt, &body); err != nil {
		return nil, err
	}
	q.Spec = json.RawMessage(spec)
	if body != nil {
		q.Body = json.RawMessage(*body)
	}
	return &q, nil
}

// FindResultQuery reads a query of a test of the shop. It answers 404
// results_query_not_found for an unknown id, or one of another test or shop.
func (db *DB) FindResultQuery(ctx context.Context, shopID, testID int64, id string) (*results.ResultQuery, error) {
	q, err := scanQuery(db.pool.QueryRow(ctx, `SELECT `+queryColumns+` FROM results_queries
		WHERE id = $1 AND shop_id = $2 AND experiment_id = $3`, id, shopID, testID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, experiment.Errorf(experiment.KindNotFound, "results_query_not_found", "No result query with id %q on this test.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store.FindResultQuery %s: %w", id, err)
	}
	return q, nil
}

// FindQueryByID reads a query by id alone, for the worker; nil when absent.
func (db *DB) FindQueryByID(ctx context.Context, id string) (*results.ResultQuery, error) {
	q, err := scanQuery(db.pool.QueryRow(ctx, `SELECT `+queryColumns+` FROM results_queries WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store.FindQueryByID %s: %w", id, err)
	}
	return q, nil
}

// FindReusableQuery returns the newest completed query of the test with the
// same spec key computed at or after since, or nil.
func (db *DB) FindReusableQuery(ctx context.Context, testID int64, specKey string, since time.Time) (*results.ResultQuery, error) {
	q, err := scanQuery(db.pool.QueryRow(ctx, `SELECT `+queryColumns+` FROM results_queries
		WHERE experiment_id = $1 AND spec_key = $2 AND status = 'completed' AND computed_at >= $3
		ORDER BY computed_at DESC LIMIT 1`, testID, specKey, since))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store.FindReusableQuery %d: %w", testID, err)
	}
	return q, nil
}

// FinishResultQuery records the outcome of a pending query: completed with
// its body and computation time, or failed with a plain-language reason. A
// query already finished is left as it is (a retried job changes nothing).
func (tx *Tx) FinishResultQuery(ctx context.Context, id, status string, computedAt time.Time, body json.RawMessage, reason string) error {
	var b *string
	if body != nil {
		s := string(body)
		b = &s
	}
	_, err := tx.tx.Exec(ctx, `UPDATE results_queries SET status = $2, computed_at = $3, body = $4, failure_reason = $5
		WHERE id = $1 AND status = 'pending'`, id, status, computedAt, b, reason)
	if err != nil {
		return fmt.Errorf("store.FinishResultQuery %s: %w", id, err)
	}
	return nil
}

// analyticsResetReason is what a custom query computed before a reset
// analytics says when it is read afterwards.
const analyticsResetReason = "The test's analytics were reset after this query was asked: its numbers were erased. Ask again for results from the data collected since."

// ForgetResults deletes the test's results snapshots and fails its custom
// result queries, pending ones included (a computation that read the data
// before the erase must not land afterwards). The experiment domain calls
// it in reset analytics' unit of work, with the test locked.
func (tx *Tx) ForgetResults(ctx context.Context, shopID, id int64) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM results_snapshots WHERE shop_id = $1 AND experiment_id = $2`, shopID, id); err != nil {
		return fmt.Errorf("store.ForgetResults %d: %w", id, err)
	}
	_, err := tx.tx.Exec(ctx, `UPDATE results_queries SET status = 'failed', body = NULL, failure_reason = $3,
			computed_at = COALESCE(computed_at, $4)
		WHERE shop_id = $1 AND experiment_id = $2 AND status <> 'failed'`, shopID, id, analyticsResetReason, tx.now)
	if err != nil {
		return fmt.Errorf("store.ForgetResults %d: %w", id, err)
	}
	return nil
}

// CollectionProducts returns the product ids of a catalog collection of the
// shop, or nil when the shop has no such collection.
func (db *DB) CollectionProducts(ctx context.Context, shopID int64, id string) ([]string, error) {
	var ids []string
	err := db.pool.QueryRow(ctx, `SELECT product_ids FROM catalog_collections WHERE shop_id = $1 AND id = $2`, shopID, id).Scan(&ids)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store.CollectionProducts %s: %w", id, err)
	}
	return ids, nil
}
