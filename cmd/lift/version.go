package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() {
	rootCmd.Version = version()
	rootCmd.SetVersionTemplate("lift {{.Version}}\n")
	rootCmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the module version and Go release; a make build binary adds revision, commit and build time",
		Args:  cobra.NoArgs,
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "lift", version()) },
	})
}

// buildTime is when the binary was built, set by the linker:
// go build -ldflags "-X main.buildTime=$(date -u +%Y-%m-%dT%H:%M:%SZ)". The
// toolchain records only the commit's time, which is not the build's.
var buildTime string

// version describes this binary from what the Go toolchain stamped into it:
// the module version ("(devel)" for a build from a work tree), the VCS
// revision and commit time, and whether the tree had uncommitted changes.
// A build with -buildvcs=false (as in tests) has no revision to show.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (" + runtime.Version() + ")"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := v
	if rev != "" {
		out += " " + rev + dirty
	}
	if at != "" {
		out += " committed " + at
	}
	if buildTime != "" {
		out += " built " + buildTime
	}
	return out + " " + runtime.Version()
}
