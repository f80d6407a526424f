package store

import "github.com/jackc/pgx/v5/pgxpool"

// What store's own tests reach below the ports: the package functions run
// on a pool or a transaction, and the pool itself. Nothing outside store
// sees a pgx type.
type Querier = querier

var (
	CreateTest       = createTest
	SaveTest         = saveTest
	SetChecksPending = setChecksPending
	FindTestByID     = findTestByID
	FindTests        = findTests
	ImportCatalog    = importCatalog
)

// Pool is the connection pool, for tests that look below the ports.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }
