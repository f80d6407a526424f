package warehouse

// The statements the results queries send, for the external test that runs
// and dumps each of them (it cannot live in this package: lifttest imports
// warehouse). orphans picks the statement joined with the session → visitor
// lookups (page loads, and add-to-carts and checkouts, that name no visitor).
func GroupMetricsSQL(q MetricsQuery, orphans bool) string {
	return groupMetricsSQL(q, dataFacts{orphanSessions: orphans, orphanEvents: orphans})
}

var (
	CustomEventsSQL = customEventsSQL
	ExportOrdersSQL = exportOrdersSQL
	OrphansSQL      = orphansSQL
)

// WinsorCapsSQL is the caps statement of q without orphan sessions.
func WinsorCapsSQL(q MetricsQuery, percentile float64) string {
	return winsorCapsSQL(q, dataFacts{}, percentile)
}
