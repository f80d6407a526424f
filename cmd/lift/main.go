// Command lift is the one binary of Lift: the servers, the worker, the local
// development stack and the operator tools are its subcommands.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/spf13/cobra"
)

// rootCmd is the top of the command tree. Each subcommand lives in its own file
// and attaches itself in an init function, so commands can be added without
// touching this file.
var rootCmd = &cobra.Command{
	Use:           "lift",
	Short:         "Lift runs A/B tests for online stores",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// Gin's debug mode prints a banner and one line per route to the standard
// streams, which are not JSON: every command that builds a gin engine (the
// servers, the worker's metrics and probes, lift dev's fake platform) runs
// in release mode, not only serve (ops audit O2-10: the worker's stderr
// began with [GIN-debug] lines).
func init() { gin.SetMode(gin.ReleaseMode) }

func main() {
	if err := rootCmd.Execute(); err != nil {
		var l loggedError
		if !errors.As(err, &l) {
			fmt.Fprintln(os.Stderr, "lift:", err)
		}
		os.Exit(1)
	}
}

// commandGroup is a command that only holds subcommands. Bare, it prints
// its help; with an argument that names none of them it fails. Cobra's
// own behaviour for such a command is to print the help and exit 0 for
// any argument, so `lift stack dwon` or `lift webhooks replay-all` in a
// script reported success (ops audit O2-7).
func commandGroup(use, short string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return errors.New(msg)
		}}
}

// loggedError is an error a server process already wrote as its last log
// record: main exits 1 without a plain-text line, which a JSON log
// pipeline would choke on (the ops audit).
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }
