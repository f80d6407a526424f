package warehouse_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/liftab/lift/warehouse"
)

// TestEventsOverManyMonths: a batch whose events span more months than
// current ClickHouse takes in one INSERT (100 partitions) goes in pieces of
// at most 90 months and lands whole (storefront audit 2, S1: 101 crafted
// events wedged the flusher for every shop).
func TestEventsOverManyMonths(t *testing.T) {
	t.Parallel()
	start := time.Date(2015, 1, 15, 12, 0, 0, 0, time.UTC)
	var events []warehouse.Event
	for m := range 143 { // 2015-01 to 2026-11, the months createdAt may name
		for k := range 2 {
			at := start.AddDate(0, m, 0)
			events = append(events, warehouse.Event{ShopID: 4, ExperimentID: "1", EventID: fmt.Sprintf("m%d-%d", m, k),
				SessionID: "s", VisitorID: fmt.Sprintf("v%d", m), EventType: "page_viewed", CreatedAt: at, ReceivedAt: at})
		}
	}

	pieces := warehouse.ByMonths(events, 90)
	total := 0
	for _, p := range pieces {
		months := map[string]bool{}
		for _, e := range p {
			months[e.CreatedAt.Format("2006-01")] = true
		}
		if len(months) > 90 {
			t.Errorf("a piece spans %d months", len(months))
		}
		total += len(p)
	}
	if len(pieces) != 2 || total != len(events) {
		t.Errorf("%d pieces of %d rows in all, want 2 pieces of %d", len(pieces), total, len(events))
	}
	if one := warehouse.ByMonths(events[:20], 90); len(one) != 1 || len(one[0]) != 20 {
		t.Errorf("a batch within the limit was split: %d pieces", len(one))
	}

	w := openTestWarehouse(t)
	if err := w.Insert(context.Background(), &warehouse.Batch{Events: events}); err != nil {
		t.Fatal(err)
	}
	var n uint64
	if err := w.Conn().QueryRow(context.Background(), "SELECT uniqExact(event_id) FROM "+w.Database()+".events WHERE shop_id = 4").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != uint64(len(events)) {
		t.Errorf("%d events landed, want %d", n, len(events))
	}
}
