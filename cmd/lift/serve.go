package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/spf13/cobra"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/api/apidoc"
	"github.com/liftab/lift/api/session"
	"github.com/liftab/lift/api/storefront"
	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/ingest"
	"github.com/liftab/lift/warehouse"
	webapp "github.com/liftab/lift/web/app"
	"github.com/liftab/lift/web/demo"
	"github.com/liftab/lift/web/tracker"
)

func init() { rootCmd.AddCommand(newServeCmd()) }

func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "serve",
		// `lift serve ingest` ran role all, the API's secrets required,
		// on what its operator meant for an ingest node (ops audit O2-7).
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q; the role is a flag: --role %s", args[0], cmd.CommandPath(), args[0])
			}
			return nil
		},
		Short: "Serve the merchant API (/v1, /api admin) and/or the storefront ingest (/api/track, /api/observe)",
		Long: "Serve HTTP. --role api serves the merchant surfaces, --role ingest the storefront tracking\nendpoints (scale it apart behind any load balancer; each node keeps its own WAL), --role all both.\n" +
			"An ingest node starts while Postgres is unreachable: it drains its WAL to ClickHouse and connects\nwhen Postgres answers (/readyz degraded until then).\n\n" + configHelp(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withServer(cmd, "system", openServer, func(ctx context.Context, a *App) error { return a.serve(ctx, nil) })
		},
	}
	config.BindFlags(cmd.Flags(), "role", "http.addr", "log.format", "log.level")
	return cmd
}

// configHelp is the note every command that reads configuration ends its
// help with; the keys themselves are listed once, by `lift config`.
func configHelp() string {
	return "Every configuration key is also a LIFT_* variable and a flag (http.max_body_bytes:\n" +
		"LIFT_HTTP_MAX_BODY_BYTES, --http-max-body-bytes); `lift config` lists them all."
}

// serve runs the HTTP server for the configured role until ctx ends, then
// drains requests in flight and the ingest WAL batcher. ready, when not nil,
// receives the listening address once requests are accepted.
func (a *App) serve(ctx context.Context, ready chan<- string) error {
	role := a.Config.Role
	if role != "ingest" {
		if err := a.requireSigningSecret(); err != nil {
			return err
		}
	}
	mctx, cancel := ctx, context.CancelFunc(func() {})
	if role == "ingest" {
		mctx, cancel = context.WithTimeout(ctx, ingestPingTimeout)
	}
	err := a.requireMigrated(mctx)
	cancel()
	if err != nil {
		// An ingest node starts through a Postgres outage (openServer);
		// its readiness check runs this check once Postgres answers. A
		// database that answers and lacks migrations still stops it.
		if role != "ingest" || errors.Is(err, errUnmigrated) {
			return err
		}
		a.Log.Warn("ingest: the migration check waits for Postgres; /readyz reports postgres degraded until it passes", "err", err)
	}
	if role != "ingest" {
		if err := a.requireTokenKey(ctx); err != nil {
			return err
		}
	}
	engine, closeIngest, err := a.router(role)
	if err != nil {
		return err
	}
	srv := a.httpServer(engine)
	ln, err := net.Listen("tcp", a.Config.HTTP.Addr)
	if err != nil {
		closeIngest(ctx)
		return fmt.Errorf("serve: %w", err)
	}
	a.Log.Info("serving", "addr", ln.Addr().String(), "role", role)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.Config.HTTP.ShutdownGrace)
	defer cancel()
	shutdownErr := srv.Shutdown(shutdownCtx)
	ingestErr := closeIngest(shutdownCtx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, shutdownErr, ingestErr)
}

