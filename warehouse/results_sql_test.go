package warehouse_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liftab/lift/warehouse"
)

// resultsShapes are the distinct statements the results queries generate:
// each basis, every dimension alone, the longest breakdowns and the product
// scope, which changes the SQL of both bases.
func resultsShapes() map[string]warehouse.MetricsQuery {
	shapes := map[string]warehouse.MetricsQuery{
		"visitors":   {Basis: warehouse.BasisVisitors},
		"sessions":   {Basis: warehouse.BasisSessions},
		"devcountry": {Basis: warehouse.BasisVisitors, Breakdown: []warehouse.Dimension{"device", "country"}},
		"sessions2":  {Basis: warehouse.BasisSessions, Breakdown: []warehouse.Dimension{"landing_page", "date"}},
		"breakdown3": {Basis: warehouse.BasisVisitors, Breakdown: []warehouse.Dimension{"device", "traffic_source", "date"}},
		"scoped":     {Basis: warehouse.BasisVisitors, ProductIDs: []string{"1001"}},
		"scopedsess": {Basis: warehouse.BasisSessions, ProductIDs: []string{"1001"}},
		// A shipping panel's reads: the shipping columns in every branch.
		"shipping":         {Basis: warehouse.BasisVisitors, Breakdown: []warehouse.Dimension{"country"}, Shipping: true},
		"shippingsess":     {Basis: warehouse.BasisSessions, Shipping: true},
		"shippingscoped":   {Basis: warehouse.BasisVisitors, ProductIDs: []string{"1001"}, Shipping: true},
		"shippingsessdate": {Basis: warehouse.BasisSessions, Breakdown: []warehouse.Dimension{"date"}, Shipping: true},
	}
	for _, d := range warehouse.Dimensions {
		shapes["visitors-"+string(d)] = warehouse.MetricsQuery{Basis: warehouse.BasisVisitors, Breakdown: []warehouse.Dimension{d}}
		shapes["sessions-"+string(d)] = warehouse.MetricsQuery{Basis: warehouse.BasisSessions, Breakdown: []warehouse.Dimension{d}}
	}
	for name, q := range shapes {
		q.ShopID, q.ExperimentID, q.Timezone, q.From, q.To = 1, "9", "America/New_York", "2026-06-01", "2026-06-02"
		shapes[name] = q
	}
	return shapes
}

// TestResultsSQLRunsOnClickHouse runs every generated statement on the real
// ClickHouse (18.16 in the stack, which lacks much of today's SQL), so a
// shape no other test exercises still parses, plans and scans. With
// LIFT_DUMP_SQL naming a directory it also writes each statement with its
// parameters substituted, for checking on current ClickHouse with chdb
// (docs/results.md).
func TestResultsSQLRunsOnClickHouse(t *testing.T) {
	w := openTestWarehouse(t)
	resultsFixture(t, w)
	dir := os.Getenv("LIFT_DUMP_SQL")
	for name, q := range resultsShapes() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rows, err := w.GroupMetrics(ctx, q)
			if err != nil {
				t.Fatalf("group metrics SQL does not run: %v", err)
			}
			// The fixture has visitors in both groups: an unscoped query that
			// answers nothing is a broken statement, not an empty test.
			if len(q.ProductIDs) == 0 && len(rows) < 2 {
				t.Fatalf("group metrics on the fixture = %+v, want rows of both groups", rows)
			}
			if _, err := w.CustomEvents(ctx, q); err != nil {
				t.Fatalf("custom events SQL does not run: %v", err)
			}
			caps, err := w.WinsorCaps(ctx, q, 0.99)
			if err != nil {
				t.Fatalf("winsor caps SQL does not run: %v", err)
			}
			capped := q
			capped.Caps = &caps
			if _, err := w.GroupMetrics(ctx, capped); err != nil {
				t.Fatalf("capped group metrics SQL does not run: %v", err)
			}
			if dir != "" {
				dump(t, filepath.Join(dir, name+".sql"), warehouse.GroupMetricsSQL(q, false), q)
				dump(t, filepath.Join(dir, name+"_orphans.sql"), warehouse.GroupMetricsSQL(q, true), q)
				dump(t, filepath.Join(dir, name+"-custom.sql"), warehouse.CustomEventsSQL(q), q)
				dump(t, filepath.Join(dir, name+"-caps.sql"), warehouse.WinsorCapsSQL(q, 0.99), q)
				dump(t, filepath.Join(dir, name+"-capped.sql"), warehouse.GroupMetricsSQL(capped, false), q)
				for copied, suffix := range map[bool]string{false: "-rollup.sql", true: "-rollup-copied.sql"} {
					if sql, ok := warehouse.RollupSQL(capped, copied); ok {
						dump(t, filepath.Join(dir, name+suffix), sql, q)
					}
				}
				for i, suffix := range []string{"-cube", "-cube-others", "-cube-money", "-cube-others-money"} {
					if cells, units, ok := warehouse.CubeSQL(capped, i%2 == 1, i >= 2); ok {
						dump(t, filepath.Join(dir, name+suffix+"-cells.sql"), cells, q)
						dump(t, filepath.Join(dir, name+suffix+"-units.sql"), units, q)
					}
				}
			}
		})
	}
	if dir != "" {
		dump(t, filepath.Join(dir, "export.sql"), warehouse.ExportOrdersSQL, warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "orphans.sql"), warehouse.OrphansSQL, warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-build.sql"), warehouse.BuildCopySQL(), warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-build-cube.sql"), warehouse.BuildCubeSQL, warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-custom.sql"), warehouse.RollupCustomEventsSQL(false), warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-custom-others.sql"), warehouse.RollupCustomEventsSQL(true), warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-parts.sql"), warehouse.RollupPartsSQL, warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-copies.sql"), warehouse.CopiesSQL, warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-parts-beside.sql"), warehouse.RollupPartsBesideSQL, warehouse.MetricsQuery{})
		dump(t, filepath.Join(dir, "rollup-record-build.sql"), warehouse.RecordBuildSQL, warehouse.MetricsQuery{})
	}
}

func dump(t *testing.T, path, sql string, q warehouse.MetricsQuery) {
	t.Helper()
	products := "[]"
	if len(q.ProductIDs) > 0 {
		products = "['" + strings.Join(q.ProductIDs, "','") + "']"
	}
	lit := strings.NewReplacer("{db}", "lift", "@shop", "1", "@exp", "'9'", "@tz", "'America/New_York'",
		"@from", "'2026-06-01'", "@to", "'2026-06-02'", "@products", products,
		"@base", "'all_1_1_0'", "@build", "1", "@known_rows", "1000", "@known", "'all_1_1_0'",
		// S, sent as an external table with the statement, stands in as a subquery.
		"FROM s_vids", "FROM (SELECT toUInt64(1) AS vid)")
	if err := os.WriteFile(path, []byte(lit.Replace(sql)), 0o644); err != nil {
		t.Fatal(err)
	}
}
