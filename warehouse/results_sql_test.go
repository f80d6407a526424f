package warehouse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumpResultsSQL writes the results queries with their parameters
// substituted, for checking them on current ClickHouse with chdb (see
// docs/results.md). It runs only when LIFT_DUMP_SQL names a directory.
func TestDumpResultsSQL(t *testing.T) {
	dir := os.Getenv("LIFT_DUMP_SQL")
	if dir == "" {
		t.Skip("LIFT_DUMP_SQL not set")
	}
	lit := strings.NewReplacer("{db}", "lift", "@shop", "1", "@exp", "'9'", "@tz", "'America/New_York'",
		"@from", "'2026-06-01'", "@to", "'2026-06-02'")
	queries := map[string]MetricsQuery{
		"visitors":   {Basis: BasisVisitors},
		"device":     {Basis: BasisVisitors, Breakdown: []Dimension{"device"}},
		"devcountry": {Basis: BasisVisitors, Breakdown: []Dimension{"device", "country"}},
		"sessions":   {Basis: BasisSessions, Breakdown: []Dimension{"landing_page", "date"}},
		"breakdown3": {Basis: BasisVisitors, Breakdown: []Dimension{"device", "traffic_source", "date"}},
		"scoped":     {Basis: BasisVisitors, ProductIDs: []string{"1001"}},
		"scopedsess": {Basis: BasisSessions, ProductIDs: []string{"1001"}},
	}
	for name, q := range queries {
		products := "[]"
		if len(q.ProductIDs) > 0 {
			products = "['" + strings.Join(q.ProductIDs, "','") + "']"
		}
		for suffix, f := range map[string]dataFacts{"": {}, "_orphans": {orphanSessions: true}} {
			sql := strings.ReplaceAll(lit.Replace(groupMetricsSQL(q, f)), "@products", products)
			if err := os.WriteFile(filepath.Join(dir, name+suffix+".sql"), []byte(sql), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, sql := range map[string]string{
		"custom":  customEventsSQL(MetricsQuery{Basis: BasisVisitors}),
		"export":  exportOrdersSQL,
		"orphans": orphanSessionsSQL,
	} {
		sql = strings.ReplaceAll(lit.Replace(sql), "@products", "[]")
		if err := os.WriteFile(filepath.Join(dir, name+".sql"), []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
