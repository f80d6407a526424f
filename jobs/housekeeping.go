package jobs

import (
	"context"
	"fmt"
	"time"
)

// TypeHousekeeping deletes what is kept only for a while (store.DB.Purge:
// old idempotency keys and webhook deliveries; results.Service.ExpireExports:
// export files past their retention; experiment.Service.ReleaseEnded: the
// platform resources of tests ended two weeks ago).
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
// slot cannot repeat it. It is a slotSource: a tick whose enqueue failed
// (Redis away) gives the job again at the next tick, not an hour later.
func HousekeepingSource() Source {
	slotOf := func(now time.Time) int64 { return now.Unix()/int64(HousekeepingEvery/time.Second) + 1 }
	return slotSource(slotOf, func(_ context.Context, now time.Time, slot int64) ([]Job, error) {
		return []Job{{Type: TypeHousekeeping, Payload: HousekeepingTask{At: now.UTC()}, ID: fmt.Sprintf("housekeeping:%d", slot),
			Queue: QueueLow, Timeout: 10 * time.Minute, Retention: HousekeepingEvery}}, nil
	})
}

// HandleHousekeeping registers purge, the composition root's store call,
// as the handler of TypeHousekeeping.
func HandleHousekeeping(w *Worker, purge func(ctx context.Context, at time.Time) error) {
	Handle(w, TypeHousekeeping, func(ctx context.Context, p HousekeepingTask) error { return purge(ctx, p.At) })
}
