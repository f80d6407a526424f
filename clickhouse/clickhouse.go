// Package clickhouse holds Lift's ClickHouse DDL as ordered files, embedded in
// the binary; warehouse.Migrate applies them. One statement per file, the
// database written as {db}. Every statement must run on Debian's 18.16 and on
// current ClickHouse (DESIGN §4).
//
// For a cluster (clickhouse.cluster set) a file may use {on_cluster}, which
// becomes `ON CLUSTER <name>` (or nothing on a single node), and
// {engine:Name(args)}, which becomes ReplicatedName('/clickhouse/tables/{shard}/<db>.<table>',
// '{replica}', args) on a cluster and Name(args) on a single node, so one file
// serves both.
//
// By server version (read with SELECT version() at migration time; see
// warehouse/migrate_server.go), so that users on current ClickHouse get its
// storage features while 18.16 keeps today's types:
//   - {lowcard:String} is LowCardinality(String) from 20.3 on, String before;
//     for columns with few distinct values (device, country, event type…).
//   - {codec:Delta, ZSTD(1)} is CODEC(Delta, ZSTD(1)) from 20.3 on, nothing
//     before: Delta for timestamps, ZSTD(3) for payloads.
//   - {since:20.3} marks a whole statement (a version-gated ALTER) that runs
//     only from that version on. On an older server it is skipped and not
//     recorded, so it runs at the first migration after an upgrade.
//
// An ALTER … UPDATE/DELETE runs as a mutation; Migrate waits for it to
// finish before the next statement.
//
// Number ranges as in package migrations: 0001–0099 foundation, 0200–0299
// ingest, 0300–0399 results, 0400–0499 changes to ingest tables.
package clickhouse

import (
	"embed"

	"github.com/liftab/lift/migrations"
)

//go:embed *.sql
var files embed.FS

// Statement is one DDL step.
type Statement = migrations.Migration

// All returns every statement in version order.
func All() ([]Statement, error) { return migrations.Load(files, ".sql") }
