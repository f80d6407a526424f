package warehouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/results"
	"github.com/liftab/lift/warehouse"
)

// TestStorewideActivityLocalDatesAndReset: the window is the shop's local
// dates (an event late on the last local day counts, one late on the day
// before the first does not, though UTC says the opposite), and resetting
// another test's analytics removes only the events that carried that test
// alone: an event that carried both still counts once.
func TestStorewideActivityLocalDatesAndReset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := openTestWarehouse(t)
	const shop = 8
	assign := func(v string, g int16) warehouse.Assignment {
		return warehouse.Assignment{ShopID: shop, ExperimentID: "5", VisitorID: v, AssignmentID: "a-" + v, SessionID: "s-" + v,
			TestGroup: g, Device: "desktop", Country: "US", VisitorType: "new", AssignedAt: at("2026-06-01 12:00:00"),
			ReceivedAt: at("2026-06-01 12:00:00")}
	}
	event := func(exp, id, v, typ, when string) warehouse.Event {
		return warehouse.Event{ShopID: shop, ExperimentID: exp, EventID: id, SessionID: "s-" + v, VisitorID: v,
			EventType: typ, CreatedAt: at(when), ReceivedAt: at(when)}
	}
	b := warehouse.Batch{
		Assignments: []warehouse.Assignment{assign("a", 0), assign("b", 1)},
		Events: []warehouse.Event{
			event("", "early", "a", "product_viewed", "2026-06-01 03:00:00"),       // May 31, 23:00 in New York
			event("", "late", "a", "product_added_to_cart", "2026-06-03 02:00:00"), // June 2, 22:00 in New York
			event("5", "both", "b", "checkout_started", "2026-06-02 12:00:00"),
			event("7", "both", "b", "checkout_started", "2026-06-02 12:00:00"),
			event("7", "other", "b", "product_viewed", "2026-06-02 12:00:00"),
		},
	}
	if err := w.Insert(ctx, &b); err != nil {
		t.Fatal(err)
	}
	activity := func(tz string) []results.ActivityRow {
		t.Helper()
		rows, err := w.StorewideActivity(ctx, results.MetricsQuery{ShopID: shop, ExperimentID: "5", Timezone: tz,
			From: "2026-06-01", To: "2026-06-02", Basis: results.BasisVisitors}, results.AudienceFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	for _, c := range []struct {
		tz   string
		want []results.ActivityRow
	}{
		{"UTC", []results.ActivityRow{{TestGroup: 0, ProductViewers: 1, ProductViews: 1},
			{TestGroup: 1, ProductViewers: 1, ProductViews: 1, CheckoutStarter: 1, CheckoutStarts: 1}}},
		{"America/New_York", []results.ActivityRow{{TestGroup: 0, CartAdders: 1, AddToCarts: 1},
			{TestGroup: 1, ProductViewers: 1, ProductViews: 1, CheckoutStarter: 1, CheckoutStarts: 1}}},
	} {
		if diff := cmp.Diff(c.want, activity(c.tz)); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", c.tz, diff)
		}
	}

	before, err := w.DataVersion(ctx, shop, "5", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := (warehouse.Eraser{W: w}).EraseTest(ctx, shop, 7); err != nil {
		t.Fatal(err)
	}
	want := []results.ActivityRow{{TestGroup: 0, CartAdders: 1, AddToCarts: 1},
		{TestGroup: 1, CheckoutStarter: 1, CheckoutStarts: 1}}
	// The erase is a mutation that finishes in the background.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := activity("America/New_York")
		if cmp.Equal(want, got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after resetting test 7: mismatch (-want +got):\n%s", cmp.Diff(want, got))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after, err := w.DataVersion(ctx, shop, "5", true); err != nil || after == before {
		t.Fatalf("storewide version %q → %q (%v): resetting another test must move it", before, after, err)
	}
}
