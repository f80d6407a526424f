package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
)

// A failed run is logged with its task and error: before, the error lived
// only in Redis and an operator saw a failed count in the metrics.
func TestWorkerLogsFailedRuns(t *testing.T) {
	t.Parallel()
	c, logs := startWorker(t, jobs.WorkerConfig{Concurrency: 1}, func(w *jobs.Worker) {
		jobs.Handle(w, "test:fail", func(context.Context, struct{}) error {
			return errors.New("snapshot of test 7: clickhouse: connection refused")
		})
	})
	if err := c.Enqueue(context.Background(), jobs.Job{Type: "test:fail", Payload: struct{}{}, ID: "fail-1"}); err != nil {
		t.Fatal(err)
	}
	want := []string{`level=WARN msg="job failed; it will be retried" type=test:fail task_id=fail-1 retry=0 max_retry=5`,
		`err="snapshot of test 7: clickhouse: connection refused"`}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := logs.String()
		if strings.Contains(got, want[0]) && strings.Contains(got, want[1]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failure line in 30 s; want %q … %q, logged:\n%s", want[0], want[1], got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startWorker runs a worker on a Redis database of the test's own, with the
// handlers register adds and its log in the returned Logs, until the test
// ends; the client enqueues on the same database.
func startWorker(t *testing.T, cfg jobs.WorkerConfig, register func(*jobs.Worker)) (*jobs.Client, *lifttest.Logs) {
	t.Helper()
	addr, db := lifttest.Redis(t)
	r := jobs.Redis{Addr: addr, DB: db}
	logs := &lifttest.Logs{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	w := jobs.NewWorker(r, cfg)
	register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	c := jobs.NewClient(r)
	t.Cleanup(func() { c.Close() })
	return c, logs
}
