package lifttest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/liftab/lift/warehouse"
)

// PlantVisitors inserts visitors of a test straight into the warehouse: n a
// group on three devices, converting with the given probabilities (an
// add-to-cart and an order of about aov each, in whole cents), every seventh
// with a custom event; deterministic for a test id.
func PlantVisitors(t *testing.T, w *warehouse.Warehouse, shopID, testID int64, at time.Time, n int, conv []float64, aov float64) {
	t.Helper()
	PlantVisitorsDaily(t, w, shopID, testID, at, 1, n, conv, aov)
}

// PlantVisitorsDaily is PlantVisitors spread over days from start: n a
// group each day (so a daily chart has a series).
func PlantVisitorsDaily(t *testing.T, w *warehouse.Warehouse, shopID, testID int64, start time.Time, days, n int, conv []float64, aov float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(testID), 1))
	exp := fmt.Sprint(testID)
	var b warehouse.Batch
	devices := []string{"desktop", "mobile", "tablet"}
	for d := range days {
		for g := range conv {
			for i := range n {
				v := fmt.Sprintf("v%d-%d-%d", d, g, i)
				sid := fmt.Sprintf("00000000-0000-4000-8000-%02d%04d%06d", d, g, i)
				ts := start.Add(time.Duration(d)*24*time.Hour + time.Duration(rng.IntN(3600))*time.Second)
				b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: shopID, ExperimentID: exp, VisitorID: v,
					AssignmentID: v, SessionID: sid, TestGroup: int16(g), Device: devices[rng.IntN(3)], Country: "US",
					VisitorType: "new", AssignedAt: ts, ReceivedAt: ts})
				b.Sessions = append(b.Sessions, warehouse.Session{ShopID: shopID, ExperimentID: exp, SessionID: sid,
					RecordID: v + "-r1", VisitorID: v, SeenAt: ts, PagePath: "/"})
				if rng.Float64() < conv[g] {
					b.Events = append(b.Events, warehouse.Event{ShopID: shopID, ExperimentID: exp, EventID: v + "-atc",
						SessionID: sid, VisitorID: v, EventType: "product_added_to_cart", CreatedAt: ts, ReceivedAt: ts})
					b.Orders = append(b.Orders, warehouse.Order{ShopID: shopID, ExperimentID: exp, OrderID: v + "-o",
						Version: 1, TestGroup: int16(g), VisitorID: v, Revenue: math.Round(aov*(0.5+rng.Float64())*100) / 100,
						Currency: "USD", CreatedAt: ts})
				}
				if i%7 == 0 {
					b.Events = append(b.Events, warehouse.Event{ShopID: shopID, ExperimentID: exp, EventID: v + "-c",
						SessionID: sid, VisitorID: v, EventType: "lift:custom_event:newsletter", CustomName: "newsletter",
						CreatedAt: ts, ReceivedAt: ts})
				}
			}
		}
	}
	if err := w.Insert(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
}
