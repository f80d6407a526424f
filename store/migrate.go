package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/migrations"
)

// migrateLock is the advisory lock key that serialises concurrent migrators.
const migrateLock = 0x6c696674 // "lift"

// Migrate applies every migration not yet recorded in schema_migrations, each
// in its own transaction with its record, under an advisory lock so that two
// processes starting at once apply each migration exactly once.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	all, err := migrations.All()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store.Migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLock); err != nil {
		return fmt.Errorf("store.Migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLock)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("store.Migrate: %w", err)
	}
	for _, m := range all {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return fmt.Errorf("store.Migrate: %w", err)
		}
		tag, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2) ON CONFLICT DO NOTHING", m.Version, m.Name)
		if err == nil && tag.RowsAffected() == 1 {
			_, err = tx.Exec(ctx, m.SQL)
		}
		if err != nil {
			tx.Rollback(ctx)
			return fmt.Errorf("store.Migrate: %04d_%s: %w", m.Version, m.Name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("store.Migrate: %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// Pending names the migrations this binary carries that the database has
// not recorded, oldest first: all of them when it was never migrated.
func (db *DB) Pending(ctx context.Context) ([]string, error) {
	all, err := migrations.All()
	if err != nil {
		return nil, err
	}
	applied := map[int]bool{}
	rows, err := db.pool.Query(ctx, `SELECT version FROM schema_migrations`)
	if err == nil {
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store.Pending: %w", err)
			}
			applied[v] = true
		}
		rows.Close()
		err = rows.Err()
	}
	var pgErr *pgconn.PgError
	if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P01") { // undefined_table: never migrated
		return nil, fmt.Errorf("store.Pending: %w", err)
	}
	var out []string
	for _, m := range all {
		if !applied[m.Version] {
			out = append(out, fmt.Sprintf("%04d_%s", m.Version, m.Name))
		}
	}
	return out, nil
}
