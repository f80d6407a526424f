package main

import (
	"context"
	"path/filepath"

	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
)

// Webhook wiring: POST /api/webhooks records and queues each delivery
// (critical queue); the worker applies it. Exports (cmd/lift/results.go) are
// written by the worker under data_dir/exports, where the API serves them.
func init() { jobKinds = append(jobKinds, webhookAndExportJobs) }

func (a *App) exportsDir() string { return filepath.Join(a.Config.DataDir, "exports") }

// webhooks is the inbound webhook surface.
func (a *App) webhooks() *webhooks.Handler {
	return &webhooks.Handler{DB: a.DB, Jobs: a.Jobs, Secret: []byte(a.Config.Platform.WebhookSecret),
		MaxBodyBytes: a.Config.HTTP.MaxBodyBytes, Logger: a.Log}
}

func webhookAndExportJobs(a *App, w *jobs.Worker) []jobs.Source {
	// APP_UNINSTALLED ends tests through the public API's own lifecycle.
	lc := &v1.Lifecycle{DB: a.DB, Platform: a.Platform, Now: a.Now, PreviewSecret: a.SigningSecret}
	jobs.HandleWebhooks(w, &jobs.Webhooks{DB: a.DB, Warehouse: a.Warehouse, Logger: a.Log,
		EndTest: func(ctx context.Context, shop *experiment.Shop, testID int64) error {
			_, err := lc.Apply(ctx, shop, testID, experiment.ActionEnd, 0)
			return err
		}})
	return nil
}
