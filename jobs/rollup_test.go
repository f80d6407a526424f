package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/results"
)

// The rollup source lists the running tests once per slot, with ids that
// name the slot; the ticks in between ask nothing.
func TestRollupPrepareSourceOncePerSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lists := 0
	src := jobs.RollupPrepareSource(func(_ context.Context, limit int) ([]results.RunningTest, error) {
		lists++
		return []results.RunningTest{{ShopID: 7, TestID: 1}, {ShopID: 8, TestID: 4}}[:min(limit, 2)], nil
	}, 50)
	slotStart := time.Unix(1_800_000_000, 0).Truncate(results.PrepareEvery)
	ids := func(at time.Time) []string {
		t.Helper()
		js, err := src(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range js {
			if p, ok := j.Payload.(jobs.RollupPrepareTask); !ok || j.Type != jobs.TypeRollupPrepare || j.Queue != jobs.QueueLow || p.TestID == 0 ||
				j.Retention != results.PrepareEvery {
				t.Errorf("job %+v", j)
			}
			out = append(out, j.ID)
		}
		return out
	}
	first := ids(slotStart.Add(time.Second))
	if len(first) != 2 || first[0] == first[1] {
		t.Fatalf("first tick: %v, want a job per running test", first)
	}
	if again := ids(slotStart.Add(results.PrepareEvery - time.Second)); len(again) != 0 || lists != 1 {
		t.Errorf("a tick in the same slot gave %v after %d lists, want nothing and 1", again, lists)
	}
	next := ids(slotStart.Add(results.PrepareEvery))
	if len(next) != 2 || lists != 2 || cmp.Equal(first, next) {
		t.Errorf("the next slot gave %v (first %v) after %d lists, want new ids and 2 lists", next, first, lists)
	}
}
