package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "config",
		Short: "List every configuration key with its variable, flag, default and meaning",
		Long: "List every configuration key. Each is read, later winning, from its default, lift.yaml\n" +
			"(or --config), its LIFT_* environment variable, then its flag. Any command that reads the\n" +
			"configuration accepts every flag, though its --help shows only the common ones.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return printConfigKeys(cmd.OutOrStdout()) },
	})
}

// printConfigKeys writes the table of keys: one line of names and default,
// the help indented under it.
func printConfigKeys(w io.Writer) error {
	keys := config.Keys()
	var wk, we, wf int
	for _, k := range keys {
		wk, we, wf = max(wk, len(k[0])), max(we, len(config.EnvName(k[0]))), max(wf, len(config.FlagName(k[0]))+2)
	}
	fmt.Fprintf(w, "%-*s  %-*s  %-*s  %s\n", wk, "KEY", we, "ENVIRONMENT", wf, "FLAG", "DEFAULT")
	for _, k := range keys {
		fmt.Fprintf(w, "%-*s  %-*s  %-*s  %q\n", wk, k[0], we, config.EnvName(k[0]), wf, "--"+config.FlagName(k[0]), k[1])
		if _, err := fmt.Fprintf(w, "    %s\n", k[2]); err != nil {
			return err
		}
	}
	return nil
}
