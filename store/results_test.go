package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
)

func write(t *testing.T, db *store.DB, shopID int64, fn func(ctx context.Context, tx *store.Tx) error) {
	t.Helper()
	_, err := db.Write(context.Background(), experiment.WriteMeta{ShopID: shopID, Action: "results.test", ResourceType: "results"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{}, fn(ctx, tx)
		})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotsLatestAndDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	shop := newShop(t, db, "snapshots.myshopify.com", true)
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	mk := func(status experiment.Status) *experiment.Test {
		tt := newTest(shop.ID, base)
		tt.Status = status
		if status != experiment.StatusDraft {
			tt.StartedAt = &base
		}
		if status == experiment.StatusEnded {
			end := base.Add(time.Hour)
			tt.EndedAt = &end
		}
		if err := store.CreateTest(ctx, db.Pool(), tt); err != nil {
			t.Fatal(err)
		}
		return tt
	}
	fresh, stale, never, paused, ended, endedFinal := mk(experiment.StatusActive), mk(experiment.StatusActive),
		mk(experiment.StatusActive), mk(experiment.StatusPaused), mk(experiment.StatusEnded), mk(experiment.StatusEnded)
	mk(experiment.StatusEnded) // ended with no snapshot: never due
	mk(experiment.StatusDraft)
	now := base.Add(10 * time.Hour)
	// Started 10 minutes ago: its first snapshot waits for FirstAfter.
	recent := mk(experiment.StatusActive)
	recentStart := now.Add(-10 * time.Minute)
	recent.StartedAt = &recentStart
	if err := store.SaveTest(ctx, db.Pool(), recent); err != nil {
		t.Fatal(err)
	}
	// The running tests, for the rollup's preparation: active ones only
	// (other tests' shops run in parallel beside these).
	running, err := db.FindRunningTests(ctx, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	gotRunning := map[int64]bool{}
	for _, r := range running {
		if r.ShopID == shop.ID {
			gotRunning[r.TestID] = true
		}
	}
	if diff := cmp.Diff(map[int64]bool{fresh.ID: true, stale.ID: true, never.ID: true, recent.ID: true}, gotRunning); diff != "" {
		t.Errorf("FindRunningTests mismatch (-want +got):\n%s", diff)
	}
	if one, err := db.FindRunningTests(ctx, 1); err != nil || len(one) != 1 {
		t.Errorf("FindRunningTests with limit 1 = %v, %v; want one test", one, err)
	}
	for _, s := range []results.Snapshot{
		{TestID: fresh.ID, ComputedAt: now.Add(-time.Hour)},
		{TestID: stale.ID, ComputedAt: now.Add(-7 * time.Hour)},
		{TestID: stale.ID, ComputedAt: now.Add(-6*time.Hour - time.Minute)},
		{TestID: paused.ID, ComputedAt: now.Add(-9 * time.Hour)},
		{TestID: ended.ID, ComputedAt: now.Add(-9 * time.Hour)},
		{TestID: endedFinal.ID, ComputedAt: now.Add(-8 * time.Hour), Final: true},
	} {
		s.ShopID, s.Body, s.Summary = shop.ID, json.RawMessage(`{"n":1}`), json.RawMessage(`{}`)
		write(t, db, shop.ID, func(ctx context.Context, tx *store.Tx) error { return tx.CreateSnapshot(ctx, &s) })
	}
	policy := results.SnapshotPolicy{FirstAfter: 15 * time.Minute, Every: 6 * time.Hour}
	for name, c := range map[string]struct {
		now  time.Time
		want map[int64]bool
	}{
		"RecentNotYetDue": {now, map[int64]bool{never.ID: false, stale.ID: false, ended.ID: true}},
		"RecentDueAfter15m": {now.Add(5*time.Minute + time.Second),
			map[int64]bool{never.ID: false, stale.ID: false, ended.ID: true, recent.ID: false}},
	} {
		t.Run(name, func(t *testing.T) {
			due, err := db.FindSnapshotsDue(ctx, c.now, policy, 100)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int64]bool{}
			for _, d := range due {
				got[d.TestID] = d.Final
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("FindSnapshotsDue mismatch (-want +got):\n%s", diff)
			}
		})
	}

	latest, err := db.LatestSnapshot(ctx, shop.ID, stale.ID)
	if err != nil || latest == nil || !latest.ComputedAt.Equal(now.Add(-6*time.Hour-time.Minute)) || string(latest.Body) != `{"n":1}` {
		t.Fatalf("LatestSnapshot = %+v, %v", latest, err)
	}
	if s, err := db.LatestSnapshot(ctx, shop.ID, never.ID); s != nil || err != nil {
		t.Fatalf("LatestSnapshot of a test with none = %+v, %v", s, err)
	}
	if s, err := db.LatestSnapshot(ctx, shop.ID+1, stale.ID); s != nil || err != nil {
		t.Fatalf("another shop read a snapshot: %+v, %v", s, err)
	}
}

func TestResultQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	shop := newShop(t, db, "queries.myshopify.com", true)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tt := newTest(shop.ID, base)
	if err := store.CreateTest(ctx, db.Pool(), tt); err != nil {
		t.Fatal(err)
	}
	q := &results.ResultQuery{ID: "rq_1", ShopID: shop.ID, TestID: tt.ID, Spec: json.RawMessage(`{"a":1}`), SpecKey: `{"a":1}`,
		Status: results.QueryPending, CreatedAt: base}
	write(t, db, shop.ID, func(ctx context.Context, tx *store.Tx) error { return tx.CreateResultQuery(ctx, q) })

	if r, err := db.FindReusableQuery(ctx, tt.ID, q.SpecKey, base.Add(-time.Hour)); r != nil || err != nil {
		t.Fatalf("a pending query is reusable: %+v, %v", r, err)
	}
	done := base.Add(time.Minute)
	write(t, db, shop.ID, func(ctx context.Context, tx *store.Tx) error {
		return tx.FinishResultQuery(ctx, q.ID, results.QueryCompleted, done, json.RawMessage(`{"x":2}`), "")
	})
	// A retried job cannot overwrite a finished query.
	write(t, db, shop.ID, func(ctx context.Context, tx *store.Tx) error {
		return tx.FinishResultQuery(ctx, q.ID, results.QueryFailed, done.Add(time.Minute), nil, "late")
	})
	got, err := db.FindResultQuery(ctx, shop.ID, tt.ID, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != results.QueryCompleted || got.FailureReason != "" || string(got.Body) != `{"x":2}` || !got.ComputedAt.Equal(done) {
		t.Fatalf("query = %+v", got)
	}
	for name, since := range map[string]time.Time{"WithinTheHour": done.Add(-time.Hour + time.Second), "Exactly": done} {
		t.Run(name, func(t *testing.T) {
			if r, err := db.FindReusableQuery(ctx, tt.ID, q.SpecKey, since); err != nil || r == nil || r.ID != q.ID {
				t.Fatalf("FindReusableQuery = %+v, %v", r, err)
			}
		})
	}
	if r, err := db.FindReusableQuery(ctx, tt.ID, q.SpecKey, done.Add(time.Second)); r != nil || err != nil {
		t.Fatalf("an older computation was reused: %+v, %v", r, err)
	}
	if r, err := db.FindReusableQuery(ctx, tt.ID, `{"a":2}`, base); r != nil || err != nil {
		t.Fatalf("another query's computation was reused: %+v, %v", r, err)
	}
	for name, c := range map[string]struct {
		shop, test int64
		id         string
	}{
		"UnknownID": {shop.ID, tt.ID, "rq_2"},
		"OtherTest": {shop.ID, tt.ID + 1, q.ID},
		"OtherShop": {shop.ID + 1, tt.ID, q.ID},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := db.FindResultQuery(ctx, c.shop, c.test, c.id)
			wantCode(t, err, "results_query_not_found")
		})
	}
	if r, err := db.FindQueryByID(ctx, "rq_nope"); r != nil || err != nil {
		t.Fatalf("FindQueryByID of an unknown id = %+v, %v", r, err)
	}
}

// TestExportReadsBackAsCreated: the store's clock has Postgres's precision,
// so the created_at answered on create is the one every read answers (the
// v1 audit saw nanoseconds on create and microseconds on read).
func TestExportReadsBackAsCreated(t *testing.T) {
	t.Parallel()
	db := openDB(t) // the real clock, with nanoseconds
	shop := newShop(t, db, "export-clock.myshopify.com", true)
	tt := newTest(shop.ID, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	if err := store.CreateTest(context.Background(), db.Pool(), tt); err != nil {
		t.Fatal(err)
	}
	x := &results.Export{ID: experiment.NewID("export_"), ShopID: shop.ID, ExperimentID: tt.ID}
	write(t, db, shop.ID, func(ctx context.Context, tx *store.Tx) error { return tx.CreateExport(ctx, x) })
	got, err := db.FindExport(context.Background(), shop.ID, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(x.CreatedAt) {
		t.Fatalf("created_at answered %s on create, %s on read", x.CreatedAt.Format(time.RFC3339Nano), got.CreatedAt.Format(time.RFC3339Nano))
	}
}
