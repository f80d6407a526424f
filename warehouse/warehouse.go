// Package warehouse is Lift's ClickHouse adapter: the batched inserts of the
// storefront ingest (insert*.go) and the analytics queries of results.
//
// Everything here must run on ClickHouse 18.16 (what these machines install)
// and on current versions: see DESIGN §4. Only the native protocol is used.
package warehouse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"golang.org/x/sync/singleflight"
)

// Config says where the warehouse is. Zero fields take the defaults below.
type Config struct {
	Addr     string // host:port of the native protocol; default 127.0.0.1:9000
	Database string // default "default"
	Username string // default "default"
	Password string

	DialTimeout  time.Duration // default 5 s
	ReadTimeout  time.Duration // default 60 s; bounds one insert or query round trip
	MaxOpenConns int           // default 8

	// Dial, when set, replaces the TCP dialer (tests cut the connection with it).
	Dial func(ctx context.Context, addr string) (net.Conn, error)

	// Lazy skips the ping in Open, so a server can start while ClickHouse is
	// down: readyz reports it and ingest keeps accepting into its WAL.
	Lazy bool
}

func (c Config) withDefaults() Config {
	c.Addr = cmp.Or(c.Addr, "127.0.0.1:9000")
	c.Database = cmp.Or(c.Database, "default")
	c.Username = cmp.Or(c.Username, "default")
	c.DialTimeout = cmp.Or(c.DialTimeout, 5*time.Second)
	c.ReadTimeout = cmp.Or(c.ReadTimeout, 60*time.Second)
	c.MaxOpenConns = cmp.Or(c.MaxOpenConns, 8)
	return c
}

func (c Config) validate() error {
	if c.DialTimeout < 0 || c.ReadTimeout < 0 || c.MaxOpenConns < 0 {
		return errors.New("timeouts and MaxOpenConns must not be negative")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("addr %q: %w", c.Addr, err)
	}
	return nil
}

// Warehouse is an open connection pool to ClickHouse. It is safe for
// concurrent use.
type Warehouse struct {
	conn driver.Conn
	db   string

	copyWrites singleflight.Group // the rollup copies being written, by test and base part (copyBuild)
}

// Open connects to ClickHouse and checks the connection with a ping (unless
// cfg.Lazy). It returns an error when the server cannot be reached within
// DialTimeout.
func Open(ctx context.Context, cfg Config) (*Warehouse, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("warehouse.Open: %w", err)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Protocol:     clickhouse.Native, // 18.16 rejects the HTTP protocol's settings
		Addr:         []string{cfg.Addr},
		Auth:         clickhouse.Auth{Database: cfg.Database, Username: cfg.Username, Password: cfg.Password},
		DialTimeout:  cfg.DialTimeout,
		ReadTimeout:  cfg.ReadTimeout,
		MaxOpenConns: cfg.MaxOpenConns,
		MaxIdleConns: cfg.MaxOpenConns,
		DialContext:  cfg.Dial,
		Compression:  &clickhouse.Compression{Method: clickhouse.CompressionLZ4},
	})
	if err != nil {
		return nil, fmt.Errorf("warehouse.Open %s: %w", cfg.Addr, err)
	}
	if err := conn.Ping(ctx); err != nil && !cfg.Lazy {
		conn.Close()
		return nil, fmt.Errorf("warehouse.Open %s: %w", cfg.Addr, err)
	}
	return &Warehouse{conn: conn, db: cfg.Database}, nil
}

// Close releases the connections.
func (w *Warehouse) Close() error { return w.conn.Close() }

// Ping reports whether ClickHouse answers.
func (w *Warehouse) Ping(ctx context.Context) error {
	if err := w.conn.Ping(ctx); err != nil {
		return fmt.Errorf("warehouse.Ping: %w", err)
	}
	return nil
}

// Database is the name of the database the tables live in.
func (w *Warehouse) Database() string { return w.db }

// Conn is the underlying driver connection, for the query files of this
// package and for tests that read back what landed.
func (w *Warehouse) Conn() driver.Conn { return w.conn }
