package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/stats"
)

func init() { rootCmd.AddCommand(newStatsCmd()) }

// newStatsCmd is `lift stats`: the statistics engine as a filter, so an
// analysis can be checked or reproduced without the service. The request and
// response schema are documented in stats/README.md.
func newStatsCmd() *cobra.Command {
	return &cobra.Command{
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
