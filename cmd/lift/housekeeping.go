package main

import (
	"context"
	"time"

	"github.com/liftab/lift/jobs"
)

func init() { jobKinds = append(jobKinds, housekeepingJobs) }

// housekeepingJobs: once an hour, the rows Postgres keeps only for a while
// go (store.DB.Purge), and the worker logs what went.
func housekeepingJobs(a *App, w *jobs.Worker) []jobs.Source {
	jobs.HandleHousekeeping(w, func(ctx context.Context, at time.Time) error {
		p, err := a.DB.Purge(ctx, at, a.Config.Idempotency.Retention)
		if err != nil {
			return err
		}
		if p.IdempotencyKeys+p.WebhookDeliveries > 0 {
			a.Log.Info("housekeeping: purged", "idempotency_keys", p.IdempotencyKeys, "webhook_deliveries", p.WebhookDeliveries)
		}
		return nil
	})
	return []jobs.Source{jobs.HousekeepingSource()}
}
