package warehouse_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/liftab/lift/warehouse"
)

// Resetting a test's analytics empties the results' pre-aggregates of that
// test too (the materialized views filled them on insert), and keeps every
// other test's rows.
func TestEraseTestEmptiesPreAggregates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openWarehouse(t)
	when := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	b := &warehouse.Batch{}
	for _, exp := range []string{"1", "2"} {
		b.Events = append(b.Events,
			warehouse.Event{ShopID: 9, ExperimentID: exp, EventID: "e-" + exp, SessionID: "s", VisitorID: "v",
				EventType: "product_added_to_cart", CreatedAt: when, ReceivedAt: when, ProductIDs: []string{"1001"}},
			warehouse.Event{ShopID: 9, ExperimentID: exp, EventID: "c-" + exp, SessionID: "s", VisitorID: "v",
				EventType: "lift:custom_event:signup", CustomName: "signup", CreatedAt: when, ReceivedAt: when})
		b.Sessions = append(b.Sessions, warehouse.Session{ShopID: 9, ExperimentID: exp, SessionID: "s",
			RecordID: "r-" + exp, VisitorID: "v", SeenAt: when, PagePath: "/"})
		b.PageViews = append(b.PageViews, warehouse.PageView{ShopID: 9, ExperimentID: exp, ProductID: "1001",
			ViewID: "pv-" + exp, SessionID: "s", VisitorID: "v", ViewedAt: when})
	}
	if err := w.Insert(ctx, b); err != nil {
		t.Fatal(err)
	}
	tables := []string{"agg_event_activity", "agg_product_activity", "agg_custom_events", "agg_session_pages", "agg_storewide_events"}
	counts := func() map[string][2]uint64 {
		out := map[string][2]uint64{}
		for _, table := range tables {
			var one, two uint64
			q := fmt.Sprintf("SELECT countIf(experiment_id = '1'), countIf(experiment_id = '2') FROM %s WHERE shop_id = 9", table)
			if err := w.Conn().QueryRow(ctx, q).Scan(&one, &two); err != nil {
				t.Fatal(err)
			}
			out[table] = [2]uint64{one, two}
		}
		return out
	}
	for table, n := range counts() {
		if n[0] == 0 || n[1] == 0 {
			t.Fatalf("%s = %v before the reset: the views did not fill it", table, n)
		}
	}
	if err := (warehouse.Eraser{W: w}).EraseTest(ctx, 9, 1); err != nil {
		t.Fatal(err)
	}
	// The deletes are mutations that finish in the background.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, done := counts(), true
		for table, n := range got {
			if n[1] == 0 {
				t.Fatalf("%s lost test 2's rows: %v", table, n)
			}
			done = done && n[0] == 0
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("test 1's pre-aggregated rows still there: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWaitErased: a read that must not count erased rows waits while the
// test's delete is pending (here held back by stopped merges, which run
// mutations too), not for another test's, and returns once it is done.
func TestWaitErased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openWarehouse(t)
	when := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	if err := w.Insert(ctx, &warehouse.Batch{Events: []warehouse.Event{{ShopID: 9, ExperimentID: "41", EventID: "e",
		SessionID: "s", VisitorID: "v", EventType: "page_viewed", CreatedAt: when, ReceivedAt: when}}}); err != nil {
		t.Fatal(err)
	}
	start := stopMerges(t, w, "events")
	if err := (warehouse.Eraser{W: w}).EraseTest(ctx, 9, 41); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if err := w.WaitErased(short, 9, "41"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitErased while the delete is held back = %v, want the deadline", err)
	}
	other, cancel3 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel3()
	if err := w.WaitErased(other, 9, "42"); err != nil {
		t.Fatalf("WaitErased of another test = %v, want nil at once", err)
	}
	start()
	long, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel2()
	if err := w.WaitErased(long, 9, "41"); err != nil {
		t.Fatal(err)
	}
	var left uint64
	if err := w.Conn().QueryRow(ctx, "SELECT count() FROM events WHERE shop_id = 9 AND experiment_id = '41'").Scan(&left); err != nil || left != 0 {
		t.Fatalf("after WaitErased %d rows of the test are left (%v)", left, err)
	}
}
