package warehouse

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/liftab/lift/clickhouse"
)

// Migrate creates the database if needed and applies every DDL statement of
// package clickhouse not yet recorded in {db}.schema_migrations, rendered
// for the server's version (migrate_server.go). The
// statements are idempotent (IF NOT EXISTS), so two processes migrating at
// once do no harm. cluster is the clickhouse.cluster setting ("" for one node).
func Migrate(ctx context.Context, conn driver.Conn, db, cluster string) error {
	stmts, err := clickhouse.All()
	if err != nil {
		return err
	}
	onCluster := ""
	if cluster != "" {
		onCluster = "ON CLUSTER " + quoteIdent(cluster)
	}
	if err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE IF NOT EXISTS %s %s", quoteIdent(db), onCluster)); err != nil {
		return fmt.Errorf("warehouse.Migrate: create database %s: %w", db, err)
	}
	done, err := appliedVersions(ctx, conn, db)
	if err != nil {
		return err
	}
	server, err := readServerVersion(ctx, conn)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if done[s.Version] {
			continue
		}
		sql, skip := renderForServer(s.SQL, server)
		if skip {
			continue // for a later server version; not recorded, so it runs after an upgrade
		}
		sql = renderDDL(sql, db, cluster)
		added, err := columnsAdded(ctx, conn, db, sql)
		if err != nil {
			return fmt.Errorf("warehouse.Migrate: %04d_%s: %w", s.Version, s.Name, err)
		}
		if added {
			// An ADD COLUMN that ran before its record was written: 18.16 has
			// no IF NOT EXISTS for columns, and a second run would fail.
			if err := record(ctx, conn, db, s); err != nil {
				return fmt.Errorf("warehouse.Migrate: record %04d: %w", s.Version, err)
			}
			continue
		}
		if err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("warehouse.Migrate: %04d_%s: %w", s.Version, s.Name, err)
		}
		if table, ok := mutationTable(sql); ok {
			if err := waitMutations(ctx, conn, db, table); err != nil {
				return fmt.Errorf("warehouse.Migrate: %04d_%s: %w", s.Version, s.Name, err)
			}
		}
		if err := record(ctx, conn, db, s); err != nil {
			return fmt.Errorf("warehouse.Migrate: record %04d: %w", s.Version, err)
		}
	}
	return nil
}

