package warehouse

// The session analytics statements, for the external test that runs and
// dumps each of them (LIFT_DUMP_SQL, make chdb-check).
var (
	StorewideActivitySQL = storewideActivitySQL
	AddActivity          = addActivity
	DataVersionSQL       = dataVersionSQL
)
