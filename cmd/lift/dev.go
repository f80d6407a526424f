package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/devstack"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/money"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/web/demo"
	"github.com/liftab/lift/web/tracker"
)

func init() { rootCmd.AddCommand(newDevCmd()) }

// demoDomain is the shop `lift dev` seeds.
const demoDomain = "demo-shop.myshopify.com"

func newDevCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Args:  cobra.NoArgs,
		Short: "Start the local stack, migrate, seed a demo shop and serve everything on one port",
		Long: "lift dev installs and starts Postgres, Redis and ClickHouse under .lift/ (unless LIFT_POSTGRES_URL,\n" +
			"LIFT_REDIS_ADDR or LIFT_CLICKHOUSE_ADDR name servers to use), migrates both stores, seeds the demo\n" +
			"shop " + demoDomain + " with a catalog and one API token per scope, and serves the API,\n" +
			"the storefront ingest and the background worker in one process.\n\n" + configHelp(),
		RunE: runDev,
	}
	cmd.Flags().Int("demo-visitors", 3000, "simulated visitors lift loadgen sends to a new demo shop's first test (0: none)")
	config.BindFlags(cmd.Flags(), "http.addr", "log.level")
	return cmd
}

func runDev(cmd *cobra.Command, _ []string) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := localConfig(cmd, true)
	if err != nil {
		return err
	}
	cfg.Role = "all"
	if cfg.Log.Format == "" {
		cfg.Log.Format = "text" // a person reads dev's logs; servers log JSON for machines
	}
	if cfg.SigningSecret == "" {
		if cfg.SigningSecret, err = devSecret(cfg.DataDir, "signing-secret"); err != nil {
			return err
		}
	}
	if cfg.Platform.WebhookSecret == "" && cfg.Platform.URL == "" {
		// The demo's orders arrive as webhooks of the built-in fake
		// platform, signed with this secret; kept in the data directory so
		// a developer can sign deliveries of their own.
		if cfg.Platform.WebhookSecret, err = devSecret(cfg.DataDir, "webhook-secret"); err != nil {
			return err
		}
	}
	app, err := openApp(ctx, cfg)
	if err != nil {
		return err
	}
	defer app.Close()
	if err := app.migrate(ctx); err != nil {
		return err
	}
	// A missing country database only costs the GeoIP fallback; say so and go on.
	if err := devstack.EnsureGeoIP(ctx, app.geoIPPath(), cmd.ErrOrStderr()); err != nil {
		app.Log.Warn("no country database; get-country-code answers from CDN headers only", "err", err)
	}
	seedCtx := experiment.WithActor(ctx, experiment.Actor{Name: "cli"})
	tokens, err := app.seedDemoShop(seedCtx)
	if err != nil {
		return err
	}
	stopWorker, err := app.startWorker(ctx, 5*time.Second)
	if err != nil {
		return err
	}
	defer stopWorker()
	ready := make(chan string, 1)
	visitors, _ := cmd.Flags().GetInt("demo-visitors")
	go func() {
		addr := <-ready
		printWelcome(cmd.OutOrStdout(), addr, cfg.HTTP.PublicURL, tokens)
		if visitors > 0 {
			base := "http://127.0.0.1" + addr[strings.LastIndex(addr, ":"):]
			if err := demoTraffic(ctx, base, tokens, visitors, cfg.Platform.WebhookSecret, app.demoSnapshot, cmd.OutOrStdout()); err != nil {
				app.Log.Warn("demo traffic", "err", err)
			}
		}
	}()
	return app.serve(ctx, ready)
}

// demoStore is the storefront of /demo/ for the demo catalog, placing its
// orders as the platform would. It is served only while Lift talks to the
// built-in fake platform (no platform.url): against a real platform it would
// let anyone sign orders for any shop.
func (a *App) demoStore() (*demo.Handler, error) {
	if a.Config.Platform.URL != "" {
		return nil, nil
	}
	cat, err := demo.ParseCatalog(catalogdata.Demo)
	if err != nil {
		return nil, err
	}
	var sign func(http.Header, string, string, string, []byte)
	if secret := []byte(a.Config.Platform.WebhookSecret); len(secret) > 0 {
		sign = func(h http.Header, topic, shop, id string, body []byte) {
			webhooks.SetDeliveryHeaders(h, secret, topic, shop, id, body)
		}
	}
	return demo.New(demo.Config{Catalog: cat, DefaultShop: demoDomain, SignWebhook: sign, MinorUnits: money.MinorUnits, AntiFlicker: tracker.AntiFlicker,
		Now: a.Now, Logger: a.Log})
}

