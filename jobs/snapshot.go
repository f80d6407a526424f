package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/results"
)

// TypeSnapshot computes a test's results snapshot (contract §2.8).
const TypeSnapshot = "results:snapshot"

// SnapshotTask is the payload of TypeSnapshot.
type SnapshotTask struct {
	ShopID int64 `json:"shop_id"`
	TestID int64 `json:"experiment_id"`
	Final  bool  `json:"final"`
}

// slot is the span one snapshot job id covers: a running test is enqueued
// once per slot however many ticks or schedulers see it due.
const slot = results.SnapshotEvery

// SnapshotSource finds tests due a snapshot with find (results.Service's
// SnapshotsDue). A running test's job id names its 6-hour slot; an ended
// test's last one is "final".
func SnapshotSource(find func(ctx context.Context, now time.Time, limit int) ([]results.SnapshotDue, error), limit int) Source {
	return func(ctx context.Context, now time.Time) ([]Job, error) {
		due, err := find(ctx, now, limit)
		if err != nil {
			return nil, err
		}
		jobs := make([]Job, len(due))
		for i, d := range due {
			jobs[i] = SnapshotJob(d, now)
		}
		return jobs, nil
	}
}

// SnapshotJob is the job computing the snapshot d asks for at now.
func SnapshotJob(d results.SnapshotDue, now time.Time) Job {
	id := fmt.Sprintf("snapshot:%d:%d", d.TestID, now.Unix()/int64(slot/time.Second))
	switch {
	case d.Final:
		id = fmt.Sprintf("snapshot:%d:final", d.TestID)
	case d.ChangedAt != nil:
		// One per change and slot: the slot's own id may be taken by the
		// snapshot the change made stale, and a change's job that failed
		// for good (its id kept archived) must not stop the next slots'.
		id += fmt.Sprintf(":changed:%d", d.ChangedAt.UnixMicro())
	}
	return Job{Type: TypeSnapshot, Payload: SnapshotTask{ShopID: d.ShopID, TestID: d.TestID, Final: d.Final},
		ID: id, Queue: QueueDefault, Timeout: 5 * time.Minute}
}

// HandleResults registers the snapshot and custom-query handlers on w.
func HandleResults(w *Worker, s *results.Service) {
	Handle(w, TypeSnapshot, func(ctx context.Context, p SnapshotTask) error {
		return s.TakeSnapshot(ctx, p.ShopID, p.TestID, p.Final)
	})
	Handle(w, TypeResultQuery, func(ctx context.Context, p ResultQueryTask) error {
		return s.RunQuery(ctx, p.QueryID, lastAttempt(ctx))
	})
}

// ResultsQueue is the results service's job queue on this client.
type ResultsQueue struct{ Client *Client }

var _ results.JobQueue = ResultsQueue{}

// EnqueueQuery queues a custom query's run; one already queued is fine.
func (q ResultsQueue) EnqueueQuery(ctx context.Context, queryID string) error {
	return ignoreDuplicate(q.Client.Enqueue(ctx, ResultQueryJob(queryID)))
}

// EnqueueExport queues an export's run; one already queued is fine.
func (q ResultsQueue) EnqueueExport(ctx context.Context, shopID int64, exportID string) error {
	return ignoreDuplicate(q.Client.Enqueue(ctx, ExportJob(shopID, exportID)))
}

func ignoreDuplicate(err error) error {
	if errors.Is(err, ErrDuplicate) {
		return nil
	}
	return err
}

// lastAttempt reports whether a failure of the running task is its last:
// it has no retries left, or it runs outside asynq (tests, tools).
func lastAttempt(ctx context.Context) bool {
	n, ok1 := asynq.GetRetryCount(ctx)
	max, ok2 := asynq.GetMaxRetry(ctx)
	return !ok1 || !ok2 || n >= max
}
