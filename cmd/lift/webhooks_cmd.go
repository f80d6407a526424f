package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
)

func init() { rootCmd.AddCommand(newWebhooksCmd()) }

// newWebhooksCmd is the operator's view of inbound deliveries the worker
// gave up on (docs/webhooks-exports.md): list them, and once their cause is
// mended, replay them through experiment.WebhookService.Replay.
func newWebhooksCmd() *cobra.Command {
	cmd := commandGroup("webhooks", "List and replay dead-lettered inbound webhook deliveries")
	var shop string
	list := &cobra.Command{
		Use:   "dead-letters --shop DOMAIN",
		Short: "List the shop's dead-lettered deliveries, oldest first, with their state (dead, or replaying until processed), tries and last error",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				s, err := a.DB.FindShopByDomain(ctx, shop)
				if err != nil {
					return err
				}
				letters, err := a.webhookService().DeadLetters(ctx, s.ID)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "DELIVERY\tTOPIC\tSTATE\tTRIES\tAT\tLAST ERROR")
				for _, l := range letters {
					state := "dead"
					if l.Reopened {
						state = "replaying" // reopened; gone once processed
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", l.DeliveryID, l.Topic, state, l.Tries, l.At.UTC().Format("2006-01-02T15:04:05Z"), oneLine(l.LastError, 120))
				}
				if err := w.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%d dead-lettered deliveries for %s\n", len(letters), s.Domain)
				return nil
			})
		},
	}
	var all bool
	replay := &cobra.Command{
		Use:   "replay --shop DOMAIN (DELIVERY_ID... | --all)",
		Args:  cobra.ArbitraryArgs, // the delivery ids, checked against --all below
		Short: "Queue dead-lettered deliveries for processing again, with fresh tries (mend their cause first)",
		RunE: func(cmd *cobra.Command, ids []string) error {
			if all == (len(ids) > 0) {
				return errors.New("name the deliveries to replay, or pass --all (not both)")
			}
			return withApp(cmd, "cli", func(ctx context.Context, a *App) error {
				s, err := a.DB.FindShopByDomain(ctx, shop)
				if err != nil {
					return err
				}
				svc := a.webhookService()
				if all {
					letters, err := svc.DeadLetters(ctx, s.ID)
					if err != nil {
						return err
					}
					for _, l := range letters {
						ids = append(ids, l.DeliveryID)
					}
				}
				var failed []error
				for _, id := range ids {
					if err := svc.Replay(ctx, s.ID, id); err != nil {
						failed = append(failed, err)
						continue
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s queued\n", id)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%d of %d deliveries queued for %s\n", len(ids)-len(failed), len(ids), s.Domain)
				return errors.Join(failed...)
			})
		},
	}
	replay.Flags().BoolVar(&all, "all", false, "replay every dead-lettered delivery of the shop")
	cmd.AddCommand(list, replay)
	for _, c := range cmd.Commands() {
		c.Flags().StringVar(&shop, "shop", "", "shop domain (required)")
		c.MarkFlagRequired("shop")
		config.BindFlags(c.Flags())
	}
	return cmd
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
