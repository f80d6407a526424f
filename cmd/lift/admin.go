package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

func init() {
	rootCmd.AddCommand(newMigrateCmd(), newShopsCmd(), newTokensCmd())
}

// withApp runs fn with the process's connections, read from the same
// configuration every command reads, until fn returns or the process is
// interrupted. Writes with no actor of their own are audited as actor.
func withApp(cmd *cobra.Command, actor string, fn func(ctx context.Context, a *App) error) error {
	return withAppOpened(cmd, actor, openApp, fn)
}

// withAppOpened is withApp with the connections made by open.
func withAppOpened(cmd *cobra.Command, actor string, open func(context.Context, *config.Config) (*App, error),
	fn func(ctx context.Context, a *App) error) error {
	cfg, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = experiment.WithActor(ctx, experiment.Actor{Name: actor})
	a, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(ctx, a)
}

// withServer is withApp for the long-running roles (serve, worker): the
// error that stops the process is its last log record, in the configured
// format, not a plain line after it.
// A failure to connect at start (Postgres down) is logged the same way; only
// a configuration that does not load stays a plain line, having no format.
func withServer(cmd *cobra.Command, actor string, open func(context.Context, *config.Config) (*App, error),
	fn func(ctx context.Context, a *App) error) error {
	err := withAppOpened(cmd, actor, open, fn)
	if err == nil {
		return nil
	}
	cfg, cerr := loadConfig(cmd)
	if cerr != nil {
		return err
	}
	newLogger(cfg, os.Stderr).Error("lift "+cmd.Name()+" stopped", "err", err)
	return loggedError{err}
}

func newMigrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Args:  cobra.NoArgs,
		Short: "Apply pending Postgres migrations and ClickHouse DDL (running it twice changes nothing)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				if err := a.migrate(ctx); err != nil {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "migrations applied")
				return nil
			})
		},
	}
	config.BindFlags(cmd.Flags())
	return cmd
}

func newShopsCmd() *cobra.Command {
	cmd := commandGroup("shops", "Install shops and switch their API access")
	var tz, currency, name string
	var features []string
	var raised bool
	create := &cobra.Command{
		Use:   "create DOMAIN",
		Short: "Install a shop through the install lifecycle minus OAuth (webhooks subscribed, catalog synced with the configured platform token)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A zone Go cannot load would have the shop's dates read as
			// UTC without a word.
			if _, err := time.LoadLocation(tz); err != nil || tz == "" || strings.EqualFold(tz, "local") {
				return fmt.Errorf("--timezone %q is not an IANA time zone (e.g. Europe/Berlin)", tz)
			}
			if currency = strings.ToUpper(currency); len(currency) != 3 || strings.Trim(currency, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
				return fmt.Errorf("--currency %q is not an ISO 4217 code (e.g. EUR)", currency)
			}
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				// The install's own path, minus OAuth: the configured app
				// token stands in for the one a merchant's approval grants.
				s, err := a.installService().Install(ctx, experiment.InstallRequest{Domain: args[0],
					Grant: experiment.AccessGrant{AccessToken: a.Config.Platform.Token, Scopes: splitList(a.Config.Platform.Scopes)},
					Name:  name, Timezone: tz, Currency: currency, Features: features, RaisedProductLimit: raised, RefuseInstalled: true})
				if e, ok := experiment.AsError(err); ok && e.Code == "shop_exists" {
					return existingShop(ctx, a, args[0])
				}
				if err != nil {
					return err
				}
				fmt.Printf("%d\n", s.ID)
				fmt.Fprintf(cmd.ErrOrStderr(), "shop %s installed (id %d, %s, %s); enable the API with: lift shops enable-api %s\n",
					s.Domain, s.ID, s.Timezone, s.Currency, s.Domain)
				return nil
			})
		},
	}
	create.Flags().StringVar(&tz, "timezone", "UTC", "IANA time zone of the shop (results use its local dates)")
	create.Flags().StringVar(&currency, "currency", "USD", "ISO 4217 currency code of the shop")
	create.Flags().StringVar(&name, "name", "", "display name")
	create.Flags().StringSliceVar(&features, "features", []string{"price", "offer", "multi_market"}, "plan features")
	create.Flags().BoolVar(&raised, "raised-product-limit", false, "allow 500 products per price test instead of 100")
	analytics := &cobra.Command{
		Use:   "set-analytics DOMAIN MEASUREMENT_ID",
		Short: "Set the shop's analytics measurement id (GA4 G-…) that /api/ga4/metadata hands to the storefront; \"\" turns it off",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := strings.TrimSpace(args[1])
			if err := experiment.CheckMeasurementID(id); err != nil {
				return err
			}
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				s, err := a.DB.FindShopByDomain(ctx, args[0])
				if err != nil {
					return err
				}
				if _, err := a.DB.UpdateShop(ctx, s.ID, store.ShopUpdate{AnalyticsMeasurementID: &id}); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "analytics measurement id of %s: %q\n", s.Domain, id)
				return nil
			})
		},
	}
	cmd.AddCommand(create, setAPI("enable-api", true), setAPI("disable-api", false), analytics, newSessionTokenCmd(),
		newRefreshCatalogCmd())
	for _, c := range cmd.Commands() {
		config.BindFlags(c.Flags())
	}
	return cmd
}

