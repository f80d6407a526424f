package warehouse

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// The finalized copy of the rollup's base part (clickhouse/0529): turning a
// million visitors' states into values costs most of a rollup read, and the
// base part, which holds most of them, never changes. So the first read
// after the base changes writes its values once into agg_visitors_final,
// and later reads take the base's visitors from there as plain columns.
// Visitors with rows in other parts are merged as before, so the copy is
// never stale: it is only read for visitors whose every row is in the base.

// finalCopyMinVisitors is the size of base below which a read finalizes the
// states itself: writing a copy costs more than a few reads of a small one.
var finalCopyMinVisitors uint64 = 50_000

// rollupFinalSQL finds the finished copy of the base, if any.
const rollupFinalSQL = `SELECT toUInt64(count()) AS builds, min(build) AS first_build
FROM {db}.agg_visitors_final_builds
WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base`

// finalCopy returns the build of the base's finished copy, writing one when
// there is none and the base is large enough; 0 means read the states.
func (w *Warehouse) finalCopy(ctx context.Context, q MetricsQuery, base string, visitors uint64) (uint64, error) {
	params := append(args(q), clickhouse.Named("base", base))
	var builds, build uint64
	if err := w.conn.QueryRow(ctx, w.render(rollupFinalSQL), params...).Scan(&builds, &build); err != nil {
		return 0, err
	}
	if builds > 0 {
		return build, nil
	}
	if visitors < finalCopyMinVisitors {
		return 0, nil
	}
	build = uint64(time.Now().UnixNano())
	params = append(params, clickhouse.Named("build", build))
	if err := w.conn.Exec(ctx, w.render(buildFinalSQL()), params...); err != nil {
		return 0, fmt.Errorf("build final copy: %w", err)
	}
	if err := w.conn.Exec(ctx, w.render(`INSERT INTO {db}.agg_visitors_final_builds
		(shop_id, experiment_id, source_part, build, visitors, built_at)
		SELECT toInt64(@shop), toString(@exp), toString(@base), toUInt64(@build), toUInt64(count()), now()
		FROM {db}.agg_visitors_final
		WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build`), params...); err != nil {
		return 0, fmt.Errorf("record final copy: %w", err)
	}
	return build, w.dropGoneCopies(ctx)
}

// buildFinalSQL writes the values of the base part's rows of one test. Each
// part holds one row per key (every write into agg_visitors groups by it,
// and a merge keeps that), so each row is finalized as it is, through the
// read path's own visitor rows.
func buildFinalSQL() string {
	attrs := []string{"device", "country", "visitor_type", "utm_source", "utm_medium", "utm_campaign", "gclid", "fbclid"}
	rows := rollupVisitorRowsSQL(attrs, "_part = @base AND finalizeAggregation(sessions) <= 1", false, false) +
		"\n\t\tUNION ALL\n\t\t" + rollupVisitorRowsSQL(attrs, "_part = @base AND finalizeAggregation(sessions) > 1", false, true)
	return `INSERT INTO {db}.agg_visitors_final (shop_id, experiment_id, source_part, build, vid, pack,
		` + strings.Join(attrs, ", ") + `, sessions, pages, staying, added_to_cart, checkouts, clicked, seen_first, seen_last)
	SELECT toInt64(@shop) AS f_shop, toString(@exp) AS f_exp, toString(@base) AS f_part, toUInt64(@build) AS f_build,
		` + strings.Join(rollupVisitorColumns(attrs), ", ") + `
	FROM (
		` + rows + `)`
}

// dropGoneCopies drops the copies of parts ClickHouse no longer lists at
// all. A part it still lists, even inactive, may still be read by a query
// that chose it as its base; a part gone from system.parts has been
// inactive for minutes (old_parts_lifetime) and held by no query.
func (w *Warehouse) dropGoneCopies(ctx context.Context) error {
	rows, err := w.conn.Query(ctx, w.render(`SELECT DISTINCT source_part FROM {db}.agg_visitors_final
		WHERE source_part NOT IN (SELECT name FROM system.parts WHERE database = currentDatabase() AND table = 'agg_visitors')`))
	if err != nil {
		return err
	}
	var gone []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return err
		}
		gone = append(gone, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, p := range gone {
		if err := w.conn.Exec(ctx, w.render("ALTER TABLE {db}.agg_visitors_final DROP PARTITION @part"), clickhouse.Named("part", p)); err != nil {
			return fmt.Errorf("drop final copy of %s: %w", p, err)
		}
	}
	return nil
}

// finalVisitorRowsSQL is the base's visitors outside others, read from its
// finished copy, in the columns of rollupVisitorRowsSQL.
func finalVisitorRowsSQL(attrs []string, others string) string {
	cols := []string{"vid", "pack AS r_pack"}
	for _, a := range attrs {
		cols = append(cols, a+" AS r_"+a)
	}
	cols = append(cols, "sessions AS x_sessions", "pages AS x_pages", "staying AS x_staying", "added_to_cart AS x_atc",
		"checkouts AS x_chk", "clicked AS x_ct", "seen_first AS v_first", "seen_last AS v_last")
	return `SELECT ` + strings.Join(cols, ", ") + `
		FROM {db}.agg_visitors_final
		WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build AND vid NOT IN (` + others + `)`
}
