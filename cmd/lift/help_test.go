package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestHelpIsShort runs every command's --help through cobra in this process:
// each page fits a terminal (under 40 lines), points at no design document
// the user does not have, and no flag, shown or hidden, has an underscore.
func TestHelpIsShort(t *testing.T) {
	for _, c := range liftCommands(rootCmd) {
		t.Run(c.CommandPath(), func(t *testing.T) {
			var buf bytes.Buffer
			c.SetOut(&buf)
			defer c.SetOut(nil)
			if err := c.Help(); err != nil {
				t.Fatal(err)
			}
			help := buf.String()
			if n := strings.Count(help, "\n"); n >= 40 {
				t.Errorf("%d lines of help, want under 40:\n%s", n, help)
			}
			if strings.Contains(help, "DESIGN") || strings.Contains(help, "§") {
				t.Errorf("help points at design sections:\n%s", help)
			}
			check := func(f *pflag.Flag) {
				if strings.Contains(f.Name, "_") {
					t.Errorf("flag --%s has an underscore", f.Name)
				}
			}
			c.Flags().VisitAll(check)
			c.InheritedFlags().VisitAll(check)
		})
	}
}

// TestVersion: both spellings print the same line, which names the Go
// release the binary was built with.
func TestVersion(t *testing.T) {
	var outs []string
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var buf bytes.Buffer
		rootCmd.SetOut(&buf)
		rootCmd.SetArgs(args)
		if err := rootCmd.Execute(); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, buf.String())
	}
	rootCmd.SetOut(nil)
	rootCmd.SetArgs(nil)
	if outs[0] != outs[1] || !strings.HasPrefix(outs[0], "lift ") || !strings.Contains(outs[0], "go1.") {
		t.Fatalf("version = %q, --version = %q; want the same lift … go1.x line", outs[0], outs[1])
	}
}
