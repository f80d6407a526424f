package stats

import (
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// SRMStatus is the verdict of the sample ratio mismatch check.
type SRMStatus string

const (
	SRMOK               SRMStatus = "ok"
	SRMMismatch         SRMStatus = "mismatch"
	SRMInsufficientData SRMStatus = "insufficient_data"
)

// Thresholds of DESIGN §8.
const (
	srmAlpha          = 0.001
	srmMinGroupCounts = 8
)

// SRM is the outcome of the sample ratio mismatch check. ChiSquare and
// PValue are absent when the status is insufficient_data: with fewer than 8
// units in a group the χ² approximation is not trusted.
type SRM struct {
	Status    SRMStatus `json:"status"`
	ChiSquare *float64  `json:"chi_square,omitempty"`
	PValue    *float64  `json:"p_value,omitempty"`
}

// CheckSRM runs Pearson's χ² goodness-of-fit test of the units assigned to
// each group against the configured split weights (any scale, e.g.
// percentages). A mismatch means assignment or tracking is broken and the
// test's results should not be trusted. A group of weight 0 takes no part
// (it can never reach 8 units, which switched the check off for the whole
// test, the truth audit's F5), unless it has units: then assignment is
// broken, a mismatch whatever the others say (p 0, no χ²). It returns
// ErrInvalidRequest when the slices differ in length, have fewer than 2
// groups, or hold a negative count or a negative or infinite weight.
func CheckSRM(counts []int64, weights []float64) (SRM, error) {
	if err := checkSRMInput(counts, weights); err != nil {
		return SRM{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	var cs []int64
	var ws []float64
	for i := range counts {
		if weights[i] > 0 {
			cs, ws = append(cs, counts[i]), append(ws, weights[i])
		} else if counts[i] > 0 {
			zero := 0.0
			return SRM{Status: SRMMismatch, PValue: &zero}, nil
		}
	}
	if len(cs) < 2 {
		return SRM{Status: SRMInsufficientData}, nil
	}
	counts, weights = cs, ws
	var total, weightSum float64
	for i, c := range counts {
		if c < srmMinGroupCounts {
			return SRM{Status: SRMInsufficientData}, nil
		}
		total += float64(c)
		weightSum += weights[i]
	}
	var chi2 float64
	for i, c := range counts {
		expected := total * weights[i] / weightSum
		d := float64(c) - expected
		chi2 += d * d / expected
	}
	p := distuv.ChiSquared{K: float64(len(counts) - 1)}.Survival(chi2)
	status := SRMOK
	if p < srmAlpha {
		status = SRMMismatch
	}
	return SRM{Status: status, ChiSquare: &chi2, PValue: &p}, nil
}

func checkSRMInput(counts []int64, weights []float64) error {
	if len(counts) != len(weights) {
		return fmt.Errorf("srm: %d counts for %d weights", len(counts), len(weights))
	}
	if len(counts) < 2 {
		return fmt.Errorf("srm: need at least 2 groups, got %d", len(counts))
	}
	for i := range counts {
		if counts[i] < 0 {
			return fmt.Errorf("srm: count %d of group %d is negative", counts[i], i)
		}
		if !finite(weights[i]) || weights[i] < 0 {
			return fmt.Errorf("srm: weight %v of group %d is not a number from 0 up", weights[i], i)
		}
	}
	return nil
}
