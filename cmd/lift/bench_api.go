package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/store"
)

var _ = registerBench(newAPIBenchCmd)

type apiBench struct {
	rate     float64
	duration time.Duration
	tests    int
	progress io.Writer // a terminal gets a progress line
}

func newAPIBenchCmd() *cobra.Command {
	var o apiBench
	cmd := &cobra.Command{
		Use:   "api",
		Args:  cobra.NoArgs,
		Short: "Public API reads at a fixed rate: p50/p99 of GET /v1/experiments and GET /v1/experiments/{id}",
		Long: `Starts the real API (auth, rate limiter, scopes, handlers) in this process on the local stack,
installs a scratch shop with a catalog and some tests, then sends reads at a fixed rate (open loop,
so a slow answer does not slow the load) and prints latency percentiles per route.
Target: p99 under 20 ms at 200 req/s. The token's read budget is raised so the limiter counts
every request without refusing any.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	cmd.Flags().Float64Var(&o.rate, "rate", 200, "requests per second")
	cmd.Flags().DurationVar(&o.duration, "duration", 15*time.Second, "how long to send")
	cmd.Flags().IntVar(&o.tests, "tests", 50, "tests to create in the scratch shop")
	config.BindFlags(cmd.Flags())
	return cmd
}

func (o *apiBench) run(cmd *cobra.Command) error {
	ctx := experiment.WithActor(cmd.Context(), experiment.Actor{Name: "cli"})
	cfg, err := localConfig(cmd, false)
	if err != nil {
		return err
	}
	cfg.RateLimit.Reads = 1 << 30
	a, err := openApp(ctx, cfg)
	if err != nil {
		return err
	}
	// Errors only: an access-log line per request would bury the report.
	a.Log = slog.New(benchLogHandler{slog.NewTextHandler(cmd.ErrOrStderr(), nil)})
	defer a.Close()
	if err := a.migrate(ctx); err != nil {
		return err
	}
	token, ids, err := a.benchShop(ctx, o.tests)
	if err != nil {
		return err
	}
	r, stop, err := a.router("api")
	if err != nil {
		return err
	}
	defer stop(context.Background())
	srv, err := serveLoopback(r)
	if err != nil {
		return err
	}
	defer srv.Close()
	out := cmd.OutOrStdout()
	o.progress = out
	fmt.Fprintf(out, "API reads, open loop at %.0f req/s for %s (%d tests in the shop)\n", o.rate, o.duration, len(ids))
	routes := []string{"/v1/experiments?limit=20", "/v1/experiments/" + ids[0]}
	lat := o.load("http://"+srv.Addr, token, routes)
	for i, route := range routes {
		l := lat[i]
		slices.Sort(l.ok)
		fmt.Fprintf(out, "  GET %-28s p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (%d ok, %d failed)\n",
			route, pct(l.ok, 0.5), pct(l.ok, 0.9), pct(l.ok, 0.99), pct(l.ok, 1), len(l.ok), l.failed)
	}
	return nil
}

type routeLatency struct {
	ok     []time.Duration
	failed int
}

// load sends requests at o.rate, alternating routes, each on its own
// goroutine at its scheduled time.
func (o *apiBench) load(base, token string, routes []string) []routeLatency {
	c := benchClient(64)
	out := make([]routeLatency, len(routes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / o.rate)
	start := time.Now()
	var sent atomic.Int64
	stop := startProgress(o.progress, "bench api", "requests", 0, start.Add(o.duration), sent.Load)
	defer stop()
	for i := 0; time.Since(start) < o.duration; i++ {
		sent.Add(1)
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, base+routes[k], nil)
			req.Header.Set("Authorization", "Bearer "+token)
			t0 := time.Now()
			resp, err := c.Do(req)
			d := time.Since(t0)
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				out[k].ok = append(out[k].ok, d)
			} else {
				out[k].failed++
			}
		}(i % len(routes))
	}
	wg.Wait()
	return out
}

// benchShop installs a scratch shop with the demo catalog and n theme tests,
// and returns a read token and the test ids.
func (a *App) benchShop(ctx context.Context, n int) (string, []string, error) {
	shop, err := a.DB.CreateShop(ctx, experiment.Shop{Domain: fmt.Sprintf("bench-api-%d.myshopify.com", time.Now().UnixNano())})
	if err != nil {
		return "", nil, err
	}
	on := true
	if _, err := a.DB.UpdateShop(ctx, shop.ID, store.ShopUpdate{APIEnabled: &on}); err != nil {
		return "", nil, err
	}
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		return "", nil, err
	}
	if err := a.DB.ImportCatalog(ctx, shop.ID, f); err != nil {
		return "", nil, err
	}
	_, write, err := a.DB.CreateToken(ctx, shop.ID, experiment.ScopeWrite)
	if err != nil {
		return "", nil, err
	}
	r, stop, err := a.router("api")
	if err != nil {
		return "", nil, err
	}
	defer stop(ctx)
	srv, err := serveLoopback(r)
	if err != nil {
		return "", nil, err
	}
	defer srv.Close()
	ids, err := createThemeTests("http://"+srv.Addr, write, n)
	return write, ids, err
}

// createThemeTests creates n theme tests through the API and returns their ids.
func createThemeTests(base, token string, n int) ([]string, error) {
	c := benchClient(4)
	var ids []string
	for i := 0; i < n; i++ {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/experiments", strings.NewReader(themeTestBody(fmt.Sprintf("Bench theme test %d", i))))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		var body struct {
			ID string `json:"id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated {
			return nil, fmt.Errorf("create bench test: status %d: %v", resp.StatusCode, err)
		}
		ids = append(ids, body.ID)
	}
	return ids, nil
}

// themeTestBody is a valid theme test for the demo catalog.
func themeTestBody(name string) string {
	return fmt.Sprintf(`{"type":"theme","name":%q,"test_groups":[{"index":0,"name":"Control","split":50},`+
		`{"index":1,"name":"Variant","split":50,"content":{"theme_id":"gid://shopify/OnlineStoreTheme/1202"}}]}`, name)
}
