// Package jobs runs Lift's background work on asynq (Redis): the queues, the
// worker that executes tasks, and the scheduler loop of DESIGN §7 that finds
// due work in Postgres and enqueues it under deterministic task ids.
//
// Adding a task type takes three steps: a type name and payload struct, a
// handler registered on the Worker with Handle, and (for periodic work) a
// Source given to the Scheduler that lists what is due. schedule.go is the
// worked example: scheduled starts and ends of tests.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/experiment"
)

// Queues of DESIGN §7, with their weights: critical (webhooks, lifecycle
// side effects), default (snapshots, result queries), low (exports).
const (
	QueueCritical = "critical"
	QueueDefault  = "default"
	QueueLow      = "low"
)

// Queues maps each queue to its priority weight for the worker.
var Queues = map[string]int{QueueCritical: 6, QueueDefault: 3, QueueLow: 1}

// Redis names the Redis database asynq uses.
type Redis struct {
	Addr string
	DB   int
}

func (r Redis) opt() asynq.RedisClientOpt { return asynq.RedisClientOpt{Addr: r.Addr, DB: r.DB} }

// Job is one task to enqueue: ID makes it unique, so a second scheduler, a
// restart or a retried tick never runs the same work twice.
type Job struct {
	Type    string
	Payload any
	ID      string
	Queue   string
	Timeout time.Duration // bounds how long a crashed worker orphans it
	// Retention is how long the finished task is kept, so its id keeps
	// refusing duplicates; default a day. A job whose id names a short
	// slot needs it only for the slot.
	Retention time.Duration
	// InHand, when set, is called by the scheduler once the job is queued
	// or found already in hand (slotSource counts on it).
	InHand func()
}

// Client enqueues jobs. The API uses it (enqueue only) and the scheduler too.
type Client struct{ c *asynq.Client }

// NewClient connects to Redis lazily; Close releases it.
func NewClient(r Redis) *Client { return &Client{c: asynq.NewClient(r.opt())} }

// Close releases the connection.
func (c *Client) Close() error { return c.c.Close() }

// ErrDuplicate reports that a job with the same ID is already queued, running
// or retained as done: the work is in hand and nothing was added.
var ErrDuplicate = errors.New("jobs: duplicate job id")

// Enqueue adds j. It answers ErrDuplicate when the id is taken.
func (c *Client) Enqueue(ctx context.Context, j Job) error {
	payload, err := json.Marshal(j.Payload)
	if err != nil {
		return fmt.Errorf("jobs.Enqueue %s: %w", j.Type, err)
	}
	queue := j.Queue
	if queue == "" {
		queue = QueueDefault
	}
	timeout := j.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	retention := j.Retention
	if retention == 0 {
		retention = 24 * time.Hour
	}
	opts := []asynq.Option{asynq.Queue(queue), asynq.Timeout(timeout), asynq.MaxRetry(5), asynq.Retention(retention)}
	if j.ID != "" {
		opts = append(opts, asynq.TaskID(j.ID))
	}
	_, err = c.c.EnqueueContext(ctx, asynq.NewTask(j.Type, payload), opts...)
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict), errors.Is(err, asynq.ErrDuplicateTask):
		return ErrDuplicate
	case err != nil:
		return fmt.Errorf("jobs.Enqueue %s: %w", j.Type, err)
	}
	return nil
}

// logFailure logs every failed run of a task with its error: asynq keeps
// the error only in Redis, so an operator saw nothing but a failed count in
// the metrics (the ops audit). A run that will be retried is a warning; the
// last one, after which the task is archived, an error. During an outage
// every task's uncounted retries fail alike, so those lines are held back
// per task type (holdBack).
func logFailure(log *slog.Logger) asynq.ErrorHandler {
	outage := newHoldBack()
	return asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		id, _ := asynq.GetTaskID(ctx)
		level, msg := slog.LevelWarn, "job failed; it will be retried"
		attrs := []any{"type", t.Type(), "task_id", id, "retry", retried, "max_retry", maxRetry, "err", err}
		switch {
		case retried >= maxRetry:
			level, msg = slog.LevelError, "job failed for the last time; archived"
		case experiment.Unreachable(err):
			msg = "job failed: a dependency is unreachable; it will be retried without spending a try"
			repeated, ok := outage.pass(t.Type())
			if !ok {
				return
			}
			if repeated > 0 {
				attrs = append(attrs, "repeated", repeated)
			}
		}
		log.Log(ctx, level, msg, attrs...)
	})
}

// Worker executes tasks from every queue.
type Worker struct {
	srv *asynq.Server
	mux *asynq.ServeMux
}

