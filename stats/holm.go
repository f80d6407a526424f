package stats

import (
	"cmp"
	"math"
	"slices"
)

// holm returns the Holm step-down adjusted p-values, in the order given:
// the i-th smallest of m p-values becomes max over j ≤ i of min(1, (m−j+1)·p_j).
// It controls the family-wise error rate across the variants without
// assuming independence, and is uniformly more powerful than Bonferroni.
func holm(p []float64) []float64 {
	m, order := len(p), ascending(p)
	adjusted := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		running = math.Max(running, math.Min(1, float64(m-rank)*p[i]))
		adjusted[i] = running
	}
	return adjusted
}

// benjaminiHochberg returns the Benjamini–Hochberg adjusted p-values, in the
// order given: the i-th smallest of m p-values becomes min over j ≥ i of
// min(1, m·p_j/j). Rejecting those at or below q keeps the expected share of
// false discoveries among the rejected at most q for independent or
// positively dependent tests (variants sharing one control are positively
// dependent). With several variants it finds more winners than Holm, at the
// price of controlling that share rather than the chance of any false one.
func benjaminiHochberg(p []float64) []float64 {
	m, order := len(p), ascending(p)
	adjusted := make([]float64, m)
	running := 1.0
	for rank := m - 1; rank >= 0; rank-- {
		i := order[rank]
		running = math.Min(running, math.Min(1, float64(m)*p[i]/float64(rank+1)))
		adjusted[i] = running
	}
	return adjusted
}

// ascending is the indexes of p from the smallest p-value up, ties in input
// order: the ranking both corrections step through.
func ascending(p []float64) []int {
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	return order
}
