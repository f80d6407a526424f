package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/liftab/lift/stats"
)

// execStats runs a fresh `stats` command on stdin, as the shell would.
func execStats(t *testing.T, stdin string) (string, error) {
	t.Helper()
	cmd := newStatsCmd()
	var out bytes.Buffer
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{}) // not the test binary's own flags
	err := cmd.Execute()
	return out.String(), err
}

func TestStatsCommandIsRegistered(t *testing.T) {
	t.Parallel()
	cmd, _, err := rootCmd.Find([]string{"stats"})
	if err != nil || cmd.Name() != "stats" {
		t.Fatalf("rootCmd.Find(stats) = %v, %v", cmd, err)
	}
}

func TestStatsCommand(t *testing.T) {
	t.Parallel()
	// Reference case 3 is gbstats', defined by the delta method on the ratio.
	out, err := execStats(t, `{"metric_kind":"proportion","groups":[{"n":100,"sum":49},{"n":100,"sum":51}],"splits":[50,50],"options":{"relative_method":"delta"}}`)
	if err != nil {
		t.Fatalf("lift stats: %v\n%s", err, out)
	}
	var got stats.Analysis
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not an analysis: %v\n%s", err, out)
	}
	c := got.Comparisons[0]
	// DESIGN §8 reference case 3: lift 0.04082, chance 0.60918.
	want := []float64{0.04082, 0.60918}
	if diff := cmp.Diff(want, []float64{*c.Lift, c.Bayesian.ProbBeatControl}, cmpopts.EquateApprox(0, 5e-6)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, "\n  \"comparisons\": [") {
		t.Errorf("output is not indented JSON:\n%s", out)
	}
}

func TestStatsCommandRejectsBadRequests(t *testing.T) {
	t.Parallel()
	for stdin, want := range map[string]string{
		``: "EOF",
		`{"metric_kind":"proportion","groups":[{"n":10,"sums":3}]}`:                  `unknown field "sums"`,
		`{"metric_kind":"proportion","groups":[{"n":10,"sum":30},{"n":10,"sum":3}]}`: "groups[0]: sum 30 is not a count",
	} {
		_, err := execStats(t, stdin)
		if !errors.Is(err, stats.ErrInvalidRequest) || !strings.Contains(err.Error(), want) {
			t.Errorf("stdin %q: err = %v, want invalid request mentioning %q", stdin, err, want)
		}
	}
}

