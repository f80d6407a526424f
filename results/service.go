// Package results is Lift's results domain: snapshots of a running test,
// custom result queries and CSV exports of its orders, computed from the
// warehouse's sums with the stats engine (docs/results.md,
// docs/webhooks-exports.md). Service is the one place these use cases live;
// the v1 API, the jobs and the tools call it over the ports declared here.
package results

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/liftab/lift/experiment"
)

// Repository stores snapshots, result queries and exports. The store
// implements it on Postgres.
type Repository interface {
	// Write runs fn in one unit of work with its audit record (and the
	// request's Idempotency-Key claim). Errors: fn's, or the unit's
	// KindUnavailable/KindTimeout when nothing was performed.
	Write(ctx context.Context, meta experiment.WriteMeta, fn func(ctx context.Context, tx Tx) (experiment.WriteResult, error)) (experiment.WriteResult, error)
	// LatestSnapshot is a test's newest snapshot, nil when none exists (also
	// for a test of another shop).
	LatestSnapshot(ctx context.Context, shopID, testID int64) (*Snapshot, error)
	// FindSnapshotsDue lists up to limit tests due a snapshot under p at now.
	FindSnapshotsDue(ctx context.Context, now time.Time, p SnapshotPolicy, limit int) ([]SnapshotDue, error)
	// FindRunningTests lists up to limit running tests of every shop.
	FindRunningTests(ctx context.Context, limit int) ([]RunningTest, error)
	// FindResultQuery reads a query of a test of the shop. Errors:
	// KindNotFound results_query_not_found (also another test's or shop's).
	FindResultQuery(ctx context.Context, shopID, testID int64, id string) (*ResultQuery, error)
	// FindQueryByID reads a query by id alone (the worker); nil when absent.
	FindQueryByID(ctx context.Context, id string) (*ResultQuery, error)
	// FindReusableQuery is the newest completed query of the test with the
	// same spec key computed at or after since, or nil.
	FindReusableQuery(ctx context.Context, testID int64, specKey string, since time.Time) (*ResultQuery, error)
	// FindExport reads the shop's export. Errors: KindNotFound
	// export_not_found (also another shop's).
	FindExport(ctx context.Context, shopID int64, id string) (*Export, error)
	// FindExportByID reads any shop's export (the signed download). Errors:
	// KindNotFound export_not_found.
	FindExportByID(ctx context.Context, id string) (*Export, error)
	// ExpireExports marks every export completed before `before` expired
	// (ExpiredAt at), keeping its File, and returns those together with
	// the expired exports whose file is not forgotten yet (an earlier run
	// stopped before ForgetExportFile).
	ExpireExports(ctx context.Context, before, at time.Time) ([]*Export, error)
	// ForgetExportFile clears an expired export's File once the file is
	// deleted.
	ForgetExportFile(ctx context.Context, id string) error
}

// Tx is the unit of work of Repository.Write.
type Tx interface {
	// CreateSnapshot records s and sets s.ID.
	CreateSnapshot(ctx context.Context, s *Snapshot) error
	// CreateResultQuery records a pending query.
	CreateResultQuery(ctx context.Context, q *ResultQuery) error
	// FinishResultQuery records a pending query's outcome; a query already
	// finished is left as it is.
	FinishResultQuery(ctx context.Context, id, status string, computedAt time.Time, body json.RawMessage, reason string) error
	// CreateExport records a pending export (setting Status and CreatedAt)
	// and holds its lock until the unit ends, so a job queued inside the
	// unit waits for the commit in StartExport.
	CreateExport(ctx context.Context, e *Export) error
	// StartExport moves a pending (or retried running) export to running
	// and returns it; a finished one is returned unchanged. It first waits
	// for the unit that creates it. Errors: KindNotFound export_not_found.
	StartExport(ctx context.Context, shopID int64, id string) (*Export, error)
	// CompleteExport marks a running export completed. Errors: KindConflict
	// export_not_running.
	CompleteExport(ctx context.Context, shopID int64, id, file string, rows int64) error
	// FailExport marks an unfinished export failed. Errors: KindConflict
	// export_not_running.
	FailExport(ctx context.Context, shopID int64, id, reason string) error
}

// Tests reads the tests and shops results are computed for. The store
// implements it.
type Tests interface {
	// FindTestByID errors: KindNotFound experiment_not_found (also another
	// shop's test).
	FindTestByID(ctx context.Context, shopID, id int64) (*experiment.Test, error)
	FindShopByID(ctx context.Context, id int64) (*experiment.Shop, error)
	// CollectionProducts is the product ids of the shop's catalog
	// collection id, or nil when the shop has none of that id.
	CollectionProducts(ctx context.Context, shopID int64, id string) ([]string, error)
}

// JobQueue enqueues the background runs of queries and exports. A run
// already queued under the same id is not an error.
type JobQueue interface {
	EnqueueQuery(ctx context.Context, queryID string) error
	EnqueueExport(ctx context.Context, shopID int64, exportID string) error
}

// Config is what a Service runs on. Zero durations take the defaults below.
type Config struct {
	Repo      Repository
	Tests     Tests
	Warehouse Warehouse
	Jobs      JobQueue
	// Pauser pauses a test whose snapshot finds a guardrail breached; nil
	// reports breaches in the results without pausing (tools, tests).
	Pauser Pauser
	Now    func() time.Time // the one clock; default time.Now
	Logger *slog.Logger

	// Snapshots is when running tests get a snapshot.
	Snapshots SnapshotPolicy

	// ExportDir is data_dir/exports: the worker writes each CSV there and
	// the API serves downloads from it.
	ExportDir string
	// SigningSecret signs export download links; every node that mints or
	// serves links must share it.
	SigningSecret []byte
	// ExportRetention is how long an export's file is kept after it
	// completes (exports.retention); ExpireExports deletes it then. Zero
	// keeps every file.
	ExportRetention time.Duration
}

// Service is the results domain service.
type Service struct{ cfg Config }

// New returns a Service over cfg, defaults filled in.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Snapshots.Every = cmp.Or(cfg.Snapshots.Every, SnapshotEvery)
	cfg.Snapshots.FirstAfter = cmp.Or(cfg.Snapshots.FirstAfter, FirstSnapshotAfter)
	return &Service{cfg: cfg}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// worker marks writes of the background runs in the audit log.
func worker(ctx context.Context, requestID string) context.Context {
	return experiment.WithActor(ctx, experiment.Actor{Name: "worker", RequestID: requestID})
}