// router builds the gin engine with the surfaces of role mounted. The
// returned func stops what the surfaces started (the ingester).
func (a *App) router(role string) (*gin.Engine, func(context.Context) error, error) {
	r := gin.New() // in release mode: see main.go
	a.observe(r)   // cmd/lift/observe.go: request ids, metrics, access log, recovery; GET /metrics
	// Before any route: forwarded headers (client address, host, CDN
	// country) count only from the proxies the operator named.
	if err := api.TrustProxies(r, a.Config.HTTP.TrustedProxies); err != nil {
		return nil, nil, err
	}
	r.HandleMethodNotAllowed = false
	health := a.health(role)
	// The storefront tracker, on every role: storefronts load it from the
	// ingest nodes they send to, the demo store from the API.
	r.GET(tracker.Path, gin.WrapH(tracker.Handler()))
	r.HEAD(tracker.Path, gin.WrapH(tracker.Handler()))
	stop := func(context.Context) error { return nil }

	if role == "api" || role == "all" {
		a.watchQueues()
		v := a.v1()
		v.Mount(r)
		if err := mountMCP(r, v); err != nil { // cmd/lift/mcp.go: the v1 operations as MCP tools
			return nil, nil, err
		}
		apidoc.Mount(r)               // GET /openapi.json (every surface) and /docs, no token
		a.sessionAPI().Mount(r)       // the admin panel's /api/experiments…
		a.webhooks().Mount(r)         // cmd/lift/webhooks.go
		a.installAPI().Mount(r)       // cmd/lift/install.go
		a.exportsAPI().MountPublic(r) // signed export downloads carry no token
		if err := mountResultsApp(r); err != nil {
			return nil, nil, err
		}
		shopfront, err := a.demoStore() // cmd/lift/dev.go: /demo/, with the fake platform only
		if err != nil {
			return nil, nil, err
		}
		if shopfront != nil {
			r.GET(demo.Path+"*page", gin.WrapH(shopfront))  // pages, cart.js, assets
			r.POST(demo.Path+"*page", gin.WrapH(shopfront)) // cart changes, checkout
		}
	}
	if role == "ingest" || role == "all" {
		in, err := ingest.New(ingest.Config{Dir: filepath.Join(a.Config.DataDir, "wal"), DiskBudget: a.Config.Ingest.DiskBudget,
			FlushInterval: a.Config.Ingest.FlushInterval, Now: a.Now, Logger: a.Log, Observer: a.metrics().Ingest()}, a.Warehouse)
		if err != nil {
			return nil, nil, err
		}
		a.metrics().WatchWAL(func() (int64, int64) { st := in.Stats(); return st.WALBytes, st.WALSegments })
		raiseGOMAXPROCS()
		geo, err := storefront.OpenGeoIP(a.geoIPPath()) // nil when absent: countryCode null unless a CDN header says it
		if err != nil {
			return nil, nil, err
		}
		if err := in.Start(); err != nil {
			geo.Close()
			return nil, nil, err
		}
		stop = func(ctx context.Context) error { defer geo.Close(); return in.Close(ctx) }
		health.Required["wal"] = in.Accepting
		sf, err := storefront.New(storefront.Config{Metadata: analyticsMetadata{a.DB}, Ingester: in, Shops: a.DB, Geo: geo,
			Tests: a.experiments(), Logger: a.Log})
		if err != nil {
			stop(context.Background())
			return nil, nil, err
		}
		sf.Mount(r)
	}
	api.MountHealth(r, health)
	r.NoRoute(func(c *gin.Context) {
		if strings.HasPrefix(c.Request.URL.Path, "/v1/") {
			v1.NotFound(c)
			return
		}
		c.JSON(http.StatusNotFound, gin.H{"status": "error", "message": "not found"})
	})
	return r, stop, nil
}

// mountResultsApp serves the merchant's results app (web/app) at /app/; it
// calls /v1 from the browser with the merchant's token.
func mountResultsApp(r gin.IRouter) error {
	h, err := webapp.New()
	if err != nil {
		return err
	}
	r.GET("/app", gin.WrapH(h))
	r.GET(webapp.Prefix+"*file", gin.WrapH(h))
	r.HEAD(webapp.Prefix+"*file", gin.WrapH(h))
	return nil
}

// v1 builds the public API with this process's connections.
func (a *App) v1() *v1.API {
	c := a.Config
	limits := map[api.Class]int{api.ClassRead: c.RateLimit.Reads, api.ClassWrite: c.RateLimit.Writes, api.ClassQuery: c.RateLimit.Queries,
		api.ClassUnauthenticated: c.RateLimit.Unauthenticated}
	results := a.resultsAPI() // cmd/lift/results.go
	return &v1.API{
		Tokens:       a.DB,
		Keys:         a.DB,
		Experiments:  &v1.Experiments{Service: a.experiments(), Summary: results.Summary, Warnings: a.DB},
		Results:      results,
		Exports:      a.exportsAPI(), // cmd/lift/webhooks.go
		Limiter:      api.NewRateLimiter(a.Redis, c.RateLimit.Window, limits, a.Now),
		Idempotency:  api.IdempotencyConfig{StaleAfter: c.Idempotency.StaleAfter, Retention: c.Idempotency.Retention},
		MaxBodyBytes: c.HTTP.MaxBodyBytes,
		Now:          a.Now,
	}
}

