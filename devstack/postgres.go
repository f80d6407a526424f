package devstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

type postgres struct{ l *layout }

func (p *postgres) name() string { return "postgres" }

// binDir finds the newest Debian Postgres install.
func (p *postgres) binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i]
		}
	}
	if pg := lookPath("pg_ctl"); pg != "" {
		return filepath.Dir(pg)
	}
	return ""
}

func (p *postgres) binaries() ([]string, []string) {
	if p.binDir() == "" {
		return []string{"pg_ctl", "initdb"}, []string{"postgresql"}
	}
	return nil, nil
}

func (p *postgres) dataDir() string { return filepath.Join(p.l.pgDir, "data") }
func (p *postgres) logPath() string { return filepath.Join(p.l.pgDir, "postgres.log") }

func (p *postgres) ready(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", PostgresPort)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE lift"); err != nil && !isDuplicateDatabase(err) {
		return false
	}
	return true
}

func isDuplicateDatabase(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42P04"
}

// asPostgres runs a Postgres tool as the postgres user when we are root:
// initdb and postgres refuse to run as root.
func (p *postgres) asPostgres(ctx context.Context, tool string, args ...string) error {
	bin := filepath.Join(p.binDir(), tool)
	if os.Geteuid() == 0 {
		return runLogged(ctx, p.logPath(), "runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	}
	return runLogged(ctx, p.logPath(), bin, args...)
}

func (p *postgres) prepareDir() error {
	if err := os.MkdirAll(p.l.pgDir, 0o755); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("no postgres user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(p.l.pgDir, uid, gid); err != nil {
		return err
	}
	f, err := os.OpenFile(p.logPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chown(p.logPath(), uid, gid)
}

func (p *postgres) start(ctx context.Context) error {
	if err := p.prepareDir(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(p.dataDir(), "PG_VERSION")); err != nil {
		if err := p.asPostgres(ctx, "initdb", "-D", p.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"); err != nil {
			return err
		}
	}
	// A leftover pid file from a killed server stops pg_ctl from starting.
	if err := p.asPostgres(ctx, "pg_ctl", "-D", p.dataDir(), "status"); err != nil {
		os.Remove(filepath.Join(p.dataDir(), "postmaster.pid"))
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=128MB", PostgresPort, p.l.pgDir)
	os.Symlink(p.l.pgDir, filepath.Join(p.l.dir, "postgres"))
	return p.asPostgres(ctx, "pg_ctl", "-D", p.dataDir(), "-l", p.logPath(), "-o", opts, "-w", "-t", "60", "start")
}

func (p *postgres) stop(ctx context.Context) (bool, error) {
	if _, err := os.Stat(filepath.Join(p.dataDir(), "postmaster.pid")); err != nil {
		return false, nil
	}
	// pg_ctl checks that the pid file names a running postmaster of this
	// data directory, and removes a stale one itself.
	return true, p.asPostgres(ctx, "pg_ctl", "-D", p.dataDir(), "-m", "fast", "-w", "stop")
}
