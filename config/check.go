package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// unknownKeys refuses a key that v holds and keys does not declare: one the
// file spells wrong (ingest.disk_budgett) was dropped without a word, and
// the server ran on the default (ops audit O2-5). Defaults and LIFT_*
// bindings are all declared keys, so only the file can bring one.
func unknownKeys(v *viper.Viper, file string) error {
	var unknown []string
	for _, k := range v.AllKeys() {
		if !slices.ContainsFunc(keys, func(d key) bool { return d.name == k }) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("config: %s: unknown key %s (lift config lists every key)", file, unknown[0])
}

// checkNotEmpty refuses an empty value for the keys whose default is not
// empty and for which empty means nothing. An empty LIFT_* variable is a
// value (AllowEmptyEnv), so that LIFT_WORKER_METRICS_ADDR= can turn the
// worker's listener off as README says (ops audit O2-6); for these keys it
// would silently mean something else (http.addr "" listens on port 80,
// data_dir "" is the working directory), so it is refused like any other
// bad value. The numbers, durations, role and log level are refused by
// their own checks.
func (c *Config) checkNotEmpty() error {
	for _, f := range []struct{ key, value string }{{"data_dir", c.DataDir}, {"http.addr", c.HTTP.Addr},
		{"clickhouse.database", c.ClickHouse.Database}, {"clickhouse.username", c.ClickHouse.Username},
		{"platform.scopes", c.Platform.Scopes}} {
		if f.value == "" {
			return fmt.Errorf("config: %s must not be empty (leave %s unset for the default)", f.key, EnvName(f.key))
		}
	}
	return nil
}

// checkAddresses refuses the dependency addresses and the platform URL a
// typo would turn into a server that starts and then fails every call that
// needs them (ops audit O2-5: redis.addr without a port, clickhouse.addr
// with port -5, platform.url "htps//…" all started).
func (c *Config) checkAddresses() error {
	for _, a := range []struct{ key, addr string }{{"redis.addr", c.Redis.Addr}, {"clickhouse.addr", c.ClickHouse.Addr}} {
		if a.addr == "" {
			continue // the local stack's
		}
		_, port, err := net.SplitHostPort(a.addr)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("config: %s %q must be host:port with a port from 1 to 65535", a.key, a.addr)
		}
	}
	if u := c.Platform.URL; u != "" {
		// {shop} is the per-shop host of a real platform (https://{shop}/admin,
		// platform.Client.shopBase); url.Parse refuses braces in a host.
		p, err := url.Parse(strings.ReplaceAll(u, "{shop}", "shop.invalid"))
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("config: platform.url %q must be an absolute http(s) URL such as https://{shop}/admin (a real platform) or http://127.0.0.1:8099 (a fake serving every shop)", u)
		}
		// A real platform calls back the addresses the install registers:
		// without a public URL they would be this node's listen address.
		if strings.Contains(u, "{shop}") && c.HTTP.PublicURL == "" {
			return fmt.Errorf("config: http.public_url is required with platform.url %q: the install's redirect URI, the webhook subscriptions and the storefront script tag are built from it", u)
		}
	}
	return nil
}
