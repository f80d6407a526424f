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
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	adjusted := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		running = math.Max(running, math.Min(1, float64(m-rank)*p[i]))
		adjusted[i] = running
	}
	return adjusted
}
