package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/devstack"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/metrics"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// configFile is the --config flag every command shares.
var configFile string

func init() {
	rootCmd.PersistentFlags().StringVar(&configFile, "config", "", "configuration file (default ./lift.yaml when present)")
}

// loadConfig reads the configuration every command shares: defaults <
// lift.yaml < LIFT_* environment < the command's flags. Addresses left empty
// point at the local stack that `lift dev` and `make test` run.
func loadConfig(cmd *cobra.Command) (*config.Config, error) {
	cfg, err := config.Load(configFile, cmd.Flags())
	if err != nil {
		return nil, err
	}
	pointAtLocalStack(cfg)
	return cfg, nil
}

// localConfig is loadConfig for the commands that run the local stack (dev,
// the benches): it first starts every local service the configuration does
// not name an address for.
func localConfig(cmd *cobra.Command, persist bool) (*config.Config, error) {
	cfg, err := config.Load(configFile, cmd.Flags())
	if err != nil {
		return nil, err
	}
	o := stackOptions(cmd, persist)
	o.PostgresURL, o.RedisAddr, o.ClickHouseAddr = cfg.Postgres.URL, cfg.Redis.Addr, cfg.ClickHouse.Addr
	if _, err := devstack.Up(cmd.Context(), o); err != nil {
		return nil, err
	}
	pointAtLocalStack(cfg)
	return cfg, nil
}

// pointAtLocalStack fills empty addresses with the local stack's.
func pointAtLocalStack(cfg *config.Config) {
	if cfg.Postgres.URL == "" {
		cfg.Postgres.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/lift?sslmode=disable", devstack.PostgresPort)
	}
	if cfg.Redis.Addr == "" {
		cfg.Redis.Addr = fmt.Sprintf("127.0.0.1:%d", devstack.RedisPort)
	}
	if cfg.ClickHouse.Addr == "" {
		cfg.ClickHouse.Addr = fmt.Sprintf("127.0.0.1:%d", devstack.ClickHouseTCPPort)
	}
}

// App is a running process's connections, built once by openApp and shared
// by every surface and worker in the process.
type App struct {
	Config    *config.Config
	DB        *store.DB
	Redis     *redis.Client
	Warehouse *warehouse.Warehouse
	Jobs      *jobs.Client
	Platform  platform.Admin
	// PlatformClient is Platform's client, which also runs the install
	// lifecycle's calls (cmd/lift/install.go).
	PlatformClient *platform.Client
	// SigningSecret signs preview and export-download links.
	SigningSecret []byte
	Now           func() time.Time
	Log           *slog.Logger
	Metrics       *metrics.Metrics

	fakePlatform *http.Server
	inspector    *jobs.Inspector // reads queue depths for Metrics (watchQueues)
	sealer       *lazySealer     // the token sealer, built once (cmd/lift/install.go)
	sealerOnce   sync.Once
}

// openPlatform connects to the commerce platform's admin API, or, when no
// URL is configured, serves the built-in fake on a loopback port so a demo
// can launch tests end to end.
func (a *App) openPlatform(cfg *config.Config) (platform.Admin, error) {
	if cfg.Platform.URL != "" {
		a.PlatformClient = platform.NewClient(cfg.Platform.URL, cfg.Platform.Token)
		a.PlatformClient.APIKey, a.PlatformClient.APISecret = cfg.Platform.APIKey, cfg.Platform.APISecret
		a.PlatformClient.Tokens = a.shopToken // cmd/lift/install.go
		a.PlatformClient.RatesURL = a.publicURL() + webhooks.RatesPath
		return a.PlatformClient, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake platform: %w", err)
	}
	fake, err := fakeOAuth(cfg) // cmd/lift/install.go
	if err != nil {
		return nil, err
	}
	if fake.Catalog, err = demoPlatformCatalog(); err != nil {
		return nil, err
	}
	// The demo zones offer Lift rates there, as the demo checkout assumes.
	fake.LiftRatesURL = a.publicURL() + webhooks.RatesPath
	a.fakePlatform = &http.Server{Handler: fake, ReadHeaderTimeout: 5 * time.Second}
	go a.fakePlatform.Serve(ln)
	a.PlatformClient = platform.NewClient("http://"+ln.Addr().String(), "")
	a.PlatformClient.APIKey, a.PlatformClient.APISecret = cfg.Platform.APIKey, cfg.Platform.APISecret
	a.PlatformClient.Tokens = a.shopToken
	a.PlatformClient.RatesURL = a.publicURL() + webhooks.RatesPath
	return a.PlatformClient, nil
}

