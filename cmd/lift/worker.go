package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/jobs"
)

func init() { rootCmd.AddCommand(newWorkerCmd()) }

// jobKinds are the background work this binary runs. Each registers its task
// handlers on the worker and returns the scheduler sources that find its due
// work; a new kind of job appends itself here from its own file's init.
var jobKinds = []func(a *App, w *jobs.Worker) []jobs.Source{lifecycleJobs}

// lifecycleJobs: scheduled starts and ends, and the launch checks of new
// theme and template tests. They run the tests' one service, so a scheduled
// start checks exactly what POST /v1/experiments/{id}/start does.
func lifecycleJobs(a *App, w *jobs.Worker) []jobs.Source {
	svc := a.experiments()
	jobs.HandleScheduled(w, svc)
	jobs.HandleChecks(w, svc)
	return []jobs.Source{jobs.ScheduleSource(a.DB.FindDueActions, 500)}
}

func newWorkerCmd() *cobra.Command {
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "worker",
		Args:  cobra.NoArgs,
		Short: "Run background jobs (asynq on Redis) and the scheduler loop",
		Long: "Run the asynq worker (queues critical, default, low) and the scheduler loop that starts and ends\n" +
			"tests at their schedule and queues the periodic jobs (results snapshots and rollups, housekeeping,\n" +
			"the daily catalog refresh). Run as many workers as you like: one scheduler leads at a time (Postgres\n" +
			"advisory lock) and every due job has a deterministic id, so nothing runs twice.\n\n" + configHelp(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval <= 0 {
				// The scheduler would run every 15 s instead, unsaid.
				return fmt.Errorf("worker: --scheduler-interval must be positive, not %s", interval)
			}
			return withServer(cmd, "worker", openApp, func(ctx context.Context, a *App) error {
				if err := a.requireMigrated(ctx); err != nil {
					return err
				}
				if err := a.requireTokenKey(ctx); err != nil {
					return err
				}
				stopWorker, err := a.startWorker(ctx, interval)
				if err != nil {
					return err
				}
				if addr := a.Config.Worker.MetricsAddr; addr != "" {
					if _, err := a.serveWorkerMetrics(ctx, addr); err != nil {
						stopWorker()
						return err
					}
				}
				a.Log.Info("worker running", "redis", a.Config.Redis.Addr, "scheduler_interval", interval)
				<-ctx.Done()
				stopWorker()
				return nil
			})
		},
	}
	config.BindFlags(cmd.Flags(), "worker.metrics_addr", "log.format", "log.level")
	cmd.Flags().DurationVar(&interval, "scheduler-interval", 15*time.Second, "how often the scheduler looks for due work")
	return cmd
}

// startWorker starts the asynq worker and the scheduler loop in the
// background; the returned stop ends the loop and waits for running tasks.
// `lift dev` calls it to run the worker inside its one process.
func (a *App) startWorker(ctx context.Context, interval time.Duration) (stop func(), err error) {
	if err := a.requireSigningSecret(); err != nil {
		return nil, err
	}
	w := jobs.NewWorker(jobs.Redis{Addr: a.Config.Redis.Addr, DB: a.Config.Redis.DB}, jobs.WorkerConfig{Logger: a.Log, Observe: a.metrics().ObserveJob})
	a.watchQueues()
	a.metrics().WatchDeadLetters(a.DB.CountDeadLetters)
	var sources []jobs.Source
	for _, kind := range jobKinds {
		sources = append(sources, kind(a, w)...)
	}
	if err := w.Start(); err != nil {
		return nil, err
	}
	s := jobs.NewScheduler(a.DB, a.Jobs, jobs.SchedulerConfig{Interval: interval, Now: a.Now, Logger: a.Log}, sources...)
	loopCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(loopCtx)
	}()
	return func() {
		cancel()
		<-done
		w.Shutdown()
	}, nil
}
