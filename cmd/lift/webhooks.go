package main

import (
	"context"
	"path/filepath"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// Webhook wiring: POST /api/webhooks records and queues each delivery
// (critical queue); the worker applies it. Both run the one
// experiment.WebhookService. Exports (cmd/lift/results.go) are written by the
// worker under data_dir/exports, where the API serves them.
func init() { jobKinds = append(jobKinds, webhookAndExportJobs) }

func (a *App) exportsDir() string { return filepath.Join(a.Config.DataDir, "exports") }

// webhookService is the inbound webhook domain service over this process's
// stores. APP_UNINSTALLED ends tests through the public API's own lifecycle.
func (a *App) webhookService() *experiment.WebhookService {
	tests := a.experiments()
	return &experiment.WebhookService{Repo: store.WebhookRepo{DB: a.DB}, Orders: warehouse.WebhookOrders{W: a.Warehouse},
		Queue: jobs.WebhookQueue{Jobs: a.Jobs}, Now: a.Now, Logger: a.Log, Uninstall: a.uninstallHook(),
		SyncStock: func(ctx context.Context, shop *experiment.Shop, l experiment.InventoryLevel) (string, error) {
			return a.installService().SyncStock(ctx, shop, l)
		},
		ThemeBlock: func(ctx context.Context, shop *experiment.Shop, themeID string) (string, error) {
			return a.installService().ReinstallThemeBlock(ctx, shop, themeID)
		},
		EndTest: func(ctx context.Context, shop *experiment.Shop, testID int64) error {
			_, err := tests.Apply(ctx, shop, testID, experiment.ActionEnd, nil)
			return err
		}}
}

// webhooks is the inbound webhook surface and the carrier service's rate
// callback.
func (a *App) webhooks() *webhooks.Handler {
	return &webhooks.Handler{Service: a.webhookService(), Secret: []byte(a.Config.Platform.WebhookSecret),
		MaxBodyBytes: a.Config.HTTP.MaxBodyBytes, Rates: a.experiments(), Shops: a.DB}
}

func webhookAndExportJobs(a *App, w *jobs.Worker) []jobs.Source {
	jobs.HandleWebhooks(w, a.webhookService())
	return nil
}
