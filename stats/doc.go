// Package stats compares the groups of an A/B test from per-group sufficient
// statistics (DESIGN §8). It does no I/O: the warehouse computes the sums, the
// jobs package calls Analyze, and the API formats what comes back.
//
// For every variant against the control it reports the relative lift and the
// absolute difference, a Welch t-test (or, as an option, an always-valid
// sequential test), and a Gaussian Bayesian posterior on the lift. Inputs on
// which a comparison has no meaning (an empty group, zero variance, a control
// mean of zero or below) yield a Comparison with Computable false and a
// Reason, never NaN, Inf or an invented 0.5.
package stats
