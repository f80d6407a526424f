package warehouse

// The statements the results queries send, for the external test that runs
// and dumps each of them (it cannot live in this package: lifttest imports
// warehouse).
var (
	GroupMetricsSQL = groupMetricsSQL
	CustomEventsSQL = customEventsSQL
)
