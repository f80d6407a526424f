package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/liftab/lift/stats"
)

func init() { rootCmd.AddCommand(newStatsCmd()) }

// newStatsCmd is `lift stats`: the statistics engine as a filter, so an
// analysis can be checked or reproduced without the service. The request and
// response schema are documented in stats/README.md.
func newStatsCmd() *cobra.Command {
	var caseName string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Compare test groups from sufficient statistics (JSON request on stdin, JSON analysis on stdout)",
		Long: `Reads one analysis request (metric kind, per-group sufficient statistics,
levels, options) as JSON on stdin and writes the comparison of every variant
with the control as indented JSON on stdout. A malformed request is reported
on stderr with exit status 1. See stats/README.md for the schema.

--case NAME reproduces a published reference case of GrowthBook's or
PostHog's test suite instead: it prints the source, the request (which can be
piped back into lift stats) and each published value beside the engine's,
and fails when one disagrees. --case list names them.`,
		Example: `  echo '{"metric_kind":"proportion","groups":[{"n":100,"sum":49},{"n":100,"sum":51}]}' | lift stats
  lift stats --case posthog-ratio-relative`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if caseName != "" {
				return runStatsCase(cmd.OutOrStdout(), caseName)
			}
			return runStats(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&caseName, "case", "", "reproduce a published reference case (list: name them all)")
	cmd.AddCommand(newStatsSimulateCmd())
	return cmd
}

// runStatsCase prints one reference case, or all their names, and fails
// when the engine disagrees with a published value.
func runStatsCase(out io.Writer, name string) error {
	if name == "list" {
		for _, c := range stats.ReferenceCases() {
			fmt.Fprintf(out, "%s\t%s\n", c.Name, c.Source)
		}
		return nil
	}
	c, ok := stats.FindReferenceCase(name)
	if !ok {
		return fmt.Errorf("stats: %w: no reference case %q (lift stats --case list names them)", stats.ErrInvalidRequest, name)
	}
	_, checks, err := c.Check()
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	req, err := json.Marshal(c.Request)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "case:    %s\nsource:  %s\nnote:    %s\nrequest: %s\n\n", c.Name, c.Source, c.Note, req)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "field\tpublished\tlift stats\tplaces\tagree")
	bad := 0
	for _, k := range checks {
		fmt.Fprintf(tw, "%s\t%v\t%.9f\t%d\t%s\n", k.Field, k.Value, k.Got, k.Places, map[bool]string{true: "yes", false: "NO"}[k.Agree])
		if !k.Agree {
			bad++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("stats: case %s: %d of %d published values not reproduced", c.Name, bad, len(checks))
	}
	return nil
}

func runStats(in io.Reader, out io.Writer) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("stats: read request: %w", err)
	}
	req, err := stats.ParseRequest(data)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	analysis, err := stats.Analyze(req)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(analysis); err != nil {
		return fmt.Errorf("stats: write analysis: %w", err)
	}
	return nil
}

// simulateFlags are the knobs of `lift stats simulate`.
type simulateFlags struct {
	kind      string
	cfg       stats.SimulationConfig
	method    string
	days      int
	powerLift float64
	cupedRho  float64
	cmdSetRho bool // --cuped-rho given: the --kind mean row simulates CUPED
	json      bool
}

