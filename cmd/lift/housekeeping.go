package main

import (
	"context"
	"errors"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
)

func init() { jobKinds = append(jobKinds, housekeepingJobs) }

// housekeepingJobs: once an hour, housekeep.
func housekeepingJobs(a *App, w *jobs.Worker) []jobs.Source {
	jobs.HandleHousekeeping(w, a.housekeep)
	return []jobs.Source{jobs.HousekeepingSource()}
}

// housekeep deletes what is kept only for a while, as of at: the rows
// Postgres keeps (store.DB.Purge), the export files past
// exports.retention (results.Service.ExpireExports) and the platform
// resources of tests ended jobs.release_after ago
// (experiment.Service.ReleaseEnded); it logs what went. Each runs whatever
// the others did: an export directory that refuses a delete must not keep
// the tables growing, nor the reverse. A failure of any fails the job,
// which is retried; all are idempotent. A platform refusing a release is
// not a failure: that test waits for the next hour's sweep.
func (a *App) housekeep(ctx context.Context, at time.Time) error {
	p, perr := a.DB.Purge(ctx, at, a.Config.Idempotency.Retention)
	if perr == nil && p.IdempotencyKeys+p.WebhookDeliveries > 0 {
		a.Log.Info("housekeeping: purged", "idempotency_keys", p.IdempotencyKeys, "webhook_deliveries", p.WebhookDeliveries)
	}
	x, xerr := a.results().ExpireExports(ctx, at)
	if x.Files+x.TempFiles > 0 {
		a.Log.Info("housekeeping: export files deleted", "expired_exports", x.Files, "temp_files", x.TempFiles)
	}
	var r experiment.ReleaseSummary
	var rerr error
	if a.Config.Jobs.ReleaseAfter > 0 {
		r, rerr = a.experiments().ReleaseEnded(ctx, at)
	}
	if r.Released+r.Failed > 0 {
		a.Log.Info("housekeeping: ended tests' platform resources released", "tests", r.Released,
			"duplicate_variants", r.DuplicateVariants, "discounts", r.Discounts, "refused", r.Failed)
	}
	return errors.Join(perr, xerr, rerr)
}
