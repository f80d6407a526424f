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
	return w.rollupGroupMetrics(context.Background(), q)
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
	return rollupSQL(q, copied), true
}

// CubeSQL is the rollup path's statement on the copy's cube, with or without
// other parts beside the base; ok is false when the cube does not serve q.
func CubeSQL(q MetricsQuery, hasOthers bool) (sql string, ok bool) {
	if !rollupEligible(q, dataFacts{}) || !cubeServes(q) {
		return "", false
	}
	return cubeSQL(q, hasOthers), true
}

// BuildCopySQL and BuildCubeSQL are the statements that write the base's
// finalized copy and its cube.
func BuildCopySQL() string { return buildCopySQL() }

var BuildCubeSQL = buildCubeSQL

// DropGoneCopies drops the finalized copies of parts ClickHouse no longer lists.
func (w *Warehouse) DropGoneCopies() error { return w.dropGoneCopies(context.Background()) }
