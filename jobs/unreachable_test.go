package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/jobs"
)

// A run that fails because a dependency refuses connections does not spend
// one of the task's tries: a task caught by an outage longer than its five
// retries still runs once the dependency is back. Any other failure counts.
func TestUnreachableDependencySpendsNoTry(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	var mu sync.Mutex
	seen := map[string][]int{} // task id → the retry count of each run
	done := make(chan string, 2)
	c, logs := startWorker(t, jobs.WorkerConfig{Concurrency: 2, RetryDelay: func(int) time.Duration { return 10 * time.Millisecond },
		DueCheck: 50 * time.Millisecond}, func(w *jobs.Worker) {
		jobs.Handle(w, "test:outage", func(ctx context.Context, p struct{ Fail int }) error {
			id, _ := asynq.GetTaskID(ctx)
			n, _ := asynq.GetRetryCount(ctx)
			mu.Lock()
			seen[id] = append(seen[id], n)
			runs := len(seen[id])
			mu.Unlock()
			switch {
			case id == "down" && runs <= p.Fail:
				_, err := net.Dial("tcp", closed) // Postgres or ClickHouse down
				return fmt.Errorf("store.FindShop 1: %w", err)
			case id == "bug" && runs <= p.Fail:
				return errors.New("a fault of the task")
			}
			done <- id
			return nil
		})
	})
	// Eight refused runs: more than the five retries a task has.
	for _, j := range []jobs.Job{{Type: "test:outage", ID: "down", Payload: struct{ Fail int }{8}},
		{Type: "test:outage", ID: "bug", Payload: struct{ Fail int }{2}}} {
		if err := c.Enqueue(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("tasks not done in 60 s; runs so far %v", seen)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got := seen["down"]; fmt.Sprint(got) != "[0 0 0 0 0 0 0 0 0]" {
		t.Errorf("runs of the task caught by the outage saw retry counts %v, want nine runs at 0", got)
	}
	if got := seen["bug"]; fmt.Sprint(got) != "[0 1 2]" {
		t.Errorf("runs of the failing task saw retry counts %v, want [0 1 2]", got)
	}
	// Eight refused runs within the minute: one line, the rest held back.
	if want := `msg="job failed: a dependency is unreachable; it will be retried without spending a try" type=test:outage task_id=down`; strings.Count(logs.String(), want) != 1 {
		t.Errorf("want the line %q once in the log:\n%s", want, logs.String())
	}
}
