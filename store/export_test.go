package store

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/experiment"
)

// What store's own tests reach below the ports: the package functions run
// on a pool or a transaction, and the pool itself. Nothing outside store
// sees a pgx type.
type Querier = querier

var (
	CreateTest       = createTest
	SaveTest         = saveTest
	SetChecksPending = setChecksPending
	FindTestByID     = findTestByID
	ImportCatalog    = importCatalog
)

// FindTests is findTests with the domain's filter alone.
func FindTests(ctx context.Context, q querier, shopID int64, f experiment.Filter) ([]*experiment.Test, bool, error) {
	return findTests(ctx, q, shopID, testFilter{Filter: f})
}

// Pool is the connection pool, for tests that look below the ports.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }
