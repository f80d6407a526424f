package warehouse

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Retention of the storefront's raw streams. Until now ClickHouse kept
// every row forever: the only deletes are the per-test erase of reset
// analytics (erase.go), a mutation on every version. On a server with TTL
// (ClickHouse 20.3 and later) clickhouse.retention becomes a table TTL, so
// merges drop expired rows with no job and no mutation; 18.16 has no TTL
// and keeps everything, as before.
//
// Only the high-volume streams expire: events, sessions and page views.
// Assignments and orders are small and are what attribution and revenue
// stand on, so an old test keeps its groups and orders.
// agg_storewide_events is a row-for-row copy of the funnel events
// (clickhouse/0540), so it expires with them: the storewide views never
// count an event events no longer hold.
var retained = []struct{ table, column string }{
	{"events", "created_at"}, {"sessions", "seen_at"}, {"page_views", "viewed_at"},
	{"agg_storewide_events", "created_at"},
}

// removeTTLSince is the first version with ALTER … REMOVE TTL.
var removeTTLSince = serverVersion{21, 3}

// ApplyRetention makes the tables' TTL match keep (0 keeps everything). It
// runs after Migrate, in lift migrate (and lift dev, lift bench api), so a
// changed setting takes effect at the next lift migrate. serve and worker
// do not run it: a server starts without ClickHouse, and DDL from every
// node at every start is the schema change migrate exists to do once (the
// ops audit O2-9 found the README promising "at every start"). A table
// already at the wanted TTL is left alone (MODIFY TTL would rewrite its
// parts again).
func ApplyRetention(ctx context.Context, conn driver.Conn, db, cluster string, keep time.Duration) error {
	v, err := readServerVersion(ctx, conn)
	if err != nil {
		return err
	}
	if !v.atLeast(modernSince) {
		return nil // 18.16: no TTL; nothing expires, as before
	}
	for _, r := range retained {
		var create string
		if err := conn.QueryRow(ctx, "SELECT create_table_query FROM system.tables WHERE database = ? AND name = ?", db, r.table).
			Scan(&create); err != nil {
			return fmt.Errorf("warehouse.ApplyRetention %s: %w", r.table, err)
		}
		stmt := retentionStatement(v, db, cluster, r.table, r.column, keep, create)
		if stmt == "" {
			continue
		}
		if err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("warehouse.ApplyRetention %s: %w", r.table, err)
		}
	}
	return nil
}

// retentionStatement is the ALTER that brings one table from its current
// definition (create) to a TTL of keep, in whole days rounded up, or ""
// when it is there already (or, before 21.3, when a TTL cannot be removed).
func retentionStatement(v serverVersion, db, cluster, table, column string, keep time.Duration, create string) string {
	onCluster := ""
	if cluster != "" {
		onCluster = " ON CLUSTER " + quoteIdent(cluster)
	}
	alter := "ALTER TABLE " + quoteIdent(db) + "." + quoteIdent(table) + onCluster
	hasTTL := strings.Contains(create, " TTL ")
	if keep <= 0 {
		if !hasTTL || !v.atLeast(removeTTLSince) {
			return ""
		}
		return alter + " REMOVE TTL"
	}
	days := int64((keep + 24*time.Hour - 1) / (24 * time.Hour))
	if strings.Contains(create, fmt.Sprintf(" TTL %s + toIntervalDay(%d)", column, days)) {
		return ""
	}
	return fmt.Sprintf("%s MODIFY TTL %s + INTERVAL %d DAY", alter, column, days)
}
