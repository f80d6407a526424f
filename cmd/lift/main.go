// Command lift is the one binary of Lift: the servers, the worker, the local
// development stack and the operator tools are its subcommands.
package main

import (
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
		fmt.Fprintln(os.Stderr, "lift:", err)
		os.Exit(1)
	}
}
