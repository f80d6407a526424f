// Package migrations holds Lift's Postgres schema as ordered SQL files,
// embedded in the binary. store.Migrate applies them and records each one, so
// running it twice changes nothing. A committed file is never edited: a change
// is a new file with the next number.
//
// Number ranges keep parallel work from colliding: 0001–0099 foundation
// (shops, tokens, idempotency, audit), 0100–0199 tests and catalog,
// 0200–0299 ingest, 0300–0399 results.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.up.sql
var files embed.FS

// Migration is one schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// All returns every migration in version order. A file named badly or two
// files with one version are programming errors caught by the package test.
func All() ([]Migration, error) { return Load(files, ".up.sql") }

// Load reads the files of fsys named NNNN_name<suffix>, in version order.
// The ClickHouse DDL of package clickhouse is read with it too.
func Load(fsys fs.FS, suffix string) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*"+suffix)
	if err != nil {
		return nil, err
	}
	var out []Migration
	seen := map[int]string{}
	for _, n := range names {
		num, rest, ok := strings.Cut(n, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migrations: %s: name must be NNNN_name%s", n, suffix)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations: %s and %s share version %d", prev, n, v)
		}
		seen[v] = n
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(rest, suffix), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}
