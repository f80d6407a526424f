package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Set(t time.Time)     { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// resultsBundle is a Results over real Postgres, Redis and ClickHouse.
type resultsBundle struct {
	db      *store.DB
	wh      *warehouse.Warehouse
	client  *jobs.Client
	redis   jobs.Redis
	clock   *testClock
	results *results.Service
	shop    *experiment.Shop
}

func setupResults(t *testing.T, start time.Time) *resultsBundle {
	t.Helper()
	ctx := context.Background()
	clk := &testClock{now: start}
	db, err := store.Open(ctx, store.Config{URL: lifttest.PostgresURL(t), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	addr, chdb := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: addr, Database: chdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	raddr, rdb := lifttest.Redis(t)
	r := jobs.Redis{Addr: raddr, DB: rdb}
	client := jobs.NewClient(r)
	t.Cleanup(func() { client.Close() })
	shop, err := db.CreateShop(ctx, experiment.Shop{Domain: lifttest.Name("results") + ".myshopify.com", Name: "R",
		Timezone: "America/New_York", Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	return &resultsBundle{db: db, wh: wh, client: client, redis: r, clock: clk, shop: shop,
		results: results.New(results.Config{Repo: store.ResultsRepository{DB: db}, Tests: db, Warehouse: wh,
			Jobs: jobs.ResultsQueue{Client: client}, Now: clk.Now})}
}

// createTest stores a two-group test in the given status, started at start.
func (b *resultsBundle) createTest(t *testing.T, status experiment.Status, start time.Time) *experiment.Test {
	t.Helper()
	tt := &experiment.Test{ShopID: b.shop.ID, Type: experiment.TypeURLRedirect, Status: status, Name: "t",
		TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Groups:    []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}},
		CreatedAt: start.Add(-time.Hour), UpdatedAt: start}
	if status != experiment.StatusDraft && status != experiment.StatusPreview {
		tt.StartedAt = &start
	}
	lifttest.PutTest(t, b.db, tt)
	return tt
}

func (b *resultsBundle) setStatus(t *testing.T, tt *experiment.Test, status experiment.Status, at time.Time) {
	t.Helper()
	tt.Status, tt.UpdatedAt = status, at
	if status == experiment.StatusEnded {
		tt.EndedAt = &at
	}
	lifttest.PutTest(t, b.db, tt)
}

func taskExists(t *testing.T, r jobs.Redis, id string) bool {
	t.Helper()
	return taskInfo(t, r, jobs.QueueDefault, id) != nil
}

// taskInfo is the task id of queue as asynq holds it, nil when it holds none.
func taskInfo(t *testing.T, r jobs.Redis, queue, id string) *asynq.TaskInfo {
	t.Helper()
	in := asynq.NewInspector(asynq.RedisClientOpt{Addr: r.Addr, DB: r.DB})
	defer in.Close()
	info, err := in.GetTaskInfo(queue, id)
	if err != nil {
		return nil
	}
	return info
}

func latest(t *testing.T, b *resultsBundle, tt *experiment.Test) *results.Snapshot {
	t.Helper()
	s, err := b.db.LatestSnapshot(context.Background(), b.shop.ID, tt.ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSnapshotSchedule walks a test through its life with an injected
// clock: no snapshot in the first 15 minutes, the first one then, none again within 6 hours,
// one per 6-hour slot under a deterministic id, nothing while paused, a
// final one at the end, and nothing for a test that ended with none.
func TestSnapshotSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Date(2026, 6, 1, 14, 0, 0, 0, time.UTC)
	b := setupResults(t, start)
	tt := b.createTest(t, experiment.StatusActive, start)
	never := b.createTest(t, experiment.StatusActive, start)
	b.setStatus(t, never, experiment.StatusEnded, start)
	lifttest.PlantVisitors(t, b.wh, b.shop.ID, tt.ID, start, 300, []float64{0.05, 0.05}, 40)
	s := jobs.NewScheduler(b.db, b.client, jobs.SchedulerConfig{Now: b.clock.Now}, jobs.SnapshotSource(b.results.SnapshotsDue, 100))
	slot := func(at time.Time) string { return fmt.Sprintf("snapshot:%d:%d", tt.ID, at.Unix()/21600) }

	tick := func(name string, want jobs.TickResult) {
		t.Helper()
		got, err := s.Tick(ctx)
		if err != nil || got != want {
			t.Fatalf("%s: tick = %+v, %v; want %+v", name, got, err, want)
		}
	}
	run := func(final bool) {
		t.Helper()
		if err := b.results.TakeSnapshot(ctx, b.shop.ID, tt.ID, final); err != nil {
			t.Fatal(err)
		}
	}

	b.clock.Set(start.Add(time.Minute))
	tick("NothingInTheFirst15Minutes", jobs.TickResult{Leader: true})
	b.clock.Set(start.Add(15*time.Minute + time.Second))
	tick("FirstSnapshotDue", jobs.TickResult{Leader: true, Enqueued: 1})
	if id := slot(b.clock.Now()); !taskExists(t, b.redis, id) {
		t.Fatalf("no task %s", id)
	}
	tick("SameSlotIsDuplicate", jobs.TickResult{Leader: true, Duplicates: 1})
	run(false)
	first := latest(t, b, tt)
	if first == nil || !first.ComputedAt.Equal(b.clock.Now()) {
		t.Fatalf("first snapshot = %+v", first)
	}

	b.clock.Add(2 * time.Hour)
	tick("FreshWithin6h", jobs.TickResult{Leader: true})

	b.clock.Set(first.ComputedAt.Add(6*time.Hour + time.Minute))
	tick("StaleAfter6h", jobs.TickResult{Leader: true, Enqueued: 1})
	if id := slot(b.clock.Now()); !taskExists(t, b.redis, id) {
		t.Fatalf("no task %s", id)
	}
	run(false)
	second := latest(t, b, tt)

	b.setStatus(t, tt, experiment.StatusPaused, b.clock.Now())
	b.clock.Add(13 * time.Hour)
	tick("PausedIsNotDue", jobs.TickResult{Leader: true})
	run(false) // a job enqueued before the pause changes nothing
	if got := latest(t, b, tt); got.ID != second.ID {
		t.Fatalf("paused test got a new snapshot %d, want it to keep %d", got.ID, second.ID)
	}

	b.setStatus(t, tt, experiment.StatusEnded, b.clock.Now())
	b.clock.Add(time.Minute)
	tick("FinalAtEnd", jobs.TickResult{Leader: true, Enqueued: 1})
	if id := fmt.Sprintf("snapshot:%d:final", tt.ID); !taskExists(t, b.redis, id) {
		t.Fatalf("no task %s", id)
	}
	run(true)
	final := latest(t, b, tt)
	if !final.Final || final.ID == second.ID {
		t.Fatalf("final snapshot = %+v", final)
	}
	b.clock.Add(7 * time.Hour)
	tick("EndedAfterFinal", jobs.TickResult{Leader: true})
	if s := latest(t, b, never); s != nil {
		t.Fatalf("a test that ended with no snapshot got one: %+v", s)
	}
}

// TestSnapshotJobIDs: a running test's job is named by its 6-hour slot, an
// ended test's by "final", and one due because the test changed by its slot
// and that change, so the slot's id, already taken by the snapshot the
// change made stale, does not refuse it, and a change's job that failed for
// good blocks no later slot.
func TestSnapshotJobIDs(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 7, 30, 0, 0, time.UTC)
	changed := now.Add(-time.Minute)
	for _, c := range []struct {
		due  results.SnapshotDue
		want string
	}{
		{results.SnapshotDue{TestID: 9}, fmt.Sprintf("snapshot:9:%d", now.Unix()/int64(6*time.Hour/time.Second))},
		{results.SnapshotDue{TestID: 9, Final: true}, "snapshot:9:final"},
		{results.SnapshotDue{TestID: 9, ChangedAt: &changed},
			fmt.Sprintf("snapshot:9:%d:changed:%d", now.Unix()/int64(6*time.Hour/time.Second), changed.UnixMicro())},
	} {
		if got := jobs.SnapshotJob(c.due, now).ID; got != c.want {
			t.Errorf("%+v: id %q, want %q", c.due, got, c.want)
		}
	}
}
