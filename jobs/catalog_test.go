package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
)

// TestCatalogRefreshSchedule: once a day each installed shop with a
// platform token gets a refresh job named by the shop and the day; an
// uninstalled shop and one without a token get none; the ticks in between
// add nothing, another scheduler in the same day finds the job in hand,
// and the worker runs the refresh as the scheduler.
func TestCatalogRefreshSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := lifttest.DB(t)
	addr, rdb := lifttest.Redis(t)
	r := jobs.Redis{Addr: addr, DB: rdb}
	client := jobs.NewClient(r)
	defer client.Close()

	install := func(domain string) *experiment.Shop {
		return lifttest.InstallShop(t, db, experiment.ShopInstall{Domain: domain, SealedToken: []byte("sealed")})
	}
	installed, gone := install("cat-a.myshopify.com"), install("cat-b.myshopify.com")
	lifttest.UninstallShop(t, db, gone.ID)
	tokenless, err := db.CreateShop(ctx, experiment.Shop{Domain: "cat-c.myshopify.com"})
	if err != nil {
		t.Fatal(err)
	}

	const every = 24 * time.Hour
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	clk := &testClock{now: day.Add(time.Minute)}
	newScheduler := func() *jobs.Scheduler {
		return jobs.NewScheduler(db, client, jobs.SchedulerConfig{Now: clk.Now}, jobs.CatalogRefreshSource(every, db.FindInstalledShopIDs))
	}
	s := newScheduler()
	id := func(shopID int64, at time.Time) string {
		return fmt.Sprintf("catalog:%d:%d", shopID, at.Unix()/int64(every/time.Second)+1)
	}
	for _, step := range []struct {
		name string
		s    *jobs.Scheduler
		at   time.Time
		want jobs.TickResult
	}{
		{"DueAtTheDaysStart", s, day.Add(time.Minute), jobs.TickResult{Leader: true, Enqueued: 1}},
		{"NothingLaterThatDay", s, day.Add(23 * time.Hour), jobs.TickResult{Leader: true}},
		{"AnotherLeaderSameDayFindsItInHand", newScheduler(), day.Add(23 * time.Hour), jobs.TickResult{Leader: true, Duplicates: 1}},
		{"DueTheNextDay", s, day.Add(every + time.Minute), jobs.TickResult{Leader: true, Enqueued: 1}},
	} {
		clk.Set(step.at)
		got, err := step.s.Tick(ctx)
		if err != nil || got != step.want {
			t.Fatalf("%s: tick = %+v, %v; want %+v", step.name, got, err, step.want)
		}
	}
	for _, at := range []time.Time{day, day.Add(every)} {
		if taskInfo(t, r, jobs.QueueLow, id(installed.ID, at)) == nil {
			t.Fatalf("no task %s", id(installed.ID, at))
		}
		for _, other := range []int64{gone.ID, tokenless.ID} {
			if taskInfo(t, r, jobs.QueueLow, id(other, at)) != nil {
				t.Fatalf("shop %d, uninstalled or without a token, got a refresh", other)
			}
		}
	}

	// The worker hands both days' jobs to the refresh, as the scheduler.
	runs := make(chan string, 4)
	w := jobs.NewWorker(r, jobs.WorkerConfig{Concurrency: 1})
	jobs.HandleCatalogRefresh(w, func(ctx context.Context, shopID int64) error {
		runs <- fmt.Sprintf("%s:%d", experiment.ActorFrom(ctx).Name, shopID)
		return nil
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown()
	want := fmt.Sprintf("scheduler:%d", installed.ID)
	for i := 0; i < 2; i++ {
		select {
		case got := <-runs:
			if got != want {
				t.Fatalf("refresh ran as %s, want %s", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the worker ran %d of the 2 refreshes", i)
		}
	}
}