// experiments is the tests' one service over this process's connections;
// every surface and job that touches a test goes through it.
func (a *App) experiments() *experiment.Service {
	return experiment.NewService(experiment.ServiceConfig{
		Repository:    store.Experiments{DB: a.DB},
		Platform:      a.Platform,
		Jobs:          jobs.ChecksQueue{Client: a.Jobs},
		Eraser:        warehouse.Eraser{W: a.Warehouse}, // reset analytics (session API)
		Now:           a.Now,
		PreviewSecret: a.SigningSecret,
		ReleaseAfter:  a.Config.Jobs.ReleaseAfter, // 0: housekeeping does not release
		Logger:        a.Log,
	})
}

// signingSecret is the configured secret. Without one it is a random secret
// for this process, which is enough for the commands that mint no lasting
// link (migrate, tokens, tools); serve and worker refuse to start without a
// configured one (requireSigningSecret), and lift dev keeps one in its data
// directory (devSecret).
func signingSecret(configured string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	b := make([]byte, 32)
	_, err := rand.Read(b)
	return b, err
}

// requireSigningSecret refuses to run a server or worker on a per-process
// secret: its preview and download links would die with the process and
// fail on every other node.
func (a *App) requireSigningSecret() error {
	if a.Config.SigningSecret == "" {
		return fmt.Errorf("signing_secret is required (set %s, the same on every node) so preview and download links survive restarts and work on every node",
			config.EnvName("signing_secret"))
	}
	return nil
}

