package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/liftab/lift/stats"
)

// printReportCUPED prints the suite's CUPED rows: A/A false positives with
// CUPED per direction, and power at the planted lift with and without it
// beside normal theory, the CUPED one with the variance reduced by 1 − ρ².
func printReportCUPED(out io.Writer, cfg stats.ReportConfig, r stats.CUPEDReport) {
	rho := r.Correlation
	alpha := 1 - cfg.Level
	fmt.Fprintf(out, "\nCUPED: revenue per visitor (σ = %d, raw) with each visitor's revenue before the test correlated ρ = %g with its revenue in it;\n",
		stats.CUPEDSigma, rho)
	fmt.Fprintf(out, "every test analysed with CUPED and without on the same draws (%d tests a row, %d visitors a group)\n\n", r.AA.Config.Runs, cfg.Visitors)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "A/A\tnot computable\tlosses\twins\tfalse positives\ttarget")
	p := r.AA.WithoutCUPED
	fmt.Fprintf(tw, "with CUPED\t%d\t%s\t%s\t%s\t%s\n", r.AA.NotComputable, withSE(r.AA.Losses), withSE(r.AA.Wins),
		withSE(r.AA.Significant), aaVerdict(r.AA))
	plain := r.AA
	plain.NotComputable, plain.Losses, plain.Wins, plain.Significant = p.NotComputable, p.Losses, p.Wins, p.Significant
	plain.WithoutCUPED = nil
	fmt.Fprintf(tw, "without\t%d\t%s\t%s\t%s\t%s\n", p.NotComputable, withSE(p.Losses), withSE(p.Wins), withSE(p.Significant),
		aaVerdict(plain))
	tw.Flush()
	fmt.Fprintf(out, "(nominal %s overall, %s each direction)\n", percent(alpha), percent(alpha/2))

	c := r.Power.Config
	fmt.Fprintf(out, "\nPower at +%.4g%% revenue per visitor, fixed horizon; theory: the difference's variance × (1 − ρ²) = × %.4g under CUPED\n\n",
		100*c.Lift, 1-rho*rho)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "analysis\tsimulated power\tnormal theory\tdifference\ttarget")
	okAdj, okPlain := r.PowerWithinTarget()
	fmt.Fprintf(tw, "with CUPED\t%s\t%s\t%+.2f pts\t±%.0f pts: %s\n", withSE(r.Power.Significant), percent(r.NormalPowerCUPED),
		100*(r.Power.Significant.Rate-r.NormalPowerCUPED), 100*stats.TargetPowerTolerance, verdictWord(okAdj))
	pp := r.Power.WithoutCUPED.Significant
	fmt.Fprintf(tw, "without\t%s\t%s\t%+.2f pts\t±%.0f pts: %s\n", withSE(pp), percent(r.NormalPower),
		100*(pp.Rate-r.NormalPower), 100*stats.TargetPowerTolerance, verdictWord(okPlain))
	tw.Flush()
	fmt.Fprintf(out, "(CUPED's interval is √(1 − ρ²) = %.3f of the unadjusted one's: the same power from %.0f%% of the visitors)\n",
		math.Sqrt(1-rho*rho), 100*(1-rho*rho))
}
