package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Source lists the jobs due at now. Sources must be cheap: they run every
// Interval.
type Source func(ctx context.Context, now time.Time) ([]Job, error)

// Leader runs fn only while this process is the one scheduler leader, and
// reports whether it was. The store implements it with a Postgres advisory
// lock held for fn's duration, so a crashed leader frees it at once and the
// next tick elsewhere takes over.
type Leader interface {
	Lead(ctx context.Context, fn func(ctx context.Context) error) (bool, error)
}

// SchedulerConfig configures the scheduler loop; zero values take defaults.
type SchedulerConfig struct {
	Interval time.Duration    // between ticks; default 15 s
	Now      func() time.Time // the clock; default time.Now
	Logger   *slog.Logger
}

// Scheduler is the loop of DESIGN §7: each tick, the one process holding the
// Postgres advisory lock asks every Source what is due and enqueues it with
// the job's deterministic id. The schedule lives in Postgres, so a restart
// loses nothing and a second scheduler adds nothing.
type Scheduler struct {
	leader  Leader
	client  *Client
	sources []Source
	cfg     SchedulerConfig
}

// NewScheduler builds a scheduler over the given sources.
func NewScheduler(leader Leader, client *Client, cfg SchedulerConfig, sources ...Source) *Scheduler {
	if cfg.Interval <= 0 {
		cfg.Interval = 15 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Scheduler{leader: leader, client: client, sources: sources, cfg: cfg}
}

// TickResult says what one tick did.
type TickResult struct {
	Leader     bool // false: another scheduler held the lock, nothing was done
	Enqueued   int
	Duplicates int // due jobs already in hand
}

// Tick runs one pass. Tests call it directly with an injected clock.
func (s *Scheduler) Tick(ctx context.Context) (TickResult, error) {
	var res TickResult
	leader, err := s.leader.Lead(ctx, func(ctx context.Context) error {
		now := s.cfg.Now()
		for _, src := range s.sources {
			jobs, err := src(ctx, now)
			if err != nil {
				return err
			}
			for _, j := range jobs {
				switch err := s.client.Enqueue(ctx, j); {
				case errors.Is(err, ErrDuplicate):
					res.Duplicates++
				case err != nil:
					return err
				default:
					res.Enqueued++
				}
				if j.InHand != nil {
					j.InHand()
				}
			}
		}
		return nil
	})
	res.Leader = leader
	if err != nil {
		return res, fmt.Errorf("jobs.Scheduler.Tick: %w", err)
	}
	return res, nil
}

// Run ticks every Interval until ctx ends. A failed tick is logged and the
// next one tries again.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	var outage tickFailures
	for {
		_, err := s.Tick(ctx)
		if ctx.Err() == nil {
			outage.note(s.cfg.Logger, s.cfg.Now(), err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// tickFailures keeps a run of failed ticks to a line a minute: during a
// Postgres outage every tick fails alike (every 2 s in the ops audit, a line
// each), and the line that matters is the first, then the one saying the
// ticks work again.
type tickFailures struct {
	failed        int
	since, logged time.Time
}

func (f *tickFailures) note(log *slog.Logger, now time.Time, err error) {
	switch {
	case err != nil && (f.failed == 0 || now.Sub(f.logged) >= time.Minute):
		if f.failed == 0 {
			f.since = now
		}
		f.failed++
		f.logged = now
		log.Error("scheduler tick failed", "err", err, "failed_ticks", f.failed, "failing_for", now.Sub(f.since).Round(time.Second))
	case err != nil:
		f.failed++
	case f.failed > 0:
		log.Info("scheduler ticks again", "failed_ticks", f.failed, "failed_for", now.Sub(f.since).Round(time.Second))
		*f = tickFailures{}
	}
}
