package stats

import "fmt"

// Analysis is the full comparison of one metric: what `lift stats` prints
// and what the API maps onto a results snapshot's vs_control entries.
type Analysis struct {
	MetricKind    MetricKind `json:"metric_kind"`
	LowerIsBetter bool       `json:"lower_is_better"`
	ControlIndex  int        `json:"control_index"`
	// Settings echo the levels and options applied, defaults filled in.
	Settings Settings `json:"analysis"`
	// CUPEDTheta is the regression coefficient θ CUPED applied; present
	// only with Options.CUPED.
	CUPEDTheta *float64 `json:"cuped_theta,omitempty"`
	// Groups describe each group as analysed (capped values when winsorized).
	Groups []GroupSummary `json:"groups"`
	// Comparisons hold one entry per variant, in test group order.
	Comparisons []Comparison `json:"comparisons"`
	// SRM is present when the request gave splits.
	SRM *SRM `json:"srm,omitempty"`
}

// Settings are the levels and options an Analysis was computed with.
type Settings struct {
	ConfidenceLevel       float64 `json:"confidence_level"`
	CredibleIntervalLevel float64 `json:"credible_interval_level"`
	Options               Options `json:"options"`
}

// GroupSummary is a group's metric value and the per-unit variance behind
// its standard error (variance/n). Mean and Variance are absent when the
// group cannot be summarised (no units, a single unit, a zero denominator).
type GroupSummary struct {
	TestGroupIndex int      `json:"test_group_index"`
	N              int64    `json:"n"`
	Mean           *float64 `json:"mean,omitempty"`
	Variance       *float64 `json:"variance,omitempty"`
}

// Analyze compares every variant with the control. It returns an error
// wrapping ErrInvalidRequest when the request is malformed or its sums are
// impossible; valid data on which a comparison means nothing gives a
// Comparison with Computable false instead.
func Analyze(req AnalysisRequest) (Analysis, error) {
	req = req.withDefaults()
	if err := req.Validate(); err != nil {
		return Analysis{}, err
	}
	summaries, problems, theta := summarizeAll(req)
	a := Analysis{
		MetricKind:    req.MetricKind,
		LowerIsBetter: req.LowerIsBetter,
		ControlIndex:  req.ControlIndex,
		Settings: Settings{
			ConfidenceLevel:       req.ConfidenceLevel,
			CredibleIntervalLevel: req.CredibleIntervalLevel,
			Options:               req.Options,
		},
		CUPEDTheta:  theta,
		Groups:      groupSummaries(req.Groups, summaries, problems),
		Comparisons: compareAll(req, summaries, problems),
	}
	if req.Options.Correction != "" {
		adjustPValues(a.Comparisons, req.Options.Correction)
	}
	if req.Splits != nil {
		srm, err := CheckSRM(counts(req.Groups), req.Splits)
		if err != nil {
			return Analysis{}, err
		}
		a.SRM = &srm
	}
	return a, nil
}

func summarizeAll(req AnalysisRequest) ([]summary, []*notComputable, *float64) {
	summaries := make([]summary, len(req.Groups))
	problems := make([]*notComputable, len(req.Groups))
	for i, g := range req.Groups {
		summaries[i], problems[i] = summarize(req.MetricKind, g, g.Winsorized)
	}
	if !req.Options.CUPED {
		return summaries, problems, nil
	}
	byDelta := req.Options.RelativeMethod == RelativeDelta
	var fit cupedAdjustment
	switch {
	case req.MetricKind == KindRatio:
		fit = cupedFitRatio(req.Groups, byDelta)
	case byDelta:
		fit = cupedFitJoint(req.Groups)
	default:
		fit = cupedFit(req.Groups)
	}
	for i, g := range req.Groups {
		if problems[i] == nil {
			summaries[i] = fit.apply(summaries[i], g)
		}
	}
	return summaries, problems, &fit.theta
}

func groupSummaries(groups []GroupStats, summaries []summary, problems []*notComputable) []GroupSummary {
	out := make([]GroupSummary, len(groups))
	for i, g := range groups {
		out[i] = GroupSummary{TestGroupIndex: i, N: g.N}
		if problems[i] == nil {
			out[i].Mean, out[i].Variance = &summaries[i].mean, &summaries[i].variance
		}
	}
	return out
}

func compareAll(req AnalysisRequest, summaries []summary, problems []*notComputable) []Comparison {
	set := settings{
		confidence:    req.ConfidenceLevel,
		credible:      req.CredibleIntervalLevel,
		lowerIsBetter: req.LowerIsBetter,
		sequential:    req.Options.Sequential,
		prior:         req.Options.Prior,
		kind:          req.MetricKind,
		nonNegative:   req.NonNegative,
		method:        req.Options.RelativeMethod,
	}
	ctl := req.ControlIndex
	var out []Comparison
	for i := range req.Groups {
		if i == ctl {
			continue
		}
		var c Comparison
		var nc *notComputable
		switch {
		case problems[ctl] != nil:
			nc = groupProblem(problems[ctl], "control", ctl)
		case problems[i] != nil:
			nc = groupProblem(problems[i], "variant", i)
		default:
			c, nc = compare(summaries[ctl], summaries[i], set)
		}
		if nc != nil {
			c = Comparison{Reason: nc.reason, Message: nc.message}
		}
		c.TestGroupIndex = i
		out = append(out, c)
	}
	return out
}

// adjustPValues sets the adjusted p-values of the computable comparisons;
// the family is the variants that have a test at all.
func adjustPValues(cs []Comparison, correction Correction) {
	var rel, abs []float64
	var idx []int
	for i, c := range cs {
		if c.Computable {
			rel = append(rel, c.Frequentist.PValue)
			abs = append(abs, c.Frequentist.DifferencePValue)
			idx = append(idx, i)
		}
	}
	adjust := holm
	if correction == CorrectionBenjaminiHochberg {
		adjust = benjaminiHochberg
	}
	relAdj, absAdj := adjust(rel), adjust(abs)
	for k, i := range idx {
		cs[i].Frequentist.AdjustedPValue = &relAdj[k]
		cs[i].Frequentist.AdjustedDifferencePValue = &absAdj[k]
	}
}

func counts(groups []GroupStats) []int64 {
	out := make([]int64, len(groups))
	for i, g := range groups {
		out[i] = g.N
	}
	return out
}

// String gives a one-line account of a comparison, for logs and test failures.
func (c Comparison) String() string {
	if !c.Computable {
		return fmt.Sprintf("group %d: not computable (%s): %s", c.TestGroupIndex, c.Reason, c.Message)
	}
	return fmt.Sprintf("group %d: lift %.5f difference %.5f p %.5f chance %.5f",
		c.TestGroupIndex, *c.Lift, *c.Difference, c.Frequentist.PValue, c.Bayesian.ProbBeatControl)
}
