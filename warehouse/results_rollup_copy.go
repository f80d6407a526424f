package warehouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// The finalized copy of the rollup's base part (clickhouse/0531) and its
// cube (0532): turning a million visitors' states into values costs most of
// a rollup read, and the base part, which holds most of them, never
// changes. So the first read after the base changes writes its values once
// into agg_visitors_copy, sums them per group and attributes into
// agg_visitors_cube, and records the build in agg_visitors_copy_builds;
// later reads take the base's visitors from there (results_rollup_cube.go).
// Visitors with rows in other parts are merged as before, so the copy is
// never stale: it is only read for visitors whose every row is in the base.

// copyMinVisitors is the size of base below which a read finalizes the
// states itself: writing a copy costs more than a few reads of a small one.
var copyMinVisitors uint64 = 50_000

// copyBuild returns the build of the base's finished copy (found by
// rollupBase), writing one when there is none and the base is large
// enough; 0 means read the states.
//
// Reads that find no copy while this process writes one wait for that
// build instead of writing their own: the admin panel asks for several
// analytics views at once, and every build reads the whole base part (3-4 s
// for a million visitors on this machine), so after each new base they all
// used to write the same copy side by side. The build runs on a context of
// its own, so a reader that gives up (its request ends) does not cancel it
// for the others, and the next reads find it done.
func (w *Warehouse) copyBuild(ctx context.Context, q MetricsQuery, b rollupBase) (uint64, error) {
	if b.build > 0 || b.rows < copyMinVisitors {
		return b.build, nil
	}
	key := fmt.Sprintf("%d\x00%s\x00%s", q.ShopID, q.ExperimentID, b.part)
	done := w.copyWrites.DoChan(key, func() (any, error) {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), copyBuildTimeout)
		defer cancel()
		return w.writeCopy(bctx, q, b.part)
	})
	select {
	case r := <-done:
		if r.Err != nil {
			return 0, r.Err
		}
		return r.Val.(uint64), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// PrepareRollup writes the finalized copy of a test's rollup base when the
// base is large enough and has none yet, as the first read would; built
// says whether the base has a copy now that it had not at the start (a
// read or another process may have finished the same build meanwhile). The worker calls it every few minutes for
// running tests, so a new base part (ClickHouse merged the old one) is
// copied before an admin-panel view or a snapshot needs it.
func (w *Warehouse) PrepareRollup(ctx context.Context, shopID int64, experimentID string) (built bool, err error) {
	q := MetricsQuery{ShopID: shopID, ExperimentID: experimentID, Basis: BasisVisitors}
	b, err := w.rollupBase(ctx, q)
	if err != nil || b.part == "" || b.build > 0 {
		return false, err
	}
	build, err := w.copyBuild(ctx, q, b)
	return build > 0, err
}

// copyBuildTimeout bounds one build of a copy and its cube.
const copyBuildTimeout = 10 * time.Minute

// writeCopy writes the copy of part and its cube and records the build,
// unless a build of part finished since the caller's rollupBase read it
// (another process's, or one that ended just before this one started).
func (w *Warehouse) writeCopy(ctx context.Context, q MetricsQuery, part string) (uint64, error) {
	copies, _, err := w.copies(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("look up the base's copy: %w", err)
	}
	if c, ok := copies[part]; ok {
		return c.build, nil
	}
	build := uint64(time.Now().UnixNano())
	params := append(args(q), clickhouse.Named("base", part), clickhouse.Named("build", build))
	for _, step := range []struct{ name, sql string }{
		{"copy", buildCopySQL()},
		{"cube", buildCubeSQL},
		{"record", recordBuildSQL},
	} {
		if err := w.conn.Exec(ctx, w.render(step.sql), params...); err != nil {
			return 0, fmt.Errorf("build %s of the base's copy: %w", step.name, err)
		}
	}
	return build, w.dropGoneCopies(ctx)
}

// recordBuildSQL records a finished build, after its copy and cube.
const recordBuildSQL = `INSERT INTO {db}.agg_visitors_copy_builds (shop_id, experiment_id, source_part, build, visitors, built_at)
SELECT toInt64(@shop), toString(@exp), toString(@base), toUInt64(@build), toUInt64(count()), now()
FROM {db}.agg_visitors_copy
WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build`

// buildCopySQL writes the values of the base part's rows of one test. Each
// part holds one row per key (every write into agg_visitors groups by it,
// and a merge keeps that), so each row is finalized as it is, through the
// read path's own visitor rows. ordered and fired flag the visitors who
// had orders or custom events by then (the table sorts them first).
func buildCopySQL() string {
	rows := rollupVisitorRowsSQL(cubeAttrs, "_part = @base AND finalizeAggregation(sessions) <= 1", false, false) +
		"\n\t\tUNION ALL\n\t\t" + rollupVisitorRowsSQL(cubeAttrs, "_part = @base AND finalizeAggregation(sessions) > 1", false, true)
	return `INSERT INTO {db}.agg_visitors_copy (shop_id, experiment_id, source_part, build, ordered, fired, vid, pack,
		` + strings.Join(cubeAttrs, ", ") + `, sessions, pages, staying, added_to_cart, checkouts, clicked, seen_first, seen_last)
	SELECT toInt64(@shop) AS f_shop, toString(@exp) AS f_exp, toString(@base) AS f_part, toUInt64(@build) AS f_build,
		toUInt8(vid IN (` + orderedVisitorsSQL + `)) AS f_ordered, toUInt8(vid IN (` + firedVisitorsSQL + `)) AS f_fired,
		` + strings.Join(rollupVisitorColumns(cubeAttrs), ", ") + `
	FROM (
		` + rows + `)`
}

// orderedVisitorsSQL and firedVisitorsSQL are the visitors (as vid) that
// orders and custom events of the test name.
const (
	orderedVisitorsSQL = `SELECT cityHash64(visitor_id) AS l_vid FROM {db}.orders
		WHERE shop_id = @shop AND experiment_id = @exp AND visitor_id != ''`
	firedVisitorsSQL = `SELECT cityHash64(visitor_id) AS l_vid FROM {db}.agg_custom_events
		WHERE shop_id = @shop AND experiment_id = @exp`
)

// copyLookupSQL is the condition on the copy's rows that finds the
// visitors of a set (orderedVisitorsSQL or firedVisitorsSQL), by flag, the
// column that flagged them at the build: the flagged block, plus the
// visitors of the set not flagged then (new since, from newlyNamed).
// Asking for the set alone would read the whole copy: its members fall
// inside every granule's range of vid, flagged block or not; so the
// primary key narrows this to the flagged block and the granules of the
// new ones. A flagged visitor whose orders are gone since (reset analytics
// erases the whole test) only contributes nothing.
func copyLookupSQL(flag string, fresh newVisitors) string {
	if fresh.sql != "" {
		return "(" + flag + " = 1 OR vid IN (" + fresh.sql + "))"
	}
	if len(fresh.vids) == 0 {
		return flag + " = 1"
	}
	ids := make([]string, len(fresh.vids))
	for i, v := range fresh.vids {
		ids[i] = strconv.FormatUint(v, 10)
	}
	return "(" + flag + " = 1 OR vid IN (" + strings.Join(ids, ", ") + "))"
}

// newVisitors is the visitors of a set that a build of the copy did not
// flag: listed (vids), or, when they are many, as a subquery (sql).
type newVisitors struct {
	vids []uint64
	sql  string
}

// maxListedVisitors is how many new visitors newlyNamed lists in the
// statement; past it the statement asks ClickHouse for them.
var maxListedVisitors = 1000

// notFlaggedSQL is the visitors of set that build's flag block does not
// hold.
func notFlaggedSQL(flag, set string) string {
	return set + ` AND l_vid NOT IN (
			SELECT vid FROM {db}.agg_visitors_copy
			WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build AND ` + flag + " = 1)"
}

// newlyNamed finds the visitors of set (orderedVisitorsSQL or
// firedVisitorsSQL) that build's flag block does not hold: those who
// ordered or fired since the build, usually few. Listed in the statement,
// they cost nothing to look up; as an IN subquery beside the flag they
// cost the cube's read about 50 ms of CPU on the bench test.
func (w *Warehouse) newlyNamed(ctx context.Context, q MetricsQuery, base string, build uint64, flag, set string) (newVisitors, error) {
	notFlagged := notFlaggedSQL(flag, set)
	vids, err := w.vids(ctx, "SELECT DISTINCT l_vid FROM ("+notFlagged+") LIMIT "+strconv.Itoa(maxListedVisitors+1),
		append(args(q), clickhouse.Named("base", base), clickhouse.Named("build", build)))
	if len(vids) > maxListedVisitors {
		return newVisitors{sql: notFlagged}, err
	}
	return newVisitors{vids: vids}, err
}

// dropGoneCopies drops the copies (and cubes) of parts ClickHouse no
// longer lists at all. A part it still lists, even inactive, may still be
// read by a query that chose it as its base; a part gone from system.parts
// has been inactive for minutes (old_parts_lifetime) and held by no query.
// The partitions are read from system.parts too, so a build that failed
// halfway is dropped as well; the builds' own records are a few rows per
// base part, kept.
func (w *Warehouse) dropGoneCopies(ctx context.Context) error {
	rows, err := w.conn.Query(ctx, `SELECT DISTINCT table, partition FROM system.parts
		WHERE database = currentDatabase() AND table IN ('agg_visitors_copy', 'agg_visitors_cube') AND active
			AND partition NOT IN (SELECT name FROM system.parts WHERE database = currentDatabase() AND table = 'agg_visitors')`)
	if err != nil {
		return err
	}
	var gone [][2]string
	for rows.Next() {
		var table, part string
		if err := rows.Scan(&table, &part); err != nil {
			rows.Close()
			return err
		}
		gone = append(gone, [2]string{table, part})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, g := range gone {
		if err := w.conn.Exec(ctx, w.render("ALTER TABLE {db}."+g[0]+" DROP PARTITION @part"), clickhouse.Named("part", g[1])); err != nil {
			return fmt.Errorf("drop %s of %s: %w", g[0], g[1], err)
		}
	}
	return nil
}

// copyVisitorRowsSQL is the copy's visitors matching where, in the columns
// of rollupVisitorRowsSQL, and extra.
func copyVisitorRowsSQL(attrs []string, where string, extra ...string) string {
	cols := []string{"vid", "pack AS r_pack"}
	for _, a := range attrs {
		cols = append(cols, a+" AS r_"+a)
	}
	cols = append(cols, "sessions AS x_sessions", "pages AS x_pages", "staying AS x_staying", "added_to_cart AS x_atc",
		"checkouts AS x_chk", "clicked AS x_ct", "seen_first AS v_first", "seen_last AS v_last")
	cols = append(cols, extra...)
	return `SELECT ` + strings.Join(cols, ", ") + `
		FROM {db}.agg_visitors_copy
		WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build AND ` + where
}
