package main

import (
	"context"
	"path/filepath"

	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
)

// Webhook and export wiring: POST /api/webhooks records and queues each
// delivery (critical queue); the worker applies it. Exports are created and
// read on /v1, written by the worker (low queue) under data_dir/exports, and
// downloaded through a signed link outside the authenticated group.
func init() { jobKinds = append(jobKinds, webhookAndExportJobs) }

func (a *App) exportsDir() string { return filepath.Join(a.Config.DataDir, "exports") }

// webhooks is the inbound webhook surface.
func (a *App) webhooks() *webhooks.Handler {
	return &webhooks.Handler{DB: a.DB, Jobs: a.Jobs, Secret: []byte(a.Config.Platform.WebhookSecret),
		MaxBodyBytes: a.Config.HTTP.MaxBodyBytes, Logger: a.Log}
}

// exportsAPI is the exports resource of the public API.
func (a *App) exportsAPI() *v1.Exports {
	return &v1.Exports{DB: a.DB, Jobs: a.Jobs, Dir: a.exportsDir(), Secret: a.SigningSecret, Now: a.Now}
}

func webhookAndExportJobs(a *App, w *jobs.Worker) []jobs.Source {
	// APP_UNINSTALLED ends tests through the tests' one service.
	svc := a.experiments()
	jobs.HandleWebhooks(w, &jobs.Webhooks{DB: a.DB, Warehouse: a.Warehouse, Logger: a.Log,
		EndTest: func(ctx context.Context, shop *experiment.Shop, testID int64) error {
			_, err := svc.Apply(ctx, shop, testID, experiment.ActionEnd, nil)
			return err
		}})
	jobs.HandleExports(w, &jobs.Exports{DB: a.DB, Warehouse: a.Warehouse, Dir: a.exportsDir(), Logger: a.Log})
	return nil
}
