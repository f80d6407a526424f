package warehouse

import "context"

// RawOnly is a copy of w that answers GroupMetrics from the raw path only,
// never from the visitor rollup: the tests hold both to the same numbers.
func (w *Warehouse) RawOnly() *Warehouse {
	c := *w
	c.rawOnly = true
	return &c
}

// RollupGroupMetrics answers from the rollup alone; ok is false when the
// rollup declines q (activity outside its window).
func (w *Warehouse) RollupGroupMetrics(q MetricsQuery) (rows []GroupRow, ok bool, err error) {
	rows, err = w.rollupGroupMetrics(context.Background(), q)
	if err == errRollupDeclined {
		return nil, false, nil
	}
	return rows, err == nil, err
}

// SetFinalCopyMinVisitors sets the base size from which reads write a
// finalized copy, and returns a function that restores it.
func SetFinalCopyMinVisitors(n uint64) func() {
	old := finalCopyMinVisitors
	finalCopyMinVisitors = n
	return func() { finalCopyMinVisitors = old }
}

// RollupSQL is the rollup path's statement for q, reading the base's
// finalized copy when copied; ok is false when the rollup does not serve q.
func RollupSQL(q MetricsQuery, copied bool) (sql string, ok bool) {
	if !rollupEligible(q, dataFacts{}) {
		return "", false
	}
	return rollupSQL(q, copied), true
}

// BuildFinalSQL is the statement that writes the base's finalized copy.
func BuildFinalSQL() string { return buildFinalSQL() }
