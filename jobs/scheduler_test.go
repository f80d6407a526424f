package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// recorder is an Actor that records what the worker asked of it.
type recorder struct {
	mu   sync.Mutex
	seen []string
	done chan struct{}
}

func (r *recorder) RunScheduled(_ context.Context, _, testID int64, a experiment.Action) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, string(a))
	r.done <- struct{}{}
	return nil
}

func TestSchedulerEnqueuesDueOnceAndOnlyAsLeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := lifttest.PostgresURL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	sdb, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	addr, db := lifttest.Redis(t)
	var shopID int64
	if err := pool.QueryRow(ctx, `INSERT INTO shops (domain) VALUES ('j.myshopify.com') RETURNING id`).Scan(&shopID); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	start := base.Add(time.Hour)
	tt := &experiment.Test{ShopID: shopID, Type: experiment.TypeURLRedirect, Status: experiment.StatusDraft, Name: "s",
		TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Schedule: &experiment.Schedule{StartAt: &start}, CreatedAt: base, UpdatedAt: base}
	lifttest.PutTest(t, sdb, tt)

	now := base
	client := jobs.NewClient(jobs.Redis{Addr: addr, DB: db})
	defer client.Close()
	s := jobs.NewScheduler(sdb, client, jobs.SchedulerConfig{Now: func() time.Time { return now }}, jobs.ScheduleSource(sdb.FindDueActions, 100))

	for _, step := range []struct {
		name string
		at   time.Time
		want jobs.TickResult
	}{
		{"BeforeStart", base, jobs.TickResult{Leader: true}},
		{"AtStart", start, jobs.TickResult{Leader: true, Enqueued: 1}},
		{"AgainIsDuplicate", start.Add(time.Minute), jobs.TickResult{Leader: true, Duplicates: 1}},
	} {
		now = step.at
		got, err := s.Tick(ctx)
		if err != nil || got != step.want {
			t.Fatalf("%s: tick = %+v, %v; want %+v", step.name, got, err, step.want)
		}
	}

	// Another process holding the lock makes this one stand by.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(0x6c696674_0007)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Tick(ctx); err != nil || got.Leader {
		t.Fatalf("tick while another leads = %+v, %v", got, err)
	}
	tx.Rollback(ctx)

	// The worker hands the enqueued job to the actor.
	rec := &recorder{done: make(chan struct{}, 1)}
	w := jobs.NewWorker(jobs.Redis{Addr: addr, DB: db}, jobs.WorkerConfig{Concurrency: 1})
	jobs.HandleScheduled(w, rec)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown()
	select {
	case <-rec.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker never ran the scheduled start")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.seen) != 1 || rec.seen[0] != "start" {
		t.Fatalf("actor saw %v", rec.seen)
	}
}

// checker is a Checker that reports each run with the audit actor it got.
type checker struct{ runs chan string }

func (c *checker) RunChecks(ctx context.Context, shopID, testID int64) error {
	c.runs <- fmt.Sprintf("%s:%d:%d", experiment.ActorFrom(ctx).Name, shopID, testID)
	return nil
}

// checksQueue is the services' job-queue port over a Redis database of
// the test's own.
func checksQueue(t *testing.T) (jobs.Redis, jobs.ChecksQueue) {
	t.Helper()
	addr, db := lifttest.Redis(t)
	r := jobs.Redis{Addr: addr, DB: db}
	c := jobs.NewClient(r)
	t.Cleanup(func() { c.Close() })
	return r, jobs.ChecksQueue{Client: c}
}

// TestChecksQueue: the service's job-queue port over asynq takes a second
// enqueue of the same checks as done, and the task runs as the worker.
func TestChecksQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, q := checksQueue(t)
	for i := 0; i < 2; i++ {
		if err := q.EnqueueChecks(ctx, 7, 42); err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	w := jobs.NewWorker(r, jobs.WorkerConfig{Concurrency: 1})
	ch := &checker{runs: make(chan string, 4)}
	jobs.HandleChecks(w, ch)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown()
	select {
	case got := <-ch.runs:
		if got != "worker:7:42" {
			t.Fatalf("run = %s, want worker:7:42", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the checks never ran")
	}
}

// TestCatalogRecheckQueue: the saves of a merchant fixing a zone queue one
// catalog refresh of the shop a slot (a second enqueue is not an error,
// and adds no task), and it runs the refresh handler for that shop.
func TestCatalogRecheckQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, q := checksQueue(t)
	for i := 0; i < 3; i++ {
		if err := q.EnqueueCatalogRefresh(ctx, 9); err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	in := jobs.NewInspector(r)
	defer in.Close()
	depths, err := in.Depths()
	if err != nil || depths[jobs.QueueLow]["pending"] != 1 {
		t.Fatalf("queue depths after three enqueues = %v (%v), want one pending on %s", depths, err, jobs.QueueLow)
	}
	w := jobs.NewWorker(r, jobs.WorkerConfig{Concurrency: 1})
	runs := make(chan int64, 4)
	jobs.HandleCatalogRefresh(w, func(_ context.Context, shopID int64) error { runs <- shopID; return nil })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown()
	select {
	case got := <-runs:
		if got != 9 {
			t.Fatalf("refreshed shop %d, want 9", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the refresh never ran")
	}
}
