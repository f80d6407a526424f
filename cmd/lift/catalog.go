package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
)

// The catalog refresh (docs/install.md, "Catalog refresh"): the scheduler
// queues one per installed shop every jobs.catalog_refresh_every, and
// `lift shops refresh-catalog` runs one by hand; both run
// experiment.InstallService.RefreshCatalog.

func init() { jobKinds = append(jobKinds, catalogJobs) }

// catalogJobs: the refresh's handler always (a task queued before the
// refresh was turned off still runs), its schedule unless turned off.
func catalogJobs(a *App, w *jobs.Worker) []jobs.Source {
	jobs.HandleCatalogRefresh(w, a.refreshCatalogJob)
	every := a.Config.Jobs.CatalogRefreshEvery
	if every <= 0 {
		return nil
	}
	return []jobs.Source{jobs.CatalogRefreshSource(every, a.DB.FindInstalledShopIDs)}
}

// refreshCatalogJob refreshes one shop's catalog for the worker and logs
// the outcome. A shop that is gone has nothing to refresh: not an error,
// or the task would retry for nothing.
func (a *App) refreshCatalogJob(ctx context.Context, shopID int64) error {
	shop, err := a.DB.FindShopByID(ctx, shopID)
	if experiment.IsNotFound(err) {
		a.Log.Info("catalog refresh skipped: no such shop", "shop_id", shopID)
		return nil
	}
	if err != nil {
		return err
	}
	r, err := a.installService().RefreshCatalog(ctx, shop)
	if err != nil {
		return err
	}
	msg := "catalog refreshed"
	if r.Skipped != "" {
		msg = "catalog refresh skipped"
	}
	a.Log.Info(msg, "shop", shop.Domain, "shop_id", shop.ID, "catalog", r)
	return nil
}

// newRefreshCatalogCmd is `lift shops refresh-catalog DOMAIN`: the
// scheduler's refresh, run now, its outcome printed.
func newRefreshCatalogCmd() *cobra.Command {
	return &cobra.Command{
		Use: "refresh-catalog DOMAIN",
		Short: "Read the shop's catalog from the platform again (with its stored token) and replace its catalog mirror, " +
			"as the worker does every jobs.catalog_refresh_every",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				shop, err := a.DB.FindShopByDomain(ctx, args[0])
				if experiment.IsNotFound(err) {
					return fmt.Errorf("no shop %s", experiment.NormalizeShopDomain(args[0]))
				}
				if err != nil {
					return err
				}
				r, err := a.installService().RefreshCatalog(ctx, shop)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", shop.Domain, r)
				return nil
			})
		},
	}
}