// sessionAPI builds the admin panel's session surface over the same tests'
// service as /v1.
func (a *App) sessionAPI() *session.API {
	c := a.Config
	return &session.API{Service: a.experiments(), Shops: a.DB, APIKey: c.Platform.APIKey, APISecret: c.Platform.APISecret,
		AdminKey: c.Admin.APIKey, Orders: warehouse.OrderLookup{W: a.Warehouse}, Scripts: a.installService(), Warnings: a.DB, MaxBodyBytes: c.HTTP.MaxBodyBytes, Now: a.Now,
		Analytics: a.analytics()} // cmd/lift/results.go
}

// geoIPPath is where the storefront's country database is read from.
func (a *App) geoIPPath() string {
	return cmp.Or(a.Config.Ingest.GeoIPPath, filepath.Join(a.Config.DataDir, "geoip", "dbip-country.mmdb"))
}

// health is what /readyz of role checks. Postgres is required by the API
// (every request reads it); Redis (rate limits, jobs: reads are served
// without it) and ClickHouse (results, analytics) only degrade it. An
// ingest node is ready while its WAL takes appends (the ingest branch of
// router adds it); Postgres only degrades it: the shops it has seen keep
// tracking through a Postgres outage, and a load balancer that dropped
// every ingest node for it would lose all of them.
func (a *App) health(role string) api.Health {
	h := api.Health{Required: map[string]api.Check{}, Optional: map[string]api.Check{}}
	if role == "api" || role == "all" {
		h.Required["postgres"] = a.DB.Ping
		h.Optional["redis"] = func(ctx context.Context) error { return a.Redis.Ping(ctx).Err() }
		h.Optional["clickhouse"] = a.Warehouse.Ping
	} else {
		h.Optional["postgres"] = a.migratedPostgres()
	}
	return h
}

// migratedPostgres checks that Postgres answers and, until that has passed
// once, that it has this binary's migrations: an ingest node that started
// during an outage ran no migration check at start (serve).
func (a *App) migratedPostgres() api.Check {
	var migrated atomic.Bool
	return func(ctx context.Context) error {
		if migrated.Load() {
			return a.DB.Ping(ctx)
		}
		if err := a.requireMigrated(ctx); err != nil {
			return err
		}
		migrated.Store(true)
		return nil
	}
}

// errUnmigrated is what requireMigrated answers for a database that
// answers and lacks migrations, as against one it could not reach.
var errUnmigrated = errors.New("run `lift migrate` first")

// requireMigrated refuses to start on a Postgres database that lacks this
// binary's migrations: the server would start, report ready and answer 500
// to every request (the ops audit). lift dev and lift migrate apply them.
// Errors: errUnmigrated, or why Postgres could not be read.
func (a *App) requireMigrated(ctx context.Context) error {
	pending, err := a.DB.Pending(ctx)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		return fmt.Errorf("the Postgres database %s lacks %d migration(s) of this binary, from %s: %w",
			describePostgres(a.Config.Postgres.URL), len(pending), pending[0], errUnmigrated)
	}
	return nil
}

// httpServer is the server of every role. Without a read timeout a client
// that declares a body and stops sending holds its connection and goroutine
// for ever (the fuzz audit waited 200 s); IdleTimeout closes kept-alive
// connections left idle.
func (a *App) httpServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: a.Config.HTTP.ReadTimeout, IdleTimeout: 2 * time.Minute}
}

// raiseGOMAXPROCS tunes the runtime for the ingest role. An fsync blocks its
// thread, and the P stays with it until the scheduler hands it off; with
// GOMAXPROCS = cores (2 here) the WAL's fsyncs kept the HTTP goroutines from
// running (measured by lift bench ingest: about 9k events/s at 2, about 20k
// at 8, same machine and load), so it gets 4 Ps per core. Its live heap is
// small (WAL buffers and one batch), so the collector may let it grow 4x
// instead of 2x before a cycle (GC was a tenth of the CPU at 100). Explicit
// GOMAXPROCS or GOGC settings are left alone.
func raiseGOMAXPROCS() {
	if os.Getenv("GOMAXPROCS") == "" {
		if n := 4 * runtime.NumCPU(); runtime.GOMAXPROCS(0) < n {
			runtime.GOMAXPROCS(n)
		}
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
