package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command says which arguments it takes: cobra's default let a leaf
// run with stray ones and a group print its help and exit 0 for any (ops
// audit O2-7).
func TestEveryCommandDeclaresItsArgs(t *testing.T) {
	for _, c := range liftCommands(rootCmd) {
		if c.HasParent() && c.Args == nil {
			t.Errorf("%s declares no Args", c.CommandPath())
		}
	}
}

// liftCommands is c and every command below it, without cobra's own help
// and completion (added once a test has run Execute).
func liftCommands(c *cobra.Command) []*cobra.Command {
	if c.Name() == "help" || c.Name() == "completion" {
		return nil
	}
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, liftCommands(sub)...)
	}
	return out
}

// A stray argument or an unknown subcommand fails (main exits 1) before
// anything runs, naming the word; a group called bare still prints its
// help. Not parallel: it drives the shared rootCmd.
func TestStrayArgumentsAreRefused(t *testing.T) {
	defer rootCmd.SetArgs(nil)
	defer rootCmd.SetOut(nil)
	defer rootCmd.SetErr(nil)
	defer func() {
		if w, _, err := rootCmd.Find([]string{"worker"}); err == nil {
			w.Flags().Set("scheduler-interval", "15s")
		}
	}()
	for _, c := range []struct {
		args string
		want string // "" : succeeds
	}{
		{"serve ingest", `unknown command "ingest" for "lift serve"; the role is a flag: --role ingest`},
		{"worker extra", `unknown command "extra" for "lift worker"`},
		{"migrate extra", `unknown command "extra" for "lift migrate"`},
		{"dev extra", `unknown command "extra" for "lift dev"`},
		{"stack dwon", `unknown command "dwon" for "lift stack"`},
		{"stack down dwon", `invalid argument "dwon" for "lift stack down"`},
		{"shops x", `unknown command "x" for "lift shops"`},
		{"tokens x", `unknown command "x" for "lift tokens"`},
		{"webhooks replay-all", `unknown command "replay-all" for "lift webhooks"`},
		{"bench x", `unknown command "x" for "lift bench"`},
		{"bench ingest x", `unknown command "x" for "lift bench ingest"`},
		{"stats simulat", `unknown command "simulat" for "lift stats"`},
		{"stack", ""},
		{"webhooks", ""},
		// The scheduler would quietly run every 15 s instead.
		{"worker --scheduler-interval 0s", "worker: --scheduler-interval must be positive, not 0s"},
		{"worker --scheduler-interval -1s", "worker: --scheduler-interval must be positive, not -1s"},
	} {
		t.Run(c.args, func(t *testing.T) {
			var out bytes.Buffer
			rootCmd.SetOut(&out)
			rootCmd.SetErr(&out)
			rootCmd.SetArgs(strings.Fields(c.args))
			err := rootCmd.Execute()
			switch {
			case c.want == "" && (err != nil || !strings.Contains(out.String(), "Available Commands")):
				t.Errorf("lift %s = %v, want its help:\n%s", c.args, err, out.String())
			case c.want != "" && (err == nil || err.Error() != c.want):
				t.Errorf("lift %s = %v, want %s", c.args, err, c.want)
			}
		})
	}
}