// devSecret is one of lift dev's secrets (name: signing-secret,
// webhook-secret): generated once and kept in dataDir, so links survive
// restarts of the dev server and a developer can sign what the fake
// platform signs.
func devSecret(dataDir, name string) (string, error) {
	path := filepath.Join(dataDir, name)
	if b, err := os.ReadFile(path); err == nil {
		if secret := string(bytes.TrimSpace(b)); secret != "" {
			return secret, nil
		}
		return "", fmt.Errorf("%s: %s is empty; delete it to generate a new one", name, path)
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	secret := hex.EncodeToString(b)
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	// Written aside and linked into place: the file is never seen half
	// written, and when two dev processes start at once the second keeps
	// the first's secret (the link fails) instead of replacing it.
	tmp, err := os.CreateTemp(dataDir, name+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(secret + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if os.IsExist(err) {
		return devSecret(dataDir, name)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return secret, nil
}

// redisLog sends go-redis's own lines (a failed dial, once per attempt)
// through the process's logger at debug: readyz and the 503s already say
// Redis is down, in the configured format, without a line per retry.
type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// openApp connects to Postgres, Redis and ClickHouse. Redis and ClickHouse
// being down is not fatal to a server (readyz reports it, ingest buffers in
// its WAL); Postgres is required (openServer spares an ingest node that).
func openApp(ctx context.Context, cfg *config.Config) (*App, error) {
	a, err := dialApp(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := a.DB.Ping(ctx); err != nil {
		a.Close()
		return nil, fmt.Errorf("postgres at %s: %w", describePostgres(cfg.Postgres.URL), err)
	}
	return a, nil
}

// ingestPingTimeout bounds the start's look at Postgres on an ingest node,
// which starts whatever the answer: a hung server must not hold the WAL's
// drain either.
const ingestPingTimeout = 5 * time.Second

// openServer is openApp for lift serve. An ingest node starts without
// Postgres (ops audit O2-3): its WAL holds rows already answered 202, and
// draining them to ClickHouse needs no Postgres, while a node that exited
// kept them there for the whole outage (a rolling restart took every node
// down). Its shop lookups connect once Postgres answers (the pool dials on
// demand); until then tracking for a shop it has not seen answers 503 and
// /readyz says postgres degraded.
func openServer(ctx context.Context, cfg *config.Config) (*App, error) {
	if cfg.Role != "ingest" {
		return openApp(ctx, cfg)
	}
	a, err := dialApp(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, ingestPingTimeout)
	defer cancel()
	if err := a.DB.Ping(pctx); err != nil {
		a.Log.Warn("postgres unreachable: ingest starts without it, drains its WAL to ClickHouse and looks shops up once it answers",
			"postgres", describePostgres(cfg.Postgres.URL), "err", err)
	}
	return a, nil
}

// dialApp builds the process's connections without waiting on any server:
// the Postgres pool, Redis and ClickHouse all connect on first use.
func dialApp(ctx context.Context, cfg *config.Config) (*App, error) {
	a := &App{Config: cfg, Now: func() time.Time { return time.Now().UTC() }, Log: newLogger(cfg, os.Stderr),
		Metrics: metrics.New()}
	// Packages that log without an App (the health checks, the error
	// envelope's 5xx line) use slog's default: make it the same logger, so
	// log.format and log.level hold for every line.
	slog.SetDefault(a.Log)
	redis.SetLogger(redisLog{a.Log})
	var err error
	a.DB, err = store.Open(ctx, store.Config{URL: cfg.Postgres.URL, MaxConns: cfg.Postgres.MaxConns, Now: a.Now, WriteTimeout: cfg.HTTP.WriteTimeout})
	if err != nil {
		return nil, err
	}
	a.Redis = redis.NewClient(&redis.Options{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB, DialTimeout: 2 * time.Second, MaxRetries: 1})
	a.Jobs = jobs.NewClient(jobs.Redis{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB})
	if a.SigningSecret, err = signingSecret(cfg.SigningSecret); err != nil {
		a.Close()
		return nil, err
	}
	if a.Platform, err = a.openPlatform(cfg); err != nil {
		a.Close()
		return nil, err
	}
	a.Warehouse, err = warehouse.Open(ctx, warehouse.Config{Addr: cfg.ClickHouse.Addr, Database: cfg.ClickHouse.Database,
		Username: cfg.ClickHouse.Username, Password: cfg.ClickHouse.Password, Lazy: true})
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Close releases every connection.
func (a *App) Close() error {
	var errs []error
	if a.Warehouse != nil {
		errs = append(errs, a.Warehouse.Close())
	}
	if a.Redis != nil {
		errs = append(errs, a.Redis.Close())
	}
	if a.Jobs != nil {
		errs = append(errs, a.Jobs.Close())
	}
	if a.fakePlatform != nil {
		errs = append(errs, a.fakePlatform.Close())
	}
	if a.inspector != nil {
		errs = append(errs, a.inspector.Close())
	}
	if a.DB != nil {
		a.DB.Close()
	}
	return errors.Join(errs...)
}

// migrate applies pending Postgres migrations and ClickHouse DDL.
func (a *App) migrate(ctx context.Context) error {
	if err := a.DB.Migrate(ctx); err != nil {
		return err
	}
	// The database may not exist yet, so the DDL runs on a connection to
	// the server's default database.
	c := a.Config.ClickHouse
	w, err := warehouse.Open(ctx, warehouse.Config{Addr: c.Addr, Username: c.Username, Password: c.Password,
		ReadTimeout: warehouse.MigrateReadTimeout})
	if err != nil {
		return err
	}
	defer w.Close()
	if err := warehouse.Migrate(ctx, w.Conn(), c.Database, c.Cluster); err != nil {
		return err
	}
	return warehouse.ApplyRetention(ctx, w.Conn(), c.Database, c.Cluster, c.Retention)
}

// describePostgres names the database a connection string points at, for
// messages, without its password: host, port, database and user, read by
// pgx's own parser, and nothing else. Cutting the password out of the text
// missed the forms pgx accepts besides scheme://user:pass@ (libpq's
// keyword/value "password=…", quoted or not, and the ?password= query
// parameter), which printed it in startup errors (ops audit O2-4); other
// parameters (sslpassword, sslkey…) may be secret too, so none is echoed.
func describePostgres(dsn string) string {
	c, err := pgconn.ParseConfig(dsn)
	if err != nil {
		// store.Open has already refused it with pgx's redacted error.
		return "(postgres.url does not parse)"
	}
	return fmt.Sprintf("host=%s port=%d dbname=%s user=%s", c.Host, c.Port, c.Database, c.User)
}