// demoSnapshot takes the demo test's snapshot now, through the same results
// service the worker runs.
func (a *App) demoSnapshot(ctx context.Context, testID string) error {
	shop, err := a.DB.FindShopByDomain(ctx, demoDomain)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(testID, 10, 64)
	if err != nil {
		return err
	}
	// The last visitors' rows are acknowledged but may wait in the WAL for
	// up to ingest.flush_interval before ClickHouse has them.
	select {
	case <-time.After(a.Config.Ingest.FlushInterval + time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	return a.results().TakeSnapshot(ctx, shop.ID, id, false)
}

// demoTokens are the demo shop's secrets. They are kept in .lift/ (local,
// never committed) so every `lift dev` can show them, since a secret cannot
// be read back from its stored hash.
type demoTokens struct{ Read, Write string }

func (a *App) seedDemoShop(ctx context.Context) (demoTokens, error) {
	path := filepath.Join(a.Config.DataDir, "demo-tokens")
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		return demoTokens{}, err
	}
	shop, created, err := seedShop(ctx, a.DB, demoDomain, f)
	if err != nil {
		return demoTokens{}, err
	}
	if created {
		os.Remove(path) // tokens of an earlier database name a shop that is gone
	}
	if b, err := os.ReadFile(path); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			return demoTokens{Read: f[0], Write: f[1]}, nil
		}
	}
	var t demoTokens
	for _, p := range []struct {
		scope experiment.Scope
		dst   *string
	}{{experiment.ScopeRead, &t.Read}, {experiment.ScopeWrite, &t.Write}} {
		if _, *p.dst, err = a.DB.CreateToken(ctx, shop.ID, p.scope); err != nil {
			return t, err
		}
	}
	if err := os.MkdirAll(a.Config.DataDir, 0o755); err != nil {
		return t, err
	}
	return t, os.WriteFile(path, []byte(t.Read+"\n"+t.Write+"\n"), 0o600)
}

func printWelcome(w io.Writer, addr, publicURL string, t demoTokens) {
	host := addr
	if strings.HasPrefix(host, "[::]") || strings.HasPrefix(host, "0.0.0.0") {
		host = "localhost" + host[strings.LastIndex(host, ":"):]
	}
	// The install URL starts the OAuth install (docs/install.md) at the
	// address the platform redirects back to: http.public_url when set.
	public := strings.TrimSuffix(publicURL, "/")
	if public == "" {
		public = "http://" + host
	}
	fmt.Fprintf(w, `
Lift is running on http://%[1]s  (api, storefront ingest and worker in one process)

Demo shop %[2]s
  read token:  %[3]s
  write token: %[4]s
  install URL: %[5]s/api/auth?shop=%[2]s  (OAuth install against the built-in fake platform)
  results app: http://%[1]s/app/#token=%[3]s  (open in a browser; signs in with the read token)
  demo store:  http://%[1]s/demo/  (loads /lift.js; a started test splits its visitors, orders arrive as signed webhooks)

Try:
  curl -s http://%[1]s/readyz
  curl -s -H "Authorization: Bearer %[3]s" http://%[1]s/v1/experiments
  curl -s -H "Authorization: Bearer $(.lift/bin/lift shops session-token %[2]s)" http://%[1]s/api/experiments
  curl -s -X POST "http://%[1]s/api/track/event?shop=%[2]s" -H 'Content-Type: application/json' \
    -d '{"sessionId":"6f1c2a8e-4b7d-4e21-9a0b-3c5d7e9f1a2b","visitorId":"v1","eventType":"page_viewed","source":"script","createdAt":"2026-11-21T12:00:00Z","experimentIds":[]}'

Stop with Ctrl-C; the local services keep running (make stop stops them).
`, host, demoDomain, t.Read, t.Write, public)
}
