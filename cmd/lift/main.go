// Command lift is the one binary of Lift: the servers, the worker, the local
// development stack and the operator tools are its subcommands.
package main

import (
	"errors"
	"fmt"
	"os"

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

func main() {
	if err := rootCmd.Execute(); err != nil {
		var l loggedError
		if !errors.As(err, &l) {
			fmt.Fprintln(os.Stderr, "lift:", err)
		}
		os.Exit(1)
	}
}

// loggedError is an error a server process already wrote as its last log
// record: main exits 1 without a plain-text line, which a JSON log
// pipeline would choke on (the ops audit).
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }
