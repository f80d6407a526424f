package warehouse_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/warehouse"
)

// TestShippingByGroup: with MetricsQuery.Shipping, every path (raw,
// rollup, rollup over a copy; visitors and sessions basis; with a
// breakdown) sums what each group's counted orders charged for shipping as
// they stand (an edit replaces it), and counts the orders that did not
// record it (legacy rows): the numbers worked out by hand below.
func TestShippingByGroup(t *testing.T) {
	for _, copied := range []bool{false, true} {
		t.Run(map[bool]string{false: "rollup parts", true: "rollup copy"}[copied], func(t *testing.T) {
			if copied {
				defer warehouse.SetCopyMinVisitors(0)()
			} else {
				defer warehouse.SetCopyMinVisitors(1 << 62)()
			}
			w := openTestWarehouse(t)
			shippingFixture(t, w)
			want := map[int]struct {
				orders, shipping float64
				unrecorded       int64
			}{0: {2, 4.99, 0}, 1: {3, 7.5, 1}}
			for _, basis := range []warehouse.Basis{warehouse.BasisVisitors, warehouse.BasisSessions} {
				for _, dims := range [][]warehouse.Dimension{nil, {"device"}} {
					q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "77", Timezone: "UTC", From: "2026-06-01", To: "2026-06-30",
						Basis: basis, Breakdown: dims, Shipping: true}
					reads := map[string]func() ([]warehouse.GroupRow, error){
						"GroupMetrics": func() ([]warehouse.GroupRow, error) { return w.GroupMetrics(context.Background(), q) },
						"raw":          func() ([]warehouse.GroupRow, error) { return w.RawGroupMetrics(q) },
					}
					if basis == warehouse.BasisVisitors {
						reads["rollup"] = func() ([]warehouse.GroupRow, error) {
							rows, ok, err := w.RollupGroupMetrics(q)
							if err == nil && !ok {
								t.Fatalf("%v: the rollup declined", dims)
							}
							return rows, err
						}
					}
					for name, read := range reads {
						rows, err := read()
						if err != nil {
							t.Fatalf("%s %s %v: %v", name, basis, dims, err)
						}
						got := map[int]warehouse.Sums{}
						for _, r := range rows {
							s := got[r.TestGroup]
							s.Add(r.Sums)
							got[r.TestGroup] = s
						}
						for g, wg := range want {
							s := got[g]
							if s.Orders != wg.orders || !near(s.Shipping, wg.shipping) || s.ShippingUnrecorded != wg.unrecorded {
								t.Errorf("%s %s %v group %d: orders %v shipping %v unrecorded %d; want %v, %v, %d",
									name, basis, dims, g, s.Orders, s.Shipping, s.ShippingUnrecorded, wg.orders, wg.shipping, wg.unrecorded)
							}
						}
					}
				}
			}
			// Without Shipping the sums stay zero: the read skips the work.
			rows, err := w.GroupMetrics(context.Background(), warehouse.MetricsQuery{ShopID: 1, ExperimentID: "77",
				Timezone: "UTC", From: "2026-06-01", To: "2026-06-30", Basis: warehouse.BasisVisitors})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Shipping != 0 || r.ShippingUnrecorded != 0 {
					t.Errorf("group %d without Shipping: %v, %d", r.TestGroup, r.Shipping, r.ShippingUnrecorded)
				}
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// shippingFixture: five visitors of test 77; group 0's orders charged
// 5.00 (edited to 0: a refunded shipping) and 4.99, group 1's 7.50 and
// nothing (an order with no shipping lines), plus a legacy order that
// recorded no shipping. A bot's order with shipping does not count.
func shippingFixture(t *testing.T, w *warehouse.Warehouse) {
	t.Helper()
	ctx := context.Background()
	when := at("2026-06-01 10:00:00")
	b := &warehouse.Batch{}
	for i, v := range []struct {
		id     string
		group  int16
		device string
		bot    bool
	}{{"v1", 0, "desktop", false}, {"v2", 0, "mobile", false}, {"v3", 1, "desktop", false}, {"v4", 1, "mobile", false},
		{"v5", 1, "desktop", true}} {
		at := when.Add(time.Duration(i) * time.Minute)
		b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: 1, ExperimentID: "77", VisitorID: v.id,
			AssignmentID: v.id + "-a", SessionID: v.id + "-s", TestGroup: v.group, Device: v.device, AssignedAt: at,
			ReceivedAt: at, IsBot: v.bot})
		b.Sessions = append(b.Sessions, warehouse.Session{ShopID: 1, ExperimentID: "77", SessionID: v.id + "-s",
			RecordID: v.id + "-r", VisitorID: v.id, SeenAt: at, PagePath: "/", IsBot: v.bot})
	}
	b.Orders = append(b.Orders, warehouse.Order{ShopID: 1, ExperimentID: "77", OrderID: "o5", Version: 1, TestGroup: 1,
		VisitorID: "v4", SessionID: "v4-s", Revenue: 30, Currency: "USD", CreatedAt: when.Add(time.Hour), Source: "legacy"})
	if err := w.Insert(ctx, b); err != nil {
		t.Fatal(err)
	}
	signed := func(id, visitor string, group int16, version uint64, shipping string, recorded bool) experiment.SignedOrder {
		return experiment.SignedOrder{ShopID: 1, ExperimentID: "77", OrderID: id, Version: version, TestGroup: group,
			VisitorID: visitor, SessionID: visitor + "-s", Revenue: decimal.RequireFromString("40"),
			Shipping: decimal.RequireFromString(shipping), ShippingRecorded: recorded, Currency: "USD", CreatedAt: when.Add(time.Hour)}
	}
	if err := (warehouse.WebhookOrders{W: w}).WriteSignedOrders(ctx, []experiment.SignedOrder{
		signed("o1", "v1", 0, 1, "5.00", true), signed("o1", "v1", 0, 2, "0", true), signed("o2", "v2", 0, 1, "4.99", true),
		signed("o3", "v3", 1, 1, "7.50", true), signed("o4", "v3", 1, 1, "0", true), signed("o6", "v5", 1, 1, "9.00", true),
	}); err != nil {
		t.Fatal(err)
	}
}
