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
	addr, db := lifttest.Redis(t)
	r := jobs.Redis{Addr: addr, DB: db}
	var logs lifttest.Logs
	w := jobs.NewWorker(r, jobs.WorkerConfig{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	jobs.Handle(w, "test:fail", func(context.Context, struct{}) error {
		return errors.New("snapshot of test 7: clickhouse: connection refused")
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown()
	c := jobs.NewClient(r)
	defer c.Close()
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
