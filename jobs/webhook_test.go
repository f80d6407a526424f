package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
)

// processorFunc is a fake of the webhook service's Process.
type processorFunc func(ctx context.Context, shopID int64, id string, a experiment.WebhookAttempt) error

func (f processorFunc) Process(ctx context.Context, shopID int64, id string, a experiment.WebhookAttempt) error {
	return f(ctx, shopID, id, a)
}

// A delivery is queued once however often it is enqueued, and the handler
// hands the service the delivery and which try of how many runs.
func TestWebhookQueueAndHandler(t *testing.T) {
	t.Parallel()
	addr, db := lifttest.Redis(t)
	r := jobs.Redis{Addr: addr, DB: db}
	c := jobs.NewClient(r)
	t.Cleanup(func() { c.Close() })
	q := jobs.WebhookQueue{Jobs: c}
	for i := 0; i < 2; i++ {
		if err := q.EnqueueWebhook(context.Background(), 7, "d-1"); err != nil {
			t.Fatalf("enqueue %d: %v", i, err)
		}
	}
	type call struct {
		shopID  int64
		id      string
		attempt experiment.WebhookAttempt
	}
	calls := make(chan call, 4)
	w := jobs.NewWorker(r, jobs.WorkerConfig{Concurrency: 1})
	jobs.HandleWebhooks(w, processorFunc(func(_ context.Context, shopID int64, id string, a experiment.WebhookAttempt) error {
		calls <- call{shopID, id, a}
		return nil
	}))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	select {
	case got := <-calls:
		if want := (call{7, "d-1", experiment.WebhookAttempt{Try: 1}}); got != want {
			t.Fatalf("call = %+v, want %+v", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the delivery was not processed")
	}
	select {
	case got := <-calls:
		t.Fatalf("processed twice: %+v", got)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestWebhookRetryHorizonCoversTheBackoff: an edit waits for its order's
// create only within experiment.DefaultWebhookRetryHorizon of the order's
// creation, so that horizon must cover the create's tries under the
// worker's default backoff (asynq's: retried⁴ + 15 s + up to 30 s ×
// (retried + 1) of jitter), whose bound is checked here against asynq
// itself.
func TestWebhookRetryHorizonCoversTheBackoff(t *testing.T) {
	t.Parallel()
	var worst time.Duration
	for n := 0; n < experiment.DefaultWebhookMaxTries-1; n++ {
		bound := time.Duration(n*n*n*n+15+30*(n+1)) * time.Second
		for range 500 {
			if d := asynq.DefaultRetryDelayFunc(n, nil, nil); d > bound {
				t.Fatalf("retry %d waits %s, above the bound %s this test assumes", n, d, bound)
			}
		}
		worst += bound
	}
	if worst >= experiment.DefaultWebhookRetryHorizon {
		t.Fatalf("%d tries may take %s, not within experiment.DefaultWebhookRetryHorizon (%s)",
			experiment.DefaultWebhookMaxTries, worst, experiment.DefaultWebhookRetryHorizon)
	}
}
