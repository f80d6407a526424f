// Package store is Lift's Postgres adapter: repositories for shops, tokens,
// tests, the catalog mirror, idempotency keys, the audit log, snapshots,
// result queries and exports. It speaks pgx inside and experiment types
// outside; driver errors are translated here and never leave the package.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/experiment"
)

// Config opens a DB.
type Config struct {
	URL      string
	MaxConns int32            // 0 keeps pgx's default
	Now      func() time.Time // the one clock; time.Now when nil
	// WriteTimeout bounds one Write; past it the transaction is rolled back
	// and the caller gets a 504. It must stay well under the idempotency
	// stale-after period so a claim is only re-taken once its write is over.
	WriteTimeout time.Duration
}

// DB is the Postgres store.
type DB struct {
	pool         *pgxpool.Pool
	now          func() time.Time
	writeTimeout time.Duration
}

// Open connects and checks the connection.
func Open(ctx context.Context, c Config) (*DB, error) {
	pc, err := pgxpool.ParseConfig(c.URL)
	if err != nil {
		return nil, fmt.Errorf("store.Open: %w", err)
	}
	if c.MaxConns > 0 {
		pc.MaxConns = c.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("store.Open: %w", err)
	}
	db := &DB{pool: pool, now: c.Now, writeTimeout: c.WriteTimeout}
	if db.now == nil {
		db.now = time.Now
	}
	if db.writeTimeout == 0 {
		db.writeTimeout = 10 * time.Second
	}
	return db, nil
}

// Close releases every connection.
func (db *DB) Close() { db.pool.Close() }

// Ping reports whether Postgres answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// Migrate applies pending migrations to this database.
func (db *DB) Migrate(ctx context.Context) error { return Migrate(ctx, db.pool) }

// Now is the store's clock, at Postgres's precision (microseconds): a time
// the store stamps reads back as it was answered (an export's created_at
// answered with nanoseconds on create read back with microseconds).
func (db *DB) Now() time.Time { return db.now().UTC().Truncate(time.Microsecond) }

// Tx is a transaction handed to the function given to Write. Repository code
// in this package uses it; callers outside only pass it along.
type Tx struct {
	tx  pgx.Tx
	now time.Time
}

// Now is the time of the transaction, the same for every row it writes.
func (t *Tx) Now() time.Time { return t.now }

// querier is what both a pool and a transaction offer, so read functions
// work inside and outside a Write.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// notFound turns pgx.ErrNoRows into the contract's not-found error.
func notFound(err error, code, format string, args ...any) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return experiment.Errorf(experiment.KindNotFound, code, format, args...)
	}
	return err
}

// sqlState returns the Postgres error code of err, or "".
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// IsUniqueViolation reports whether err is a unique-constraint violation.
func isUniqueViolation(err error) bool { return sqlState(err) == "23505" }
