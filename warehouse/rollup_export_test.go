package warehouse

import "context"

// RawGroupMetrics answers q from the raw path only, never from the
// visitor rollup: the tests hold both to the same numbers.
func (w *Warehouse) RawGroupMetrics(q MetricsQuery) ([]GroupRow, error) {
	ctx := context.Background()
	facts, err := w.facts(ctx, q)
	if err != nil {
		return nil, err
	}
	return w.rawGroupMetrics(ctx, q, facts)
}

// RollupGroupMetrics answers from the rollup alone; ok is false when the
// rollup declines q.
func (w *Warehouse) RollupGroupMetrics(q MetricsQuery) (rows []GroupRow, ok bool, err error) {
	base, err := w.rollupBase(context.Background(), q)
	if err != nil {
		return nil, false, err
	}
	rows, _, ok, err = w.rollupRead(context.Background(), q, base, false)
	return rows, ok, err
}

// SetCopyMinVisitors sets the base size from which reads write a
// finalized copy, and returns a function that restores it.
func SetCopyMinVisitors(n uint64) func() {
	old := copyMinVisitors
	copyMinVisitors = n
	return func() { copyMinVisitors = old }
}

// RollupSQL is the rollup path's statement for q, reading the base's
// finalized copy when copied; ok is false when the rollup does not serve q.
func RollupSQL(q MetricsQuery, copied bool) (sql string, ok bool) {
	if !rollupEligible(q, dataFacts{}) {
		return "", false
	}
	return rollupSQL(q, copied, copied), true
}

// CubeSQL is the rollup path's two statements on the copy's cube, with or
// without other parts beside the base, with or without the order units'
// money; ok is false when the cube does not serve q.
func CubeSQL(q MetricsQuery, hasOthers, money bool) (cells, units string, ok bool) {
	if !rollupEligible(q, dataFacts{}) || !cubeServes(q) {
		return "", "", false
	}
	// One form lists the visitors new since the build, the other asks for them.
	fresh := newVisitors{vids: []uint64{1, 2}}
	if hasOthers {
		fresh = newVisitors{sql: notFlaggedSQL("ordered", orderedVisitorsSQL)}
	}
	return cubeCellsSQL(q, hasOthers, money), cubeUnitSumsSQL(q, hasOthers, money, fresh), true
}

// BuildCopySQL and BuildCubeSQL are the statements that write the base's
// finalized copy and its cube.
func BuildCopySQL() string { return buildCopySQL() }

var BuildCubeSQL = buildCubeSQL

// The base part's lookups: every part counted, the test's copies, and the
// parts beside the latest copy's; and a build's record.
const (
	RollupPartsSQL       = rollupPartsSQL
	CopiesSQL            = copiesSQL
	RollupPartsBesideSQL = rollupPartsBesideSQL
	RecordBuildSQL       = recordBuildSQL
)

// RollupBase is the rollup's base part for q, its rows, the rows in every
// other part and the build of its finished copy (0: none).
func (w *Warehouse) RollupBase(q MetricsQuery) (part string, rows, others, build uint64, err error) {
	b, err := w.rollupBase(context.Background(), q)
	return b.part, b.rows, b.others, b.build, err
}

// DropGoneCopies drops the finalized copies of parts ClickHouse no longer lists.
func (w *Warehouse) DropGoneCopies() error { return w.dropGoneCopies(context.Background()) }

// CubeCapped answers q capped at percentile from the cube alone, as
// GroupMetricsCapped does when the cube serves q; ok is false when it
// does not.
func (w *Warehouse) CubeCapped(q MetricsQuery, percentile float64) (rows []GroupRow, caps Caps, ok bool, err error) {
	base, err := w.rollupBase(context.Background(), q)
	if err != nil {
		return nil, Caps{}, false, err
	}
	rows, units, ok, err := w.rollupRead(context.Background(), q, base, true)
	if !ok || err != nil {
		return nil, Caps{}, ok, err
	}
	return rows, capRows(rows, units, percentile), true, nil
}

// AssignmentsCustomEvents answers CustomEvents with the fired visitors
// looked up in the assignments, never in the rollup.
func (w *Warehouse) AssignmentsCustomEvents(q MetricsQuery) ([]CustomEventRow, error) {
	return w.customEventRows(context.Background(), customEventsSQL(q), args(q))
}

// RollupCustomEventsSQL is CustomEvents' statement on the rollup's copy.
func RollupCustomEventsSQL(hasOthers bool) string {
	fresh := newVisitors{vids: []uint64{1, 2}}
	if hasOthers {
		fresh = newVisitors{sql: notFlaggedSQL("fired", firedVisitorsSQL)}
	}
	return rollupCustomEventsSQL(hasOthers, fresh)
}

// SetMaxListedVisitors sets how many new visitors a read lists in its
// statement, and returns a function that restores it.
func SetMaxListedVisitors(n int) func() {
	old := maxListedVisitors
	maxListedVisitors = n
	return func() { maxListedVisitors = old }
}
