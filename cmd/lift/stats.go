package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/stats"
)

func init() { rootCmd.AddCommand(newStatsCmd()) }

// newStatsCmd is `lift stats`: the statistics engine as a filter, so an
// analysis can be checked or reproduced without the service. The request and
// response schema are documented in stats/README.md.
func newStatsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Compare test groups from sufficient statistics (JSON request on stdin, JSON analysis on stdout)",
		Long: `Reads one analysis request (metric kind, per-group sufficient statistics,
levels, options) as JSON on stdin and writes the comparison of every variant
with the control as indented JSON on stdout. A malformed request is reported
on stderr with exit status 1. See stats/README.md for the schema.`,
		Example: `  echo '{"metric_kind":"proportion","groups":[{"n":100,"sum":49},{"n":100,"sum":51}]}' | lift stats`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStats(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(newStatsSimulateCmd())
	return cmd
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
	kind   string
	cfg    stats.SimulationConfig
	method string
	json   bool
}

// newStatsSimulateCmd is `lift stats simulate`: A/A false-positive rates
// (and power at a planted lift) of the engine on synthetic stores, each
// direction separately, so a lopsided test shows.
func newStatsSimulateCmd() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate A/A (or planted-lift) tests and print how often each direction comes out significant",
		Long: `Draws --runs tests of --visitors visitors a group: each visitor buys with
probability --conversion, orders are lognormal with mean 50 and σ --sigma
(ratio metrics: a buyer orders again with probability 0.2). The variant gets
--lift on the conversion rate (proportion) or on order values (mean, ratio);
0 is an A/A test. Each test is analysed by the engine; the output is the share
of tests significant at 1 − --level with the lift below 0 (losses) and above
0 (wins), each with its Wilson 95% interval. Money metrics are winsorized at
--winsorize (percentile among buyers; 0 = off).`,
		Example: `  lift stats simulate --runs 2000 --visitors 20000 --conversion 0.03 --sigma 2`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSimulate(cmd.OutOrStdout(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kind, "kind", "all", "metric kind: proportion, mean, ratio or all")
	fl.IntVar(&f.cfg.Visitors, "visitors", 20000, "visitors per group")
	fl.IntVar(&f.cfg.Runs, "runs", 2000, "simulated tests")
	fl.Float64Var(&f.cfg.Conversion, "conversion", 0.03, "control conversion rate")
	fl.Float64Var(&f.cfg.Sigma, "sigma", 1, "σ of the lognormal order values")
	fl.Float64Var(&f.cfg.Lift, "lift", 0, "planted relative lift of the variant (0 = A/A)")
	fl.Float64Var(&f.cfg.Winsorize, "winsorize", stats.DefaultWinsorPercentile, "cap money values at this percentile among buyers (0 = off)")
	fl.Float64Var(&f.cfg.Level, "level", stats.DefaultLevel, "confidence level")
	fl.StringVar(&f.method, "method", string(stats.RelativeFieller), "relative method: fieller or delta")
	fl.Uint64Var(&f.cfg.Seed, "seed", 1, "random seed")
	fl.BoolVar(&f.json, "json", false, "print the results as JSON")
	return cmd
}

func runSimulate(out io.Writer, f simulateFlags) error {
	kinds := []stats.MetricKind{stats.MetricKind(f.kind)}
	if f.kind == "all" {
		kinds = []stats.MetricKind{stats.KindProportion, stats.KindMean, stats.KindRatio}
	}
	var results []stats.SimulationResult
	for _, k := range kinds {
		cfg := f.cfg
		cfg.Kind, cfg.Method = k, stats.RelativeMethod(f.method)
		r, err := stats.Simulate(cfg)
		if err != nil {
			return fmt.Errorf("stats simulate: %w", err)
		}
		results = append(results, r)
	}
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	return printSimulation(out, results)
}

func printSimulation(out io.Writer, results []stats.SimulationResult) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tsigma\twinsorize\tlift\truns\tnot computable\tlosses [95% CI]\twins [95% CI]\tsignificant [95% CI]")
	for _, r := range results {
		c := r.Config
		sigma, winsor := "-", "-"
		if c.Kind != stats.KindProportion {
			sigma, winsor = fmt.Sprint(c.Sigma), "off"
			if c.Winsorize != 0 {
				winsor = fmt.Sprint(c.Winsorize)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%d\t%d\t%s\t%s\t%s\n", c.Kind, sigma, winsor, c.Lift, c.Runs,
			r.NotComputable, formatRate(r.Losses), formatRate(r.Wins), formatRate(r.Significant))
	}
	return tw.Flush()
}

func formatRate(r stats.Rate) string {
	return strings.TrimSpace(fmt.Sprintf("%.2f%% [%.2f%%, %.2f%%]", 100*r.Rate, 100*r.Interval.Lower, 100*r.Interval.Upper))
}