// newStatsSimulateCmd is `lift stats simulate`: the engine's calibration on
// synthetic stores. Without --kind it prints the whole suite (A/A false
// positives per metric and direction, daily peeking, power); with --kind it
// prints one configurable row per kind.
func newStatsSimulateCmd() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate A/A and planted-lift tests: false positives per direction, daily peeking, power",
		Long: `Draws --runs tests of --visitors visitors a group (buy with probability
--conversion; lognormal orders of mean 50 and σ --sigma) and analyses each.
Without --kind: the calibration suite (A/A false positives per metric and
direction with Monte Carlo errors, raw and winsorized; daily peeking over
--days, fixed vs sequential; power at --power-lift vs normal theory; CUPED on
revenue whose pre-test value correlates --cuped-rho with it: A/A false
positives and power with and without CUPED vs normal theory). With --kind:
one row per kind for --sigma, --lift, --winsorize (--kind mean --cuped-rho ρ:
each test with and without CUPED). Seeded per run: the output depends on the
flags only. Details: stats/README.md.`,
		Example: `  lift stats simulate
  lift stats simulate --kind mean --sigma 2 --winsorize 0 --runs 20000
  lift stats simulate --kind mean --sigma 1 --cuped-rho 0.7 --lift 0.1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.cmdSetRho = cmd.Flags().Changed("cuped-rho")
			// The library reads a level of 0 as "the default"; a person
			// who typed it meant something else.
			if cmd.Flags().Changed("level") && !(f.cfg.Level > 0 && f.cfg.Level < 1) {
				return fmt.Errorf("stats simulate: --level %v is not strictly between 0 and 1", f.cfg.Level)
			}
			if f.cmdSetRho && f.kind != "" && f.kind != string(stats.KindMean) && f.kind != "all" {
				return fmt.Errorf("stats simulate: --cuped-rho is simulated on revenue: use it with --kind mean (or all), not %s", f.kind)
			}
			return runSimulate(cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kind, "kind", "", "one row per metric kind: proportion, mean, ratio or all (default: the calibration suite)")
	fl.IntVar(&f.cfg.Visitors, "visitors", 20000, "visitors per group")
	fl.IntVar(&f.cfg.Runs, "runs", 2000, "simulated tests per row")
	fl.Float64Var(&f.cfg.Conversion, "conversion", 0.03, "control conversion rate")
	fl.Float64Var(&f.cfg.Sigma, "sigma", 1, "σ of the lognormal order values (with --kind)")
	fl.Float64Var(&f.cfg.Lift, "lift", 0, "planted relative lift of the variant, 0 = A/A (with --kind)")
	fl.Float64Var(&f.cfg.Winsorize, "winsorize", stats.DefaultWinsorPercentile, "cap money values at this percentile among buyers, 0 = off (with --kind)")
	fl.Float64Var(&f.cfg.Level, "level", stats.DefaultLevel, "confidence level")
	fl.StringVar(&f.method, "method", string(stats.RelativeFieller), "relative method: fieller or delta")
	fl.IntVar(&f.days, "days", 28, "daily looks in the peeking simulation (suite)")
	fl.Float64Var(&f.powerLift, "power-lift", 0.1, "planted relative lift for the power rows: conversion, and revenue in the CUPED rows (suite)")
	fl.Float64Var(&f.cupedRho, "cuped-rho", 0.7, "pre/post correlation of revenue in the CUPED rows (suite; 0 = leave them out); with --kind mean, ρ > 0 analyses each test with and without CUPED")
	fl.IntVar(&f.cfg.Workers, "workers", 0, "parallel workers (0 = one per CPU); does not change the results")
	fl.Uint64Var(&f.cfg.Seed, "seed", 1, "random seed")
	fl.BoolVar(&f.json, "json", false, "print the results as JSON")
	return cmd
}

func runSimulate(out io.Writer, f simulateFlags) error {
	if f.kind == "" {
		return runSimulateReport(out, f)
	}
	kinds := []stats.MetricKind{stats.MetricKind(f.kind)}
	if f.kind == "all" {
		kinds = []stats.MetricKind{stats.KindProportion, stats.KindMean, stats.KindRatio}
	}
	var results []stats.SimulationResult
	for _, k := range kinds {
		cfg := f.cfg
		cfg.Kind, cfg.Method = k, stats.RelativeMethod(f.method)
		if k == stats.KindMean && f.cmdSetRho {
			cfg.CUPEDCorrelation, cfg.Winsorize = f.cupedRho, 0
		}
		r, err := stats.Simulate(cfg)
		if err != nil {
			return fmt.Errorf("stats simulate: %w", err)
		}
		results = append(results, r)
	}
	if f.json {
		return writeJSON(out, results)
	}
	return printSimulation(out, results)
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printSimulation(out io.Writer, results []stats.SimulationResult) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tsigma\twinsorize\tlift\truns\tnot computable\tlosses [95% CI]\twins [95% CI]\tsignificant [95% CI]")
	for _, r := range results {
		c := r.Config
		sigma, winsor := describeMoney(c)
		kind := string(c.Kind)
		if p := r.WithoutCUPED; p != nil {
			fmt.Fprintf(tw, "%s (ρ %g, no CUPED)\t%s\t%s\t%g\t%d\t%d\t%s\t%s\t%s\n", kind, c.CUPEDCorrelation, sigma, winsor, c.Lift,
				c.Runs, p.NotComputable, formatRate(p.Losses), formatRate(p.Wins), formatRate(p.Significant))
			kind = fmt.Sprintf("%s (ρ %g, CUPED)", kind, c.CUPEDCorrelation)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%d\t%d\t%s\t%s\t%s\n", kind, sigma, winsor, c.Lift, c.Runs,
			r.NotComputable, formatRate(r.Losses), formatRate(r.Wins), formatRate(r.Significant))
	}
	return tw.Flush()
}

// describeMoney is a row's σ and winsorizing, "-" where they do not apply.
func describeMoney(c stats.SimulationConfig) (sigma, winsor string) {
	if c.Kind == stats.KindProportion {
		return "-", "-"
	}
	if c.Winsorize == 0 {
		return fmt.Sprint(c.Sigma), "off"
	}
	return fmt.Sprint(c.Sigma), fmt.Sprint(c.Winsorize)
}

func formatRate(r stats.Rate) string {
	return strings.TrimSpace(fmt.Sprintf("%.2f%% [%.2f%%, %.2f%%]", 100*r.Rate, 100*r.Interval.Lower, 100*r.Interval.Upper))
}

func runSimulateReport(out io.Writer, f simulateFlags) error {
	c := f.cfg
	r, err := stats.SimulateReport(stats.ReportConfig{Visitors: c.Visitors, Runs: c.Runs, Conversion: c.Conversion,
		Days: f.days, PowerLift: f.powerLift, Method: stats.RelativeMethod(f.method), Level: c.Level,
		CUPEDCorrelation: f.cupedRho, Seed: c.Seed, Workers: c.Workers})
	if err != nil {
		return fmt.Errorf("stats simulate: %w", err)
	}
	if f.json {
		return writeJSON(out, r)
	}
	printReportAA(out, r)
	printReportPeeking(out, r.Peeking)
	printReportPower(out, r)
	if r.CUPED != nil {
		printReportCUPED(out, r.Config, *r.CUPED)
	}
	return nil
}

// metricNames name the suite's rows as a merchant reads them.
var metricNames = map[stats.MetricKind]string{
	stats.KindProportion: "conversion",
	stats.KindMean:       "revenue per visitor",
	stats.KindRatio:      "average order value",
}

func printReportAA(out io.Writer, r stats.Report) {
	alpha := 1 - r.Config.Level
	fmt.Fprintf(out, "A/A tests: %d a row, %d visitors a group, %g%% conversion, lognormal orders (mean 50), relative method %s, seed %d\n",
		r.Config.Runs, r.Config.Visitors, 100*r.Config.Conversion, r.Config.Method, r.Config.Seed)
	fmt.Fprintf(out, "nominal: %s overall (target ±%.2f), %s each direction (target ±%.2f); ± below is the Monte Carlo standard error\n\n",
		percent(alpha), 100*stats.TargetFPRTolerance, percent(alpha/2), 100*stats.TargetDirectionTolerance)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tσ\twinsorized\tnot computable\tlosses\twins\tfalse positives\ttarget")
	for _, row := range r.AA {
		sigma, winsor := describeMoney(row.Config)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", metricNames[row.Config.Kind], sigma, winsor,
			row.NotComputable, withSE(row.Losses), withSE(row.Wins), withSE(row.Significant), aaVerdict(row))
	}
	tw.Flush()
	se := math.Sqrt(alpha * (1 - alpha) / float64(r.Config.Runs))
	hint := ""
	if r.Config.Runs < 20000 {
		hint = "; --runs 20000 narrows it"
	}
	fmt.Fprintf(out, "(at %d runs the Monte Carlo standard error of a true %s is %.2f pts: a calibrated row misses the ±%.2f band by chance in %.0f%% of seeds%s)\n",
		r.Config.Runs, percent(alpha), 100*se, 100*stats.TargetFPRTolerance, 100*2*distuv.UnitNormal.CDF(-stats.TargetFPRTolerance/se), hint)
}

func printReportPeeking(out io.Writer, p stats.PeekingResult) {
	c := p.Config
	alpha := 1 - c.Level
	fmt.Fprintf(out, "\nDaily peeking: %d A/A conversion tests, %d looks (one a day), %d visitors a group by the last; stop at the first look with p < %.2g\n\n",
		c.Runs, c.Days, c.Visitors, alpha)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "test\tlooks\tfalse positives\tnominal\ttarget")
	fmt.Fprintf(tw, "fixed-horizon Welch\tlast day only\t%s\t%s\t-\n", withSE(p.FixedFinal), percent(alpha))
	fmt.Fprintf(tw, "fixed-horizon Welch\tdaily\t%s\t%s\tnot valid when peeked\n", withSE(p.FixedPeeked), percent(alpha))
	fmt.Fprintf(tw, "always-valid sequential (tuning %g)\tlast day only\t%s\t≤ %s\t-\n", c.TuningParameter, withSE(p.SequentialFinal), percent(alpha))
	fmt.Fprintf(tw, "always-valid sequential (tuning %g)\tdaily\t%s\t≤ %s\t%s\n", c.TuningParameter, withSE(p.SequentialPeeked), percent(alpha),
		verdictWord(p.SequentialPeeked.Rate <= alpha))
	tw.Flush()
}

func printReportPower(out io.Writer, r stats.Report) {
	c := r.Power.Config
	fmt.Fprintf(out, "\nPower: %d conversion tests, %.4g%% → %.4g%% (+%.4g%% relative), %d visitors a group, fixed horizon\n\n",
		c.Runs, 100*c.Conversion, 100*c.Conversion*(1+c.Lift), 100*c.Lift, c.Visitors)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "simulated power\tnormal theory\tdifference\ttarget")
	fmt.Fprintf(tw, "%s\t%s\t%+.2f pts\t%s\n", withSE(r.Power.Significant), percent(r.NormalPower),
		100*(r.Power.Significant.Rate-r.NormalPower), fmt.Sprintf("±%.0f pts: %s", 100*stats.TargetPowerTolerance, verdictWord(r.PowerWithinTarget())))
	tw.Flush()
	p := r.PeekingPower
	fmt.Fprintf(out, "\nthe same lift looked at daily (%d looks; significant at any look, or at the last):\n", p.Config.Days)
	fmt.Fprintf(out, "  always-valid sequential: %s daily, %s at the last look only\n", withSE(p.SequentialPeeked), withSE(p.SequentialFinal))
	fmt.Fprintf(out, "  fixed-horizon Welch:     %s daily (not valid: its A/A rate is above), %s at the last look\n",
		withSE(p.FixedPeeked), withSE(p.FixedFinal))
}

func withSE(r stats.Rate) string { return fmt.Sprintf("%.2f%% ± %.2f", 100*r.Rate, 100*r.StdErr) }

func percent(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }

// aaVerdict says whether an A/A row meets its targets, and if not how it
// misses: too many false positives, too few (a test that finds nothing), or
// one direction out of line.
func aaVerdict(r stats.SimulationResult) string {
	alpha := 1 - r.Config.Level
	switch {
	case r.FPRWithinTarget():
		return "ok"
	case r.Significant.Rate > alpha+stats.TargetFPRTolerance:
		return "OUT: too many"
	case r.Significant.Rate < alpha-stats.TargetFPRTolerance:
		return "OUT: conservative"
	}
	return "OUT: one direction"
}

func verdictWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "OUT"
}
