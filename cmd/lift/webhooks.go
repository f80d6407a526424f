package main

import (
	"context"
	"path/filepath"

	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// Webhook and export wiring: POST /api/webhooks records and queues each
// delivery (critical queue); the worker applies it. Both run the one
// experiment.WebhookService. Exports are created and read on /v1, written
// by the worker (low queue) under data_dir/exports, and downloaded through a
// signed link outside the authenticated group.
func init() { jobKinds = append(jobKinds, webhookAndExportJobs) }

func (a *App) exportsDir() string { return filepath.Join(a.Config.DataDir, "exports") }

// webhookService is the inbound webhook domain service over this process's
// stores. APP_UNINSTALLED ends tests through the public API's own lifecycle.
func (a *App) webhookService() *experiment.WebhookService {
	tests := a.experiments()
	return &experiment.WebhookService{Repo: store.WebhookRepo{DB: a.DB}, Orders: warehouse.WebhookOrders{W: a.Warehouse},
		Queue: jobs.WebhookQueue{Jobs: a.Jobs}, Now: a.Now, Logger: a.Log,
		EndTest: func(ctx context.Context, shop *experiment.Shop, testID int64) error {
			_, err := tests.Apply(ctx, shop, testID, experiment.ActionEnd, nil)
			return err
		}}
}

// webhooks is the inbound webhook surface.
func (a *App) webhooks() *webhooks.Handler {
	return &webhooks.Handler{Service: a.webhookService(), Secret: []byte(a.Config.Platform.WebhookSecret),
		MaxBodyBytes: a.Config.HTTP.MaxBodyBytes}
}

// exportsAPI is the exports resource of the public API.
func (a *App) exportsAPI() *v1.Exports {
	return &v1.Exports{DB: a.DB, Jobs: a.Jobs, Dir: a.exportsDir(), Secret: a.SigningSecret, Now: a.Now}
}

func webhookAndExportJobs(a *App, w *jobs.Worker) []jobs.Source {
	jobs.HandleWebhooks(w, a.webhookService())
	jobs.HandleExports(w, &jobs.Exports{DB: a.DB, Warehouse: a.Warehouse, Dir: a.exportsDir(), Logger: a.Log})
	return nil
}
