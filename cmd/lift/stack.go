package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/devstack"
)

func init() { rootCmd.AddCommand(newStackCmd()) }

// newStackCmd manages the local Postgres, Redis and ClickHouse by hand; `make
// test` and `make stop` use it, `lift dev` does the same on its own.
func newStackCmd() *cobra.Command {
	cmd := commandGroup("stack", "Start (up) or stop (down) the local Postgres, Redis and ClickHouse under .lift/")
	var startedFile string
	var browser bool
	up := &cobra.Command{
		Use:   "up",
		Args:  cobra.NoArgs,
		Short: "Install what is missing and start the local services that are not running",
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := stackOptions(cmd, false)
			o.Browser = browser
			st, err := devstack.Up(cmd.Context(), o)
			if err != nil {
				return err
			}
			if startedFile != "" {
				if err := os.WriteFile(startedFile, []byte(strings.Join(st.Started, "\n")), 0o644); err != nil {
					return err
				}
			}
			fmt.Printf("LIFT_POSTGRES_URL=%s\nLIFT_REDIS_ADDR=%s\nLIFT_CLICKHOUSE_ADDR=%s\n", st.PostgresURL, st.RedisAddr, st.ClickHouseAddr)
			return nil
		},
	}
	up.Flags().StringVar(&startedFile, "started-file", "", "write the names of the services this call started to this file")
	up.Flags().BoolVar(&browser, "browser", false, "also install Debian's chromium for the browser tests (make test)")
	down := &cobra.Command{
		Use: "down [postgres|redis|clickhouse ...]",
		// A misspelled service matched none and stopped nothing, exit 0.
		Args:      cobra.OnlyValidArgs,
		ValidArgs: []string{"postgres", "redis", "clickhouse"},
		Short:     "Stop the local services (all, the named ones, or those listed in --started-file)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if startedFile != "" {
				b, err := os.ReadFile(startedFile)
				if err != nil {
					return nil // nothing recorded, nothing to stop
				}
				args = strings.Fields(string(b))
				if len(args) == 0 {
					return nil
				}
			}
			return devstack.Down(cmd.Context(), stackOptions(cmd, false), args...)
		},
	}
	down.Flags().StringVar(&startedFile, "started-file", "", "stop only the services named in this file")
	cmd.AddCommand(up, down)
	return cmd
}

// stackOptions builds devstack options from the environment: a LIFT_*
// address that is set means that server is given, not started.
func stackOptions(cmd *cobra.Command, persist bool) devstack.Options {
	root, err := devstack.FindRoot(".")
	if err != nil {
		root = "."
	}
	return devstack.Options{
		Root:           root,
		Log:            cmd.ErrOrStderr(),
		Persist:        persist,
		PostgresURL:    os.Getenv("LIFT_POSTGRES_URL"),
		RedisAddr:      os.Getenv("LIFT_REDIS_ADDR"),
		ClickHouseAddr: os.Getenv("LIFT_CLICKHOUSE_ADDR"),
	}
}
