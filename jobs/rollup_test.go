package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
)

// The rollup source lists the running tests once per slot, with ids that
// name the slot; the ticks in between ask nothing, once the scheduler has
// had the jobs in hand. A tick whose enqueue failed is listed again.
func TestRollupPrepareSourceOncePerSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lists := 0
	src := jobs.RollupPrepareSource(func(_ context.Context, limit int) ([]results.RunningTest, error) {
		lists++
		return []results.RunningTest{{ShopID: 7, TestID: 1}, {ShopID: 8, TestID: 4}}[:min(limit, 2)], nil
	}, 50)
	slotStart := time.Unix(1_800_000_000, 0).Truncate(results.PrepareEvery)
	ids := func(at time.Time, queued bool) []string {
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
			if queued { // as the scheduler does once Redis has it
				j.InHand()
			}
		}
		return out
	}
	failed := ids(slotStart.Add(time.Second), false) // Redis refused the enqueue
	first := ids(slotStart.Add(2*time.Second), true)
	if len(first) != 2 || first[0] == first[1] || !cmp.Equal(failed, first) || lists != 2 {
		t.Fatalf("ticks: %v after a failed %v (%d lists), want a job per running test, listed again", first, failed, lists)
	}
	if again := ids(slotStart.Add(results.PrepareEvery-time.Second), true); len(again) != 0 || lists != 2 {
		t.Errorf("a tick in the same slot gave %v after %d lists, want nothing and 2", again, lists)
	}
	next := ids(slotStart.Add(results.PrepareEvery), true)
	if len(next) != 2 || lists != 3 || cmp.Equal(first, next) {
		t.Errorf("the next slot gave %v (first %v) after %d lists, want new ids and 3 lists", next, first, lists)
	}
}

// On the real stores: a tick queues a job per running test (not a paused
// one) under its slot's id, a second tick in the slot queues nothing, and
// the worker runs the jobs through the results service without an error.
func TestRollupPrepareOnTheRealStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Date(2026, 6, 1, 14, 0, 0, 0, time.UTC)
	b := setupResults(t, start)
	running := b.createTest(t, experiment.StatusActive, start)
	paused := b.createTest(t, experiment.StatusPaused, start)
	lifttest.PlantVisitors(t, b.wh, b.shop.ID, running.ID, start, 300, []float64{0.05, 0.05}, 40)
	s := jobs.NewScheduler(b.db, b.client, jobs.SchedulerConfig{Now: b.clock.Now},
		jobs.RollupPrepareSource(b.results.RollupsToPrepare, 100_000))
	if _, err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	slot := b.clock.Now().Unix()/int64(results.PrepareEvery/time.Second) + 1
	id := func(tt *experiment.Test) string { return fmt.Sprintf("prepare:%d:%d", tt.ID, slot) }
	queued := func(tt *experiment.Test) bool { return taskInfo(t, b.redis, jobs.QueueLow, id(tt)) != nil }
	if !queued(running) || queued(paused) {
		t.Fatalf("after a tick: running test queued %v, paused test queued %v; want true, false", queued(running), queued(paused))
	}
	if res, err := s.Tick(ctx); err != nil || res.Enqueued != 0 || res.Duplicates != 0 {
		t.Errorf("a second tick in the slot: %+v, %v; want nothing asked", res, err)
	}

	ran := make(chan error, 1000)
	w := jobs.NewWorker(b.redis, jobs.WorkerConfig{Concurrency: 1, Observe: func(typ string, _ time.Duration, err error) {
		if typ == jobs.TypeRollupPrepare {
			ran <- err
		}
	}})
	jobs.HandleRollups(w, b.results)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown()
	deadline := time.After(30 * time.Second)
	for {
		if info := taskInfo(t, b.redis, jobs.QueueLow, id(running)); info != nil && info.State == asynq.TaskStateCompleted {
			return // completed: its handler returned no error
		}
		select {
		case err := <-ran:
			if err != nil {
				t.Fatalf("a prepare job failed: %v", err)
			}
		case <-deadline:
			t.Fatal("the running test's prepare job never completed")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