func appliedVersions(ctx context.Context, conn driver.Conn, db string) (map[int]bool, error) {
	done := map[int]bool{}
	var exists uint8
	row := conn.QueryRow(ctx, "SELECT count() > 0 FROM system.tables WHERE database = ? AND name = 'schema_migrations'", db)
	if err := row.Scan(&exists); err != nil {
		return nil, fmt.Errorf("warehouse.Migrate: %w", err)
	}
	if exists == 0 {
		return done, nil
	}
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT DISTINCT version FROM %s.schema_migrations", quoteIdent(db)))
	if err != nil {
		return nil, fmt.Errorf("warehouse.Migrate: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		done[int(v)] = true
	}
	return done, rows.Err()
}

// MigrateReadTimeout bounds one statement of Migrate. A migration that
// backfills a pre-aggregate reads the whole table it folds, minutes on a
// large store: the 60-second default of queries would abort it midway and
// stop the service from starting.
const MigrateReadTimeout = time.Hour

var (
	engineRe = regexp.MustCompile(`\{engine:(\w+)\(([^)]*)\)\}`)
	tableRe  = regexp.MustCompile(`\{db\}\.(\w+)`)
)

// renderDDL fills in the placeholders documented in package clickhouse.
func renderDDL(sql, db, cluster string) string {
	table := ""
	if m := tableRe.FindStringSubmatch(sql); m != nil {
		table = m[1]
	}
	sql = engineRe.ReplaceAllStringFunc(sql, func(s string) string {
		m := engineRe.FindStringSubmatch(s)
		name, args := m[1], strings.TrimSpace(m[2])
		if cluster == "" {
			return name + "(" + args + ")"
		}
		repl := fmt.Sprintf("'/clickhouse/tables/{shard}/%s.%s', '{replica}'", db, table)
		if args != "" {
			repl += ", " + args
		}
		return "Replicated" + name + "(" + repl + ")"
	})
	onCluster := ""
	if cluster != "" {
		onCluster = "ON CLUSTER " + quoteIdent(cluster)
	}
	return strings.NewReplacer("{db}", quoteIdent(db), "{on_cluster}", onCluster).Replace(sql)
}

// mutationRe matches an ALTER … UPDATE or DELETE, which ClickHouse runs as
// a background mutation (18.16 has no mutations_sync).
var mutationRe = regexp.MustCompile("(?is)^\\s*ALTER\\s+TABLE\\s+`[^`]+`\\.(\\w+)\\s+(?:ON\\s+CLUSTER\\s+\\S+\\s+)?(?:UPDATE|DELETE)\\b")

// mutationTable is the table a rendered statement mutates, if it does.
func mutationTable(sql string) (string, bool) {
	m := mutationRe.FindStringSubmatch(withoutComments(sql))
	if m == nil {
		return "", false
	}
	return m[1], true
}

// waitMutations waits until no mutation of db.table is pending, so that a
// later step (a type change after a rewrite of the values) sees every row
// rewritten. (18.16's system.mutations has no failure reason to report: a
// stuck mutation waits until ctx ends.)
func waitMutations(ctx context.Context, conn driver.Conn, db, table string) error {
	const q = `SELECT count() FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0`
	for {
		var pending uint64
		if err := conn.QueryRow(ctx, q, db, table).Scan(&pending); err != nil {
			return fmt.Errorf("wait for mutations of %s: %w", table, err)
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// addColumnRe matches a rendered ALTER … ADD COLUMN and its table;
// addedColumnRe each column it adds.
var (
	addColumnRe   = regexp.MustCompile("(?is)^\\s*ALTER\\s+TABLE\\s+`[^`]+`\\.(\\w+)\\s+(?:ON\\s+CLUSTER\\s+\\S+\\s+)?ADD\\s+COLUMN\\b")
	addedColumnRe = regexp.MustCompile(`(?i)\bADD\s+COLUMN\s+(\w+)`)
)

// columnsAdded reports whether sql is an ALTER … ADD COLUMN whose every
// column db's table already has.
func columnsAdded(ctx context.Context, conn driver.Conn, db, sql string) (bool, error) {
	body := withoutComments(sql)
	m := addColumnRe.FindStringSubmatch(body)
	if m == nil {
		return false, nil
	}
	var names []string
	for _, c := range addedColumnRe.FindAllStringSubmatch(body, -1) {
		names = append(names, c[1])
	}
	var have uint64
	const q = `SELECT count() FROM system.columns WHERE database = ? AND table = ? AND has(?, name)`
	if err := conn.QueryRow(ctx, q, db, m[1], names).Scan(&have); err != nil {
		return false, fmt.Errorf("columns of %s: %w", m[1], err)
	}
	return int(have) == len(names), nil
}

// withoutComments drops a statement's comment lines.
func withoutComments(sql string) string {
	var body []string
	for _, line := range strings.Split(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			body = append(body, line)
		}
	}
	return strings.Join(body, "\n")
}

// quoteIdent quotes a ClickHouse identifier with backquotes.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "\\`") + "`"
}

// record notes an applied statement. It goes through a batch: 18.16 stalls
// on an INSERT … VALUES with bound parameters over the native protocol.
func record(ctx context.Context, conn driver.Conn, db string, s clickhouse.Statement) error {
	b, err := conn.PrepareBatch(ctx, fmt.Sprintf("INSERT INTO %s.schema_migrations (version, name, applied_at)", quoteIdent(db)))
	if err != nil {
		return err
	}
	if err := b.Append(uint32(s.Version), s.Name, time.Now().UTC()); err != nil {
		b.Abort()
		return err
	}
	return b.Send()
}
