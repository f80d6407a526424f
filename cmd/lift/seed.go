package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/store"
)

func init() { rootCmd.AddCommand(newSeedCmd()) }

func newSeedCmd() *cobra.Command {
	var domain, file string
	cmd := &cobra.Command{
		Use:   "seed --shop DOMAIN [--catalog FILE.json]",
		Args:  cobra.NoArgs,
		Short: "Load a catalog into a shop's catalog mirror (the demo catalog unless --catalog names one)",
		Long: "Replace the shop's catalog mirror (products, variants with price and cost, collections, themes,\n" +
			"templates, delivery zones and rates, markets, shop currency) with the demo catalog, or with FILE.json\n" +
			"in the catalog import format (docs/tests-api.md). A shop that does not exist yet is installed,\n" +
			"API-enabled, on a plan with every test feature.\n\n" + configHelp(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if domain == "" {
				return fmt.Errorf("seed: --shop DOMAIN is required")
			}
			raw := catalogdata.Demo
			if file != "" {
				b, err := os.ReadFile(file)
				if err != nil {
					return fmt.Errorf("seed: %w", err)
				}
				raw = b
			}
			f, err := store.ParseCatalog(raw)
			if err != nil {
				return fmt.Errorf("seed %s: %w", file, err)
			}
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			ctx := experiment.WithActor(cmd.Context(), experiment.Actor{Name: "cli"})
			app, err := openApp(ctx, cfg)
			if err != nil {
				return err
			}
			defer app.Close()
			shop, created, err := seedShop(ctx, app.DB, domain, f)
			if err != nil {
				return err
			}
			variants := 0
			for _, p := range f.Products {
				variants += len(p.Variants)
			}
			verb := "updated"
			if created {
				verb = "installed"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "shop %s (id %d) %s; catalog: %d products, %d variants, %d collections, %d themes, %d delivery zones, %d markets, currency %s\n",
				shop.Domain, shop.ID, verb, len(f.Products), variants, len(f.Collections), len(f.Themes), len(f.DeliveryZones), len(f.Markets), f.Currency)
			return nil
		},
	}
	cmd.Flags().StringVar(&domain, "shop", "", "shop domain, e.g. demo-shop.myshopify.com")
	cmd.Flags().StringVar(&file, "catalog", "", "catalog JSON file to import instead of the demo catalog")
	config.BindFlags(cmd.Flags())
	return cmd
}

// seedShop finds or installs the shop and replaces its catalog mirror with f.
func seedShop(ctx context.Context, db *store.DB, domain string, f *store.CatalogFile) (*experiment.Shop, bool, error) {
	shop, err := db.FindShopByDomain(ctx, domain)
	created := false
	if experiment.IsNotFound(err) {
		shop, err = db.CreateShop(ctx, experiment.Shop{Domain: domain, Name: domain, Currency: f.Currency,
			Features: []string{experiment.FeaturePrice, experiment.FeatureOffer, experiment.FeatureMultiMarket, experiment.FeatureCarrierService}})
		if err == nil {
			enabled := true
			shop, err = db.UpdateShop(ctx, shop.ID, store.ShopUpdate{APIEnabled: &enabled})
		}
		created = true
	}
	if err != nil {
		return nil, false, fmt.Errorf("seed %s: %w", domain, err)
	}
	if err := db.ImportCatalog(ctx, shop.ID, f); err != nil {
		return nil, false, fmt.Errorf("seed %s: %w", domain, err)
	}
	shop.Currency = f.Currency
	return shop, created, nil
}
