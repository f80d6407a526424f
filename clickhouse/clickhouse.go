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
// Number ranges as in package migrations: 0001–0099 foundation, 0200–0299
// ingest, 0300–0399 results.
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