// newSessionTokenCmd signs an admin panel session token as the built-in
// fake platform's App Bridge would, so a developer can call the session API
// (README, "The admin panel's session API") of a node running the fake.
// A real platform's tokens come from its App Bridge only: with platform.url
// set the command refuses rather than sign with the real app's secret.
func newSessionTokenCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "session-token DOMAIN",
		Short: "Print a one-minute admin panel session token for a shop, signed as the built-in fake platform signs them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			if cfg.Platform.URL != "" {
				return fmt.Errorf("platform.url is set: session tokens come from the platform's App Bridge (shopify.idToken()), not from lift")
			}
			fake, err := fakeOAuth(cfg)
			if err != nil {
				return err
			}
			tok, err := fake.SessionToken(strings.ToLower(strings.TrimSpace(args[0])), time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "session token valid for one minute; send it as Authorization: Bearer <token>")
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
}

// existingShop is the answer to creating a shop that is installed under
// any spelling of its domain: which shop it is, so the operator does not
// go looking for a second one.
func existingShop(ctx context.Context, a *App, domain string) error {
	s, err := a.DB.FindShopByDomain(ctx, domain)
	if err != nil {
		return err
	}
	return fmt.Errorf("shop %s is already installed (id %d)", s.Domain, s.ID)
}

func setAPI(use string, enabled bool) *cobra.Command {
	return &cobra.Command{
		Use:   use + " DOMAIN",
		Short: map[bool]string{true: "Enable the public API for a shop", false: "Disable the public API for a shop (its tokens get 403)"}[enabled],
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				s, err := a.DB.FindShopByDomain(ctx, args[0])
				if err != nil {
					return err
				}
				if _, err := a.DB.UpdateShop(ctx, s.ID, store.ShopUpdate{APIEnabled: &enabled}); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "API access for %s: %v\n", s.Domain, enabled)
				return nil
			})
		},
	}
}

func newTokensCmd() *cobra.Command {
	cmd := commandGroup("tokens", "Create and revoke public API tokens")
	var shop, scope string
	create := &cobra.Command{
		Use:   "create --shop DOMAIN [--scope read_experiments|write_experiments]",
		Short: "Create a token; the secret is printed once, alone on stdout",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc := experiment.Scope(scope)
			if sc != experiment.ScopeRead && sc != experiment.ScopeWrite {
				return fmt.Errorf("--scope must be read_experiments or write_experiments, not %q", scope)
			}
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				s, err := a.DB.FindShopByDomain(ctx, shop)
				if err != nil {
					return err
				}
				tok, secret, err := a.DB.CreateToken(ctx, s.ID, sc)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "token %d for %s, scope %s; the secret below is shown only now\n", tok.ID, s.Domain, tok.Scope)
				fmt.Fprintln(cmd.OutOrStdout(), secret)
				return nil
			})
		},
	}
	create.Flags().StringVar(&shop, "shop", "", "shop domain (required)")
	create.Flags().StringVar(&scope, "scope", string(experiment.ScopeRead), "read_experiments or write_experiments (write includes read)")
	create.MarkFlagRequired("shop")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token; requests with it get 401 token_revoked",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(strings.TrimSpace(args[0]), 10, 64)
			if err != nil {
				return fmt.Errorf("token id must be a number, not %q", args[0])
			}
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				if _, err := a.DB.RevokeToken(ctx, id); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "token %d revoked\n", id)
				return nil
			})
		},
	}
	cmd.AddCommand(create, revoke)
	for _, c := range cmd.Commands() {
		config.BindFlags(c.Flags())
	}
	return cmd
}
