package jobs

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// TypeHousekeeping deletes what the stores keep only for a while
// (store.DB.Purge: old idempotency keys and webhook deliveries;
// results.Service.ExpireExports: export files past their retention).
const TypeHousekeeping = "housekeeping:purge"

// HousekeepingEvery is how often the purge runs.
const HousekeepingEvery = time.Hour

// HousekeepingTask is the payload of TypeHousekeeping: the slot's start,
// so a retried job purges what was due then.
type HousekeepingTask struct {
	At time.Time `json:"at"`
}

// HousekeepingSource gives one purge job per HousekeepingEvery slot, its
// id naming the slot, so a second scheduler taking the lead within the
// slot cannot repeat it.
func HousekeepingSource() Source {
	var done atomic.Int64
	return func(_ context.Context, now time.Time) ([]Job, error) {
		slot := now.Unix() / int64(HousekeepingEvery/time.Second)
		if done.Swap(slot) == slot {
			return nil, nil
		}
		return []Job{{Type: TypeHousekeeping, Payload: HousekeepingTask{At: now.UTC()}, ID: fmt.Sprintf("housekeeping:%d", slot),
			Queue: QueueLow, Timeout: 10 * time.Minute, Retention: HousekeepingEvery}}, nil
	}
}

// HandleHousekeeping registers purge, the composition root's store call,
// as the handler of TypeHousekeeping.
func HandleHousekeeping(w *Worker, purge func(ctx context.Context, at time.Time) error) {
	Handle(w, TypeHousekeeping, func(ctx context.Context, p HousekeepingTask) error { return purge(ctx, p.At) })
}