// WorkerConfig tunes the worker; zero values take defaults.
type WorkerConfig struct {
	Concurrency int // default 10
	Logger      *slog.Logger
	// Observe, when set, is told of every task run: its type, how long it
	// ran and its error (metrics.Metrics' ObserveJob is one).
	Observe func(taskType string, took time.Duration, err error)
	// RetryDelay, when set, is the wait before the retry of a task that
	// failed after `retried` counted failures; by default asynq's backoff
	// (retried⁴ + 15 s + up to 30 s × (retried + 1) of jitter).
	RetryDelay func(retried int) time.Duration
	// DueCheck is how often retries and scheduled tasks that are due are
	// moved to their queue; default 5 s.
	DueCheck time.Duration
}

func (cfg WorkerConfig) retryDelay() asynq.RetryDelayFunc {
	if cfg.RetryDelay == nil {
		return asynq.DefaultRetryDelayFunc
	}
	return func(n int, _ error, _ *asynq.Task) time.Duration { return cfg.RetryDelay(n) }
}

// NewWorker prepares a worker; register handlers with Handle, then Start.
func NewWorker(r Redis, cfg WorkerConfig) *Worker {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	srv := asynq.NewServer(r.opt(), asynq.Config{
		Concurrency:  cfg.Concurrency,
		Queues:       Queues,
		Logger:       newAsynqLogger(cfg.Logger),
		LogLevel:     asynq.WarnLevel,
		ErrorHandler: logFailure(cfg.Logger),
		// A dependency that refuses connections (Postgres or ClickHouse
		// down, restarting) is no fault of the task: its run is retried
		// without spending one of its tries, so an outage longer than the
		// tries' backoff no longer archives every task it catches, or
		// dead-letters every webhook delivery: asynq's default delay before
		// retry n+1 is n⁴ + 15 s + 0–29 s × (n+1), so a webhook delivery's
		// five tries (experiment.DefaultWebhookMaxTries) take about 5
		// minutes, at most about 7½, and another task's six runs (MaxRetry
		// 5) about 11, at most about 14½. Timeouts and
		// resets still count (experiment.Unreachable), so a task that is
		// itself the cause cannot loop for ever; one on its last try is
		// archived whatever its error (asynq checks that first).
		IsFailure:                func(err error) bool { return !experiment.Unreachable(err) },
		RetryDelayFunc:           cfg.retryDelay(),
		DelayedTaskCheckInterval: cfg.DueCheck,
	})
	mux := asynq.NewServeMux()
	if cfg.Observe != nil {
		mux.Use(func(next asynq.Handler) asynq.Handler {
			return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
				start := time.Now()
				err := next.ProcessTask(ctx, t)
				cfg.Observe(t.Type(), time.Since(start), err)
				return err
			})
		})
	}
	return &Worker{srv: srv, mux: mux}
}

// Inspector reads the queues' depths for metrics.
type Inspector struct{ in *asynq.Inspector }

// NewInspector connects to Redis lazily; Close releases it.
func NewInspector(r Redis) *Inspector { return &Inspector{in: asynq.NewInspector(r.opt())} }

// Close releases the connection.
func (i *Inspector) Close() error { return i.in.Close() }

// Depths reports, for each of Lift's queues, its tasks by state. A queue
// nothing was ever enqueued on does not exist in Redis yet and reads as
// empty.
func (i *Inspector) Depths() (map[string]map[string]int, error) {
	known, err := i.in.Queues()
	if err != nil {
		return nil, fmt.Errorf("jobs: queues: %w", err)
	}
	out := make(map[string]map[string]int, len(Queues))
	for q := range Queues {
		if !slices.Contains(known, q) {
			out[q] = map[string]int{"pending": 0, "active": 0, "scheduled": 0, "retry": 0, "archived": 0}
			continue
		}
		info, err := i.in.GetQueueInfo(q)
		if err != nil {
			return nil, fmt.Errorf("jobs: queue %s: %w", q, err)
		}
		out[q] = map[string]int{"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled,
			"retry": info.Retry, "archived": info.Archived}
	}
	return out, nil
}

// Handle registers the handler of a task type. The payload is decoded into a
// fresh P; an error retries the task, a decode error does not.
func Handle[P any](w *Worker, typ string, h func(ctx context.Context, p P) error) {
	w.mux.HandleFunc(typ, func(ctx context.Context, t *asynq.Task) error {
		var p P
		if err := json.Unmarshal(t.Payload(), &p); err != nil {
			return fmt.Errorf("%s payload: %v: %w", typ, err, asynq.SkipRetry)
		}
		return h(ctx, p)
	})
}

// Start runs the worker in the background.
func (w *Worker) Start() error { return w.srv.Start(w.mux) }

// Shutdown waits for running tasks and stops.
func (w *Worker) Shutdown() { w.srv.Shutdown() }
