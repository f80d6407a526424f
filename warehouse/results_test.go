package warehouse_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/warehouse"
)

func openTestWarehouse(t *testing.T) *warehouse.Warehouse {
	t.Helper()
	addr, db := lifttest.ClickHouse(t)
	w, err := warehouse.Open(context.Background(), warehouse.Config{Addr: addr, Database: db, ReadTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

// resultsFixture is a small test whose every number is worked out by hand
// in TestGroupMetrics: replayed events and orders, an edited order, a bot, a
// visitor assigned twice, an excluded visitor, and a visitor whose UTC date
// differs from its New York date.
func resultsFixture(t *testing.T, w *warehouse.Warehouse) {
	t.Helper()
	const shop, exp = 1, "9"
	assign := func(visitor string, group int16, device, country, vt, utmSource, utmMedium, when string, bot bool) warehouse.Assignment {
		return warehouse.Assignment{ShopID: shop, ExperimentID: exp, VisitorID: visitor, AssignmentID: "a-" + visitor,
			SessionID: "s-" + visitor, TestGroup: group, Device: device, Country: country, VisitorType: vt,
			UTMSource: utmSource, UTMMedium: utmMedium, AssignedAt: at(when), ReceivedAt: at(when), IsBot: bot}
	}
	session := func(sid, record, visitor, path, when string) warehouse.Session {
		return warehouse.Session{ShopID: shop, ExperimentID: exp, SessionID: sid, RecordID: record, VisitorID: visitor,
			SeenAt: at(when), PagePath: path}
	}
	event := func(id, sid, visitor, typ, when string, products ...string) warehouse.Event {
		return warehouse.Event{ShopID: shop, ExperimentID: exp, EventID: id, SessionID: sid, VisitorID: visitor,
			EventType: typ, CreatedAt: at(when), ReceivedAt: at(when), ProductIDs: products}
	}
	order := func(id string, version uint64, visitor, sid string, revenue, cost float64, when string, products ...string) warehouse.Order {
		o := warehouse.Order{ShopID: shop, ExperimentID: exp, OrderID: id, Version: version, VisitorID: visitor,
			SessionID: sid, Revenue: revenue, Cost: cost, Currency: "USD", CreatedAt: at(when)}
		for _, p := range products {
			o.LineProductIDs = append(o.LineProductIDs, p)
			o.LineVariantIDs = append(o.LineVariantIDs, p+"0")
			o.LineQuantities = append(o.LineQuantities, 2)
			o.LinePrices = append(o.LinePrices, revenue/2)
		}
		return o
	}
	custom := func(id, sid, visitor, name, when string, bot bool) warehouse.Event {
		e := event(id, sid, visitor, "lift:custom_event:"+name, when)
		e.CustomName, e.IsBot = name, bot
		return e
	}
	v7second := assign("v7", 1, "mobile", "US", "new", "", "", "2026-06-01 16:00:00", false)
	b := &warehouse.Batch{
		Assignments: []warehouse.Assignment{
			assign("v1", 0, "desktop", "US", "new", "", "", "2026-06-01 12:00:00", false),
			assign("v2", 1, "mobile", "GB", "returning", "google", "cpc", "2026-06-02 14:00:00", false),
			assign("v3", 1, "mobile", "US", "new", "", "", "2026-06-02 03:00:00", false), // 2026-06-01 in New York
			assign("v4", 0, "desktop", "US", "new", "", "", "2026-06-01 12:00:00", true),
			assign("v5", 0, "desktop", "US", "new", "", "", "2026-06-03 05:00:00", false), // 2026-06-03 in New York
			assign("v6", -1, "desktop", "US", "new", "", "", "2026-06-01 12:00:00", false),
			assign("v7", 0, "desktop", "US", "new", "", "", "2026-06-01 15:00:00", false),
			v7second, // received later: the first assignment stands
		},
		Sessions: []warehouse.Session{
			session("s1", "r1", "v1", "/", "2026-06-01 12:00:00"),
			session("s1", "r2", "v1", "/products/a", "2026-06-01 12:01:00"),
			session("s1", "r3", "v1", "/cart", "2026-06-01 12:05:00"),
			session("s1", "r3", "v1", "/cart", "2026-06-01 12:05:00"), // replayed
			session("s2", "r4", "v2", "/collections/all", "2026-06-02 14:00:00"),
			session("s3", "r5", "v3", "/", "2026-06-02 03:00:00"),
			session("s3", "r6", "v3", "/products/b", "2026-06-02 03:01:00"),
			session("s4", "r7", "v4", "/", "2026-06-01 12:00:00"),
		},
		Events: []warehouse.Event{
			event("e1", "s1", "v1", "product_added_to_cart", "2026-06-01 12:02:00", "1001"),
			event("e1", "s1", "v1", "product_added_to_cart", "2026-06-01 12:02:00", "1001"), // replayed
			event("e2", "s1", "v1", "checkout_started", "2026-06-01 12:03:00", "1001"),
			{ShopID: shop, ExperimentID: exp, EventID: "e3", SessionID: "s1", VisitorID: "v1", EventType: "checkout_completed",
				OrderID: "o1", CreatedAt: at("2026-06-01 12:04:00"), ReceivedAt: at("2026-06-01 12:04:00")},
			event("e4", "s3", "v3", "product_added_to_cart", "2026-06-02 03:01:30", "1002"),
			event("e5", "s4", "v4", "product_added_to_cart", "2026-06-01 12:02:00", "1001"),
			custom("c1", "s1", "v1", "signup", "2026-06-01 12:01:00", false),
			custom("c2", "s1", "v1", "signup", "2026-06-01 12:01:30", false),
			custom("c2", "s1", "v1", "signup", "2026-06-01 12:01:30", false), // replayed
			custom("c3", "s3", "v3", "signup", "2026-06-02 03:01:00", false),
			custom("c4", "s4", "v4", "signup", "2026-06-01 12:01:00", true),
		},
		PageViews: []warehouse.PageView{
			{ShopID: shop, ExperimentID: exp, ProductID: "1001", ViewID: "p1", SessionID: "s1", VisitorID: "v1", ViewedAt: at("2026-06-01 12:01:00")},
			{ShopID: shop, ExperimentID: exp, ProductID: "1002", ViewID: "p2", SessionID: "s3", VisitorID: "v3", ViewedAt: at("2026-06-02 03:01:00")},
		},
		Orders: []warehouse.Order{
			order("o1", 1, "v1", "", 100, 40, "2026-06-01 12:04:00", "1001"),
			order("o1", 2, "v1", "", 80, 30, "2026-06-01 12:04:00", "1001"), // edited: the latest version counts
			order("o2", 1, "v3", "s3", 50, 20, "2026-06-02 03:02:00", "1002"),
			order("o2", 1, "v3", "s3", 50, 20, "2026-06-02 03:02:00", "1002"), // replayed
			order("o3", 1, "v3", "s3", 30, 0, "2026-06-02 03:03:00", "1002"),
			order("o4", 1, "v4", "s4", 70, 0, "2026-06-01 12:04:00", "1001"),
		},
	}
	b.Orders[5].IsBot = true
	for i := range b.Orders { // each order states its visitor's group, as the storefront sends it
		b.Orders[i].TestGroup = map[string]int16{"v1": 0, "v3": 1, "v4": 0}[b.Orders[i].VisitorID]
	}
	if err := w.Insert(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func TestGroupMetrics(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	resultsFixture(t, w)
	base := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "9", Timezone: "America/New_York",
		From: "2026-06-01", To: "2026-06-02", Basis: warehouse.BasisVisitors}
	g0 := warehouse.Sums{N: 2, Sessions: 1, Converted: 1, Orders: 1, OrdersSq: 1, Revenue: 80, RevenueSq: 6400,
		RevenueOrders: 80, Profit: 50, ProfitSq: 2500, AddedToCart: 1, ReachedCheckout: 1, ClickedThrough: 1,
		PageViews: 3, Staying: 300, StayingSq: 90000}
	g1 := warehouse.Sums{N: 2, Sessions: 2, Converted: 1, Orders: 2, OrdersSq: 4, Revenue: 80, RevenueSq: 6400,
		RevenueOrders: 160, Profit: 60, ProfitSq: 3600, AddedToCart: 1, ReachedCheckout: 1, ClickedThrough: 1,
		Bounced: 1, PageViews: 3, Staying: 60, StayingSq: 3600}
	cases := []struct {
		name string
		q    func(q *warehouse.MetricsQuery)
		want []warehouse.GroupRow
	}{
		{"Whole test", func(q *warehouse.MetricsQuery) {}, []warehouse.GroupRow{{TestGroup: 0, Sums: g0}, {TestGroup: 1, Sums: g1}}},
		{"ByDevice", func(q *warehouse.MetricsQuery) { q.Breakdown = []warehouse.Dimension{"device"} },
			[]warehouse.GroupRow{{Key: "desktop", TestGroup: 0, Sums: g0}, {Key: "mobile", TestGroup: 1, Sums: g1}}},
		{"ByDeviceCountryDate", func(q *warehouse.MetricsQuery) {
			q.Breakdown = []warehouse.Dimension{"device", "country", "date"}
		}, []warehouse.GroupRow{
			{Key: "desktop::US::2026-06-01", TestGroup: 0, Sums: g0},
			{Key: "mobile::GB::2026-06-02", TestGroup: 1, Sums: warehouse.Sums{N: 1, Sessions: 1, Bounced: 1, PageViews: 1}},
			{Key: "mobile::US::2026-06-01", TestGroup: 1, Sums: warehouse.Sums{N: 1, Sessions: 1, Converted: 1, Orders: 2,
				OrdersSq: 4, Revenue: 80, RevenueSq: 6400, RevenueOrders: 160, Profit: 60, ProfitSq: 3600, AddedToCart: 1,
				ReachedCheckout: 1, ClickedThrough: 1, PageViews: 2, Staying: 60, StayingSq: 3600}},
		}},
		{"ByTrafficSourceAndLanding", func(q *warehouse.MetricsQuery) {
			q.Breakdown = []warehouse.Dimension{"traffic_source", "landing_page"}
		}, []warehouse.GroupRow{
			{Key: "direct::", TestGroup: 0, Sums: warehouse.Sums{N: 1}},
			{Key: "direct::/", TestGroup: 0, Sums: g0sub(g0)},
			{Key: "direct::/", TestGroup: 1, Sums: warehouse.Sums{N: 1, Sessions: 1, Converted: 1, Orders: 2,
				OrdersSq: 4, Revenue: 80, RevenueSq: 6400, RevenueOrders: 160, Profit: 60, ProfitSq: 3600, AddedToCart: 1,
				ReachedCheckout: 1, ClickedThrough: 1, PageViews: 2, Staying: 60, StayingSq: 3600}},
			{Key: "paid::/collections/all", TestGroup: 1, Sums: warehouse.Sums{N: 1, Sessions: 1, Bounced: 1, PageViews: 1}},
		}},
		{"NarrowWindow", func(q *warehouse.MetricsQuery) { q.To = "2026-06-01" }, []warehouse.GroupRow{
			{TestGroup: 0, Sums: g0},
			{TestGroup: 1, Sums: warehouse.Sums{N: 1, Sessions: 1, Converted: 1, Orders: 2,
				OrdersSq: 4, Revenue: 80, RevenueSq: 6400, RevenueOrders: 160, Profit: 60, ProfitSq: 3600, AddedToCart: 1,
				ReachedCheckout: 1, ClickedThrough: 1, PageViews: 2, Staying: 60, StayingSq: 3600}},
		}},
		{"Sessions", func(q *warehouse.MetricsQuery) { q.Basis = warehouse.BasisSessions }, []warehouse.GroupRow{
			{TestGroup: 0, Sums: warehouse.Sums{N: 1, Sessions: 1, Converted: 1, Orders: 1, OrdersSq: 1, Revenue: 80,
				RevenueSq: 6400, RevenueOrders: 80, Profit: 50, ProfitSq: 2500, AddedToCart: 1, ReachedCheckout: 1,
				ClickedThrough: 1, PageViews: 3, Staying: 300, StayingSq: 90000}},
			{TestGroup: 1, Sums: g1},
		}},
		{"ProductScope", func(q *warehouse.MetricsQuery) { q.ProductIDs = []string{"1001"} }, []warehouse.GroupRow{
			{TestGroup: 0, Sums: warehouse.Sums{N: 1, Sessions: 1, Converted: 1, Orders: 1, OrdersSq: 1, Revenue: 80,
				RevenueSq: 6400, RevenueOrders: 80, Profit: 50, ProfitSq: 2500, AddedToCart: 1, ReachedCheckout: 1,
				ClickedThrough: 1, PageViews: 3, Staying: 300, StayingSq: 90000}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := base
			c.q(&q)
			got, err := w.GroupMetrics(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("GroupMetrics mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// g0sub is group 0 without v7 (no session, so no landing page).
func g0sub(g0 warehouse.Sums) warehouse.Sums {
	g0.N = 1
	return g0
}

func TestCustomEvents(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	resultsFixture(t, w)
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "9", Timezone: "America/New_York",
		From: "2026-06-01", To: "2026-06-02", Basis: warehouse.BasisVisitors}
	got, err := w.CustomEvents(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	want := []warehouse.CustomEventRow{{Name: "signup", TestGroup: 0, Units: 1, Events: 2}, {Name: "signup", TestGroup: 1, Units: 1, Events: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CustomEvents mismatch (-want +got):\n%s", diff)
	}
}

func TestGroupMetricsRefusesBadQueries(t *testing.T) {
	t.Parallel()
	w := &warehouse.Warehouse{}
	for name, q := range map[string]warehouse.MetricsQuery{
		"BadDate":      {Timezone: "UTC", From: "2026-6-1", To: "2026-06-02", Basis: "visitors"},
		"BadZone":      {Timezone: "Mars/Olympus", From: "2026-06-01", To: "2026-06-02", Basis: "visitors"},
		"BadBasis":     {Timezone: "UTC", From: "2026-06-01", To: "2026-06-02", Basis: "orders"},
		"BadDimension": {Timezone: "UTC", From: "2026-06-01", To: "2026-06-02", Basis: "visitors", Breakdown: []warehouse.Dimension{"os"}},
		"BadProduct":   {Timezone: "UTC", From: "2026-06-01", To: "2026-06-02", Basis: "visitors", ProductIDs: []string{"1'"}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := w.GroupMetrics(context.Background(), q); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// TestScopedRevenueNeverExceedsTheOrder: a product's revenue is its lines'
// value, scaled down when the order brought less than all its lines: an
// order of 2 × 28 refunded 50 of money (no line returned) adds 6, not 56,
// to the product's revenue, and of an order of two products whose discount
// took it from 100 of lines to 80, the product of 40 counts 32. Shipping
// above the lines stays out (truth audit F4).
func TestScopedRevenueNeverExceedsTheOrder(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	const shop, exp = 1, "11"
	order := func(id, visitor string, revenue float64, lines map[string][2]float64) warehouse.Order {
		o := warehouse.Order{ShopID: shop, ExperimentID: exp, OrderID: id, Version: 2, VisitorID: visitor, Revenue: revenue,
			Currency: "USD", CreatedAt: at("2026-06-01 12:10:00")}
		for p, l := range lines {
			o.LineProductIDs, o.LineVariantIDs = append(o.LineProductIDs, p), append(o.LineVariantIDs, p+"0")
			o.LineQuantities, o.LinePrices = append(o.LineQuantities, uint32(l[0])), append(o.LinePrices, l[1])
		}
		return o
	}
	b := &warehouse.Batch{Orders: []warehouse.Order{
		order("refunded", "v1", 6, map[string][2]float64{"8101": {2, 28}}),
		order("discounted", "v2", 80, map[string][2]float64{"8101": {1, 40}, "8102": {1, 60}}),
		order("shipped", "v3", 60, map[string][2]float64{"8101": {1, 50}}),
	}}
	for _, v := range []string{"v1", "v2", "v3"} { // each viewed the product: the scoped population
		b.Assignments = append(b.Assignments, warehouse.Assignment{ShopID: shop, ExperimentID: exp, VisitorID: v, AssignmentID: "a-" + v,
			SessionID: "s-" + v, Device: "desktop", AssignedAt: at("2026-06-01 12:00:00"), ReceivedAt: at("2026-06-01 12:00:00")})
		b.PageViews = append(b.PageViews, warehouse.PageView{ShopID: shop, ExperimentID: exp, ProductID: "8101", ViewID: "p-" + v,
			SessionID: "s-" + v, VisitorID: v, ViewedAt: at("2026-06-01 12:01:00")})
	}
	if err := w.Insert(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	rows, err := w.GroupMetrics(context.Background(), warehouse.MetricsQuery{ShopID: shop, ExperimentID: exp, Timezone: "UTC",
		From: "2026-06-01", To: "2026-06-01", Basis: warehouse.BasisVisitors, ProductIDs: []string{"8101"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Sums.Orders != 3 || math.Abs(rows[0].Sums.Revenue-(6+32+50)) > 1e-6 {
		t.Fatalf("scoped rows %+v, want 3 orders and revenue 6 + 32 + 50", rows)
	}
}
