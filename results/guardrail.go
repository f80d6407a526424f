package results

import (
	"context"
	"fmt"
	"strings"

	"github.com/liftab/lift/experiment"
)

// Pauser pauses a running test when a snapshot finds a guardrail harmed
// beyond its tolerance. experiment.Service implements it with the same
// transition as a manual pause; the reason lands on the test and in the
// audit log. It reports whether it paused (false: the test was no longer
// active, or is gone); an error means nothing changed and is worth a retry.
type Pauser interface {
	PauseForGuardrail(ctx context.Context, shopID, testID int64, reason string) (bool, error)
}

// Guardrail statuses in a snapshot.
const (
	// GuardrailOK: no variant is shown to harm the metric beyond tolerance.
	GuardrailOK = "ok"
	// GuardrailBreached: a variant harms the metric beyond tolerance, with
	// the always-valid interval wholly past it; the test is paused.
	GuardrailBreached = "breached"
	// GuardrailNotMonitored: the test is not analysed sequentially, and a
	// fixed-horizon test read every 6 hours would raise false alarms.
	GuardrailNotMonitored = "not_monitored"
	// GuardrailInsufficientData: a group has fewer than MinSampleSize units
	// or the metric is not computable yet.
	GuardrailInsufficientData = "insufficient_data"
)

// GuardrailResult is one guardrail of a snapshot: its status and, when a
// variant was compared, the worst one's relative lift and always-valid
// interval.
type GuardrailResult struct {
	Metric             string    `json:"metric"`
	MaxHarm            float64   `json:"max_harm"`
	Status             string    `json:"status"`
	TestGroupIndex     *int      `json:"test_group_index"`
	Lift               *float64  `json:"lift"`
	ConfidenceInterval *Interval `json:"confidence_interval"`
}

// guardrails evaluates t's guardrails on cmp. A guardrail is breached when
// some variant's interval of the relative lift lies wholly beyond the
// tolerated harm (below −max_harm, or above +max_harm for lower-is-better
// metrics). Only sequential intervals are trusted for this: they stay valid
// however often the snapshot looks. It returns the results and the pause
// reason of the first breach ("" when none).
func guardrails(t *experiment.Test, sums []Sums, cmp comparison, sequential bool) ([]GuardrailResult, string) {
	out := []GuardrailResult{}
	var reasons []string
	for _, g := range t.Guardrails {
		r := GuardrailResult{Metric: g.Metric, MaxHarm: g.MaxHarm, Status: GuardrailInsufficientData}
		switch {
		case !sequential:
			r.Status = GuardrailNotMonitored
		case enoughUnits(sums):
			if reason := r.evaluate(t, cmp, lowerIsBetter(g.Metric)); reason != "" {
				reasons = append(reasons, reason)
			}
		}
		out = append(out, r)
	}
	if len(reasons) == 0 {
		return out, ""
	}
	// Resuming does not silence the guardrail: the always-valid interval
	// only narrows, so the next snapshot pauses the test again. The way on
	// is the merchant's decision to tolerate more harm, said in guardrails.
	return out, strings.Join(reasons, " ") + " Lift paused the test automatically. While the guardrail stays breached, " +
		"a resumed test is paused again at its next results update; to run it anyway, raise the guardrail's max_harm " +
		"or remove the guardrail, then resume."
}

// evaluate sets r from the comparisons of its metric and returns the
// breach's reason, or "". It stays insufficient_data only when no variant
// can be compared.
func (r *GuardrailResult) evaluate(t *experiment.Test, cmp comparison, lowerBetter bool) string {
	a := cmp.analyses[r.Metric]
	if a == nil {
		return ""
	}
	worst := -1.0
	for _, c := range a.Comparisons {
		// A variant that cannot be compared (no orders for an order
		// value) says nothing; the others are still watched, or a variant
		// that broke checkout would hide the harm of every other.
		if !c.Computable || c.Frequentist == nil || c.Lift == nil {
			continue
		}
		ci := c.Frequentist.ConfidenceInterval
		// harm is how far the interval's most favourable end lies past the
		// tolerance: > 0 means the harm is beyond it, significantly.
		harm := -ci.Upper - r.MaxHarm
		if lowerBetter {
			harm = ci.Lower - r.MaxHarm
		}
		if r.TestGroupIndex == nil || harm > worst {
			idx, lift := c.TestGroupIndex, *c.Lift
			r.TestGroupIndex, r.Lift, r.ConfidenceInterval, worst = &idx, &lift, &Interval{Lower: ci.Lower, Upper: ci.Upper}, harm
		}
	}
	if r.TestGroupIndex == nil {
		return "" // no variant could be compared: insufficient_data stands
	}
	r.Status = GuardrailOK
	if worst <= 0 {
		return ""
	}
	r.Status = GuardrailBreached
	name := fmt.Sprint(*r.TestGroupIndex)
	if g := t.Group(*r.TestGroupIndex); g != nil {
		name = fmt.Sprintf("%d (%s)", g.Index, g.Name)
	}
	return fmt.Sprintf("Guardrail %s breached: test group %s changes it by %+.1f%% against the control "+
		"(always-valid 95%% interval %+.1f%% to %+.1f%%), beyond the tolerated harm of %.1f%%.",
		r.Metric, name, 100**r.Lift, 100*r.ConfidenceInterval.Lower, 100*r.ConfidenceInterval.Upper, 100*r.MaxHarm)
}

func enoughUnits(sums []Sums) bool {
	for _, s := range sums {
		if s.N < MinSampleSize {
			return false
		}
	}
	return len(sums) >= 2
}

func lowerIsBetter(name string) bool {
	for _, m := range compared {
		if m.name == name {
			return m.lowerIsBetter
		}
	}
	return false
}
