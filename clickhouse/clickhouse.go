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
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Statement is one DDL step.
type Statement struct {
	Version int
	Name    string
	SQL     string
}

// All returns every statement in version order.
func All() ([]Statement, error) {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []Statement
	seen := map[int]string{}
	for _, n := range names {
		num, rest, ok := strings.Cut(n, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("clickhouse: %s: name must be NNNN_name.sql", n)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("clickhouse: %s and %s share version %d", prev, n, v)
		}
		seen[v] = n
		b, err := files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Statement{Version: v, Name: strings.TrimSuffix(rest, ".sql"), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}
