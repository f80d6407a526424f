// Package devstack runs the local Postgres, Redis and ClickHouse that `lift
// dev` and the tests use (DESIGN §3). It installs a missing server from
// Debian's packages when it can, starts each one detached with its output in
// files, and reuses one that already answers. An address given in the
// configuration means "use that server" and nothing is started for it.
package devstack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Ports of the local services; chosen away from the defaults so a system
// Postgres, Redis or ClickHouse on the same machine does not collide.
const (
	PostgresPort       = 54329
	RedisPort          = 16379
	ClickHouseTCPPort  = 19000
	ClickHouseHTTPPort = 18123
)

// Options says where the stack lives and which servers are given.
type Options struct {
	Root string    // the checkout; local state goes to Root/.lift
	Log  io.Writer // progress lines for a person; nil discards

	// Persist turns on Redis AOF (lift dev keeps queued jobs across restarts).
	Persist bool
	// Browser also installs Debian's chromium when it is missing, for the
	// browser tests `make test` runs (nothing is started for it).
	Browser bool

	// Addresses already provided (LIFT_POSTGRES_URL and friends): a non-empty
	// one is used as it is and that server is not started.
	PostgresURL    string
	RedisAddr      string
	ClickHouseAddr string
}

// Stack is what is running: the addresses to connect to and which of the
// servers this call started (so a caller can stop exactly those).
type Stack struct {
	PostgresURL    string
	RedisAddr      string
	ClickHouseAddr string
	Started        []string
}

// installable is what install needs of a service: its Debian packages.
type installable interface {
	name() string
	binaries() (missing []string, pkgs []string)
}

// service is one local server.
type service interface {
	installable
	ready(ctx context.Context) bool
	start(ctx context.Context) error
	// stop stops the service when it runs, and reports whether it did.
	stop(ctx context.Context) (bool, error)
}

// Up ensures every service that was not given is running, and returns their
// addresses. It holds a lock file so that parallel test binaries starting at
// once do not race to start the same server.
func Up(ctx context.Context, o Options) (*Stack, error) {
	l, err := newLayout(o)
	if err != nil {
		return nil, err
	}
	unlock, err := l.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()

	st := &Stack{PostgresURL: o.PostgresURL, RedisAddr: o.RedisAddr, ClickHouseAddr: o.ClickHouseAddr}
	var want []service
	if st.PostgresURL == "" {
		st.PostgresURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/lift?sslmode=disable", PostgresPort)
		want = append(want, &postgres{l: l})
	}
	if st.RedisAddr == "" {
		st.RedisAddr = fmt.Sprintf("127.0.0.1:%d", RedisPort)
		want = append(want, &redis{l: l, persist: o.Persist})
	}
	if st.ClickHouseAddr == "" {
		st.ClickHouseAddr = fmt.Sprintf("127.0.0.1:%d", ClickHouseTCPPort)
		want = append(want, &clickhouse{l: l})
	}
	need := make([]installable, 0, len(want)+1)
	for _, s := range want {
		need = append(need, s)
	}
	if o.Browser {
		need = append(need, chromiumPackage{})
	}
	if err := l.install(ctx, need); err != nil {
		return nil, err
	}
	for _, s := range want {
		if s.ready(ctx) {
			l.logf("%s: already running", s.name())
			continue
		}
		l.logf("%s: starting", s.name())
		if err := s.start(ctx); err != nil {
			return nil, fmt.Errorf("devstack: start %s: %w", s.name(), err)
		}
		if err := waitReady(ctx, s, 60*time.Second); err != nil {
			return nil, fmt.Errorf("devstack: %s did not become ready (logs under %s): %w", s.name(), l.dir, err)
		}
		st.Started = append(st.Started, s.name())
	}
	return st, nil
}

// Down stops the named local services (all three when names is empty).
// Stopping one that is not running is not an error.
func Down(ctx context.Context, o Options, names ...string) error {
	l, err := newLayout(o)
	if err != nil {
		return err
	}
	all := []service{&postgres{l: l}, &redis{l: l}, &clickhouse{l: l}}
	var errs []error
	for _, s := range all {
		if len(names) > 0 && !contains(names, s.name()) {
			continue
		}
		switch stopped, err := s.stop(ctx); {
		case err != nil:
			errs = append(errs, fmt.Errorf("stop %s: %w", s.name(), err))
		case stopped:
			l.logf("%s: stopped", s.name())
		default:
			l.logf("%s: was not running", s.name())
		}
	}
	return errors.Join(errs...)
}

func waitReady(ctx context.Context, s service, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for !s.ready(ctx) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// layout is where the stack keeps its files.
type layout struct {
	root string // the checkout
	dir  string // root/.lift
	// pgDir holds the Postgres cluster. Postgres refuses to run as root and
	// its own user must reach the directory, which a checkout under a 0700
	// home does not allow, so it lives under /var/tmp keyed by the checkout.
	pgDir string
	log   io.Writer
}

func newLayout(o Options) (*layout, error) {
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return nil, fmt.Errorf("devstack: %w", err)
	}
	sum := sha256.Sum256([]byte(root))
	l := &layout{
		root:  root,
		dir:   filepath.Join(root, ".lift"),
		pgDir: filepath.Join("/var/tmp", "lift-"+hex.EncodeToString(sum[:6])),
		log:   o.Log,
	}
	if l.log == nil {
		l.log = io.Discard
	}
	return l, os.MkdirAll(l.dir, 0o755)
}

func (l *layout) logf(format string, args ...any) {
	fmt.Fprintf(l.log, "devstack: "+format+"\n", args...)
}

// lock takes an exclusive lock on .lift/stack.lock until the returned func.
func (l *layout) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(l.dir, "stack.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("devstack: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("devstack: lock: %w", err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// FindRoot walks up from dir to the directory holding go.mod: the checkout.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("devstack: no go.mod above the working directory")
		}
		dir = parent
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