// execStatsArgs runs a fresh `stats` command with arguments.
func execStatsArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newStatsCmd()
	var out bytes.Buffer
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestStatsSimulate(t *testing.T) {
	t.Parallel()
	args := []string{"simulate", "--kind", "proportion", "--runs", "300", "--visitors", "2000",
		"--conversion", "0.05", "--seed", "9"}
	out, err := execStatsArgs(t, append(args, "--json")...)
	if err != nil {
		t.Fatalf("lift stats simulate: %v\n%s", err, out)
	}
	var got []stats.SimulationResult
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not simulation results: %v\n%s", err, out)
	}
	want, err := stats.Simulate(stats.SimulationConfig{Kind: stats.KindProportion, Runs: 300, Visitors: 2000,
		Conversion: 0.05, Seed: 9, Winsorize: stats.DefaultWinsorPercentile, Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]stats.SimulationResult{want}, got); diff != "" {
		t.Errorf("the flags did not reach the simulation (-want +got):\n%s", diff)
	}
	table, err := execStatsArgs(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	wins := fmt.Sprintf("%.2f%% [%.2f%%, %.2f%%]", 100*want.Wins.Rate, 100*want.Wins.Interval.Lower, 100*want.Wins.Interval.Upper)
	if !strings.HasPrefix(table, "kind ") || !strings.Contains(table, "\nproportion ") || !strings.Contains(table, wins) {
		t.Errorf("table lacks the proportion row with wins %s:\n%s", wins, table)
	}
	// --cuped-rho with --kind mean: each test with and without CUPED.
	cuped, err := execStatsArgs(t, "simulate", "--kind", "mean", "--runs", "50", "--visitors", "1000", "--conversion", "0.05",
		"--cuped-rho", "0.6", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var withCUPED []stats.SimulationResult
	if err := json.Unmarshal([]byte(cuped), &withCUPED); err != nil || len(withCUPED) != 1 ||
		withCUPED[0].Config.CUPEDCorrelation != 0.6 || withCUPED[0].WithoutCUPED == nil {
		t.Errorf("--cuped-rho 0.6: %v\n%s", err, cuped)
	}
	if _, err := execStatsArgs(t, "simulate", "--kind", "count"); !errors.Is(err, stats.ErrInvalidRequest) {
		t.Errorf("--kind count: err = %v, want invalid request", err)
	}
}

// TestStatsSimulateFlags: flags that would be silently ignored or read as
// something else are refused, an error is said once, and a tiny test in
// which nobody buys counts as not computable instead of failing the run
// (stats audit S12).
func TestStatsSimulateFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "mean", "--level", "0"}, "--level 0 is not strictly between 0 and 1"},
		{[]string{"--kind", "proportion", "--cuped-rho", "0.5"}, "--cuped-rho is simulated on revenue"},
		{[]string{"--kind", "mean", "--method", "foo", "--workers", "4"}, `relative_method "foo" is not fieller or delta`},
	} {
		_, err := execStatsArgs(t, append([]string{"simulate", "--runs", "8", "--visitors", "100"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %q, want one line with %q", c.args, err, c.want)
		}
	}
	out, err := execStatsArgs(t, "simulate", "--kind", "ratio", "--runs", "20", "--visitors", "2", "--json")
	var got []stats.SimulationResult
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 || got[0].NotComputable != 20 {
		t.Errorf("20 tests of 2 visitors: %v\n%s, want all 20 not computable", err, out)
	}
}

func TestStatsSimulateSuite(t *testing.T) {
	t.Parallel()
	args := []string{"simulate", "--runs", "30", "--visitors", "1000", "--conversion", "0.1", "--days", "5", "--seed", "3"}
	out, err := execStatsArgs(t, append(args, "--json")...)
	if err != nil {
		t.Fatalf("lift stats simulate: %v\n%s", err, out)
	}
	var got stats.Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not a report: %v\n%s", err, out)
	}
	want, err := stats.SimulateReport(stats.ReportConfig{Visitors: 1000, Runs: 30, Conversion: 0.1, Days: 5,
		PowerLift: 0.1, Method: stats.RelativeFieller, Level: 0.95, CUPEDCorrelation: 0.7, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the flags did not reach the suite (-want +got):\n%s", diff)
	}
	table, err := execStatsArgs(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"conversion           -  -",
		"revenue per visitor  2  0.99",
		"average order value  2  off",
		"fixed-horizon Welch                    daily          " + withSE(want.Peeking.FixedPeeked),
		"always-valid sequential (tuning 2000)  daily          " + withSE(want.Peeking.SequentialPeeked),
		withSE(want.Power.Significant) + "  " + percent(want.NormalPower),
		"with CUPED " + fmt.Sprint(want.CUPED.AA.NotComputable) + " " + withSE(want.CUPED.AA.Losses) + " " + withSE(want.CUPED.AA.Wins),
		"with CUPED " + withSE(want.CUPED.Power.Significant) + " " + percent(want.CUPED.NormalPowerCUPED),
		"without " + withSE(want.CUPED.Power.WithoutCUPED.Significant) + " " + percent(want.CUPED.NormalPower),
	} {
		// Column widths depend on the numbers: compare words.
		if !strings.Contains(strings.Join(strings.Fields(table), " "), strings.Join(strings.Fields(line), " ")) {
			t.Errorf("table lacks %q:\n%s", line, table)
		}
	}
}

func TestStatsCase(t *testing.T) {
	t.Parallel()
	for _, c := range stats.ReferenceCases() {
		out, err := execStatsArgs(t, "--case", c.Name)
		if err != nil {
			t.Errorf("lift stats --case %s: %v\n%s", c.Name, err, out)
			continue
		}
		if strings.Contains(out, " NO\n") || strings.Count(out, " yes\n") != len(c.Want) || !strings.Contains(out, c.Source) {
			t.Errorf("lift stats --case %s:\n%s", c.Name, out)
		}
	}
	// The printed request is what lift stats reads: piped back, it gives
	// the published lift.
	out, err := execStatsArgs(t, "--case", "posthog-ratio-relative")
	if err != nil {
		t.Fatal(err)
	}
	_, req, _ := strings.Cut(out, "request: ")
	req, _, _ = strings.Cut(req, "\n")
	analysis, err := execStats(t, req)
	if err != nil {
		t.Fatalf("piped request: %v", err)
	}
	var got stats.Analysis
	if err := json.Unmarshal([]byte(analysis), &got); err != nil || got.Comparisons[0].Lift == nil {
		t.Fatalf("piped request: %v\n%s", err, analysis)
	}
	if lift := *got.Comparisons[0].Lift; lift < 0.0413325 || lift > 0.0413335 {
		t.Errorf("piped request: lift %v, published 0.041333", lift)
	}
	list, err := execStatsArgs(t, "--case", "list")
	if err != nil || strings.Count(list, "\n") != len(stats.ReferenceCases()) {
		t.Errorf("--case list: %v\n%s", err, list)
	}
	if _, err := execStatsArgs(t, "--case", "nonesuch"); !errors.Is(err, stats.ErrInvalidRequest) {
		t.Errorf("--case nonesuch: err = %v", err)
	}
}
