package jobs

import (
	"context"
	"sync/atomic"
	"time"
)

// slotSource lists a slot's jobs (slot numbers from 1) at the slot's first
// tick, and at each later tick of the slot until the scheduler has had
// every one of them in hand (queued, or already there): the ticks in
// between ask nothing of Postgres or Redis, and a failed enqueue (Redis
// away for a tick) costs a tick, not the jobs after it for the whole slot.
// The job ids name the slot, so listing again queues nothing twice.
func slotSource(slotOf func(now time.Time) int64, list func(ctx context.Context, now time.Time, slot int64) ([]Job, error)) Source {
	var done atomic.Int64 // the last slot whose jobs were all in hand; 0 before the first
	return func(ctx context.Context, now time.Time) ([]Job, error) {
		slot := slotOf(now)
		if done.Load() == slot {
			return nil, nil
		}
		jobs, err := list(ctx, now, slot)
		if err != nil || len(jobs) == 0 {
			if err == nil {
				done.Store(slot)
			}
			return nil, err
		}
		left := new(atomic.Int64)
		left.Store(int64(len(jobs)))
		for i := range jobs {
			jobs[i].InHand = func() {
				if left.Add(-1) == 0 {
					done.Store(slot)
				}
			}
		}
		return jobs, nil
	}
}
