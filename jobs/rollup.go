package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/liftab/lift/results"
)

// TypeRollupPrepare writes the finalized copy of a running test's new
// rollup base ahead of the reads that would write it (results.PrepareRollup).
const TypeRollupPrepare = "results:prepare"

// RollupPrepareTask is the payload of TypeRollupPrepare.
type RollupPrepareTask struct {
	ShopID int64 `json:"shop_id"`
	TestID int64 `json:"experiment_id"`
}

// RollupPrepareSource lists the running tests with find (results.Service's
// RollupsToPrepare) once per results.PrepareEvery slot, and gives each a job
// whose id names the slot. The ticks in between ask nothing of Postgres or
// Redis: a look per test per slot is the point, and the ids refuse a second
// one should another scheduler take the lead within the slot.
func RollupPrepareSource(find func(ctx context.Context, limit int) ([]results.RunningTest, error), limit int) Source {
	slotOf := func(now time.Time) int64 { return now.Unix()/int64(results.PrepareEvery/time.Second) + 1 }
	return slotSource(slotOf, func(ctx context.Context, _ time.Time, slot int64) ([]Job, error) {
		tests, err := find(ctx, limit)
		if err != nil {
			return nil, err
		}
		jobs := make([]Job, len(tests))
		for i, t := range tests {
			jobs[i] = Job{Type: TypeRollupPrepare, Payload: RollupPrepareTask{ShopID: t.ShopID, TestID: t.TestID},
				ID: fmt.Sprintf("prepare:%d:%d", t.TestID, slot), Queue: QueueLow, Timeout: 15 * time.Minute,
				Retention: results.PrepareEvery} // the id names the slot: no later tick can repeat it
		}
		return jobs, nil
	})
}

// HandleRollups registers the rollup preparation's handler on w.
func HandleRollups(w *Worker, s *results.Service) {
	Handle(w, TypeRollupPrepare, func(ctx context.Context, p RollupPrepareTask) error {
		return s.PrepareRollup(ctx, p.ShopID, p.TestID)
	})
}
