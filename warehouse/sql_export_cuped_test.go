package warehouse

// CovariatesSQL is CUPED's covariates statement of q without orphan
// sessions, for the external test that runs and dumps it.
func CovariatesSQL(q MetricsQuery) string {
	return covariatesSQL(q, dataFacts{})
}
