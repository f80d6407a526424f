package lifttest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/migrations"
	"github.com/liftab/lift/store"
)

// PostgresURL creates a database migrated to head and returns its URL. The
// database is dropped when the test ends.
//
// It is a clone (CREATE DATABASE … TEMPLATE) of a template database that was
// migrated once and is reused by every test and every test binary while the
// migrations stay the same: cloning costs a file copy, migrating costs every
// statement of every migration, per test.
func PostgresURL(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	base, err := url.Parse(Stack(t).PostgresURL)
	if err != nil {
		t.Fatalf("lifttest: postgres url: %v", err)
	}
	admin := *base
	admin.Path = "/postgres"
	tmpl, err := migratedTemplate(ctx, *base)
	if err != nil {
		t.Fatalf("lifttest: postgres template: %v", err)
	}
	name := Name("lift_test_")
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		t.Fatalf("lifttest: connect postgres: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tmpl); err != nil {
		t.Fatalf("lifttest: create database from %s: %v", tmpl, err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin.String())
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u := *base
	u.Path = "/" + name
	return u.String()
}

var template struct {
	once sync.Once
	name string
	err  error
}

// migratedTemplate returns the name of the template database for the
// current migrations, building it on first use. The name carries a hash of
// the migrations, so a branch with other migrations gets a template of its
// own and an unchanged tree reuses the one already on the server.
func migratedTemplate(ctx context.Context, base url.URL) (string, error) {
	template.once.Do(func() {
		sum, err := migrationsHash()
		if err != nil {
			template.err = err
			return
		}
		template.name = "lift_tmpl_" + hex.EncodeToString(sum[:8])
		template.err = buildTemplate(ctx, base, template.name, int64(binary.BigEndian.Uint64(sum[:8])))
	})
	return template.name, template.err
}

// migrationsHash identifies the schema store.Migrate produces.
func migrationsHash() ([32]byte, error) {
	all, err := migrations.All()
	if err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "store.Migrate v1\n") // bump if Migrate's own bookkeeping changes
	for _, m := range all {
		fmt.Fprintf(h, "%d %s %d\n%s\n", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// buildTemplate makes sure name exists, fully migrated, as a template.
//
// Several test binaries start at once: an advisory lock (on the postgres
// database, keyed by the hash) lets one build while the others wait and then
// find it done. A template is marked IS_TEMPLATE only once its migrations
// committed, so one without the mark is a build cut short and is rebuilt.
// It is also marked ALLOW_CONNECTIONS false: Postgres refuses to clone a
// database another session is connected to, and nothing may connect to the
// template by mistake and block every clone.
func buildTemplate(ctx context.Context, base url.URL, name string, lock int64) error {
	admin := base
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lock)

	var ready bool
	switch err := conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&ready); {
	case err == nil && ready:
		return nil
	case err == nil:
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop a half-built %s: %w", name, err)
		}
	case !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return err
	}
	u := base
	u.Path = "/" + name
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		return err
	}
	err = store.Migrate(ctx, pool)
	pool.Close() // before the mark: a clone waits for sessions on its template
	if err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true")
	return err
}
