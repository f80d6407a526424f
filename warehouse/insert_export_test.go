package warehouse

// byMonths, for the external test of a batch over many months.
var ByMonths = byMonths
