package warehouse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/results"
	"github.com/liftab/lift/warehouse"
)

// storewideFixture: test 5 of shop 3 assigns four visitors; they send
// events carrying the test, carrying another test, and carrying none (one
// of them replayed, one on the day after the window); a visitor of another
// test only and a bot send events too.
func storewideFixture(t *testing.T, w *warehouse.Warehouse) {
	t.Helper()
	const shop = 3
	assign := func(v string, g int16, device, country, vt string, bot bool) warehouse.Assignment {
		return warehouse.Assignment{ShopID: shop, ExperimentID: "5", VisitorID: v, AssignmentID: "a-" + v, SessionID: "s-" + v,
			TestGroup: g, Device: device, Country: country, VisitorType: vt, AssignedAt: at("2026-06-01 10:00:00"),
			ReceivedAt: at("2026-06-01 10:00:00"), IsBot: bot}
	}
	event := func(exp, id, v, typ, when string, products ...string) warehouse.Event {
		return warehouse.Event{ShopID: shop, ExperimentID: exp, EventID: id, SessionID: "s-" + v, VisitorID: v,
			EventType: typ, CreatedAt: at(when), ReceivedAt: at(when), ProductIDs: products}
	}
	b := warehouse.Batch{
		Assignments: []warehouse.Assignment{
			assign("c1", 0, "desktop", "US", "new", false),
			assign("c2", 0, "mobile", "de", "returning", false),
			assign("v1", 1, "desktop", "US", "new", false),
			assign("v2", 1, "tablet", "FR", "new", false),
			assign("bot", 1, "desktop", "US", "new", true),
		},
		Events: []warehouse.Event{
			event("5", "e1", "c1", "product_viewed", "2026-06-01 10:01:00", "8101"),
			event("", "e2", "c1", "product_viewed", "2026-06-01 10:02:00", "9999"),
			event("", "e2", "c1", "product_viewed", "2026-06-01 10:02:00", "9999"), // replayed
			event("", "e3", "c1", "product_added_to_cart", "2026-06-01 10:03:00", "9999"),
			event("6", "e4", "c2", "product_added_to_cart", "2026-06-01 11:00:00", "7777"),
			event("5", "e4", "c2", "product_added_to_cart", "2026-06-01 11:00:00", "7777"), // one event, two tests
			event("5", "e5", "v1", "product_viewed", "2026-06-01 12:00:00", "8101"),
			event("", "e6", "v1", "checkout_started", "2026-06-01 12:05:00", "8101"),
			event("", "e7", "v1", "product_added_to_cart", "2026-06-03 09:00:00", "8101"), // after the window
			event("", "e8", "v2", "page_viewed", "2026-06-01 12:00:00"),
			event("", "e9", "bot", "product_viewed", "2026-06-01 12:00:00", "8101"),
			event("", "e10", "other", "product_viewed", "2026-06-01 12:00:00", "8101"),
			// c2 adds 8101 but never viewed it: outside the 8101-scoped visitors.
			event("", "e11", "c2", "product_added_to_cart", "2026-06-01 11:05:00", "8101"),
		},
		// v1 started a checkout and ordered; v2 ordered without one.
		Orders: []warehouse.Order{
			{ShopID: shop, ExperimentID: "5", OrderID: "o-v1", Version: 1, TestGroup: 1, VisitorID: "v1", Revenue: 28,
				LineProductIDs: []string{"8101"}, LineQuantities: []uint32{1}, LinePrices: []float64{28}, CreatedAt: at("2026-06-01 12:10:00")},
			{ShopID: shop, ExperimentID: "5", OrderID: "o-v2", Version: 1, TestGroup: 1, VisitorID: "v2", Revenue: 9,
				LineProductIDs: []string{"9999"}, LineQuantities: []uint32{1}, LinePrices: []float64{9}, CreatedAt: at("2026-06-01 12:20:00")},
		},
	}
	if err := w.Insert(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
}

func TestStorewideActivity(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	storewideFixture(t, w)
	q := results.MetricsQuery{ShopID: 3, ExperimentID: "5", Timezone: "UTC", From: "2026-06-01", To: "2026-06-02",
		Basis: results.BasisVisitors}
	for _, tc := range []struct {
		name     string
		products []string
		filter   results.AudienceFilter
		want     []results.ActivityRow
	}{
		{"All", nil, results.AudienceFilter{}, []results.ActivityRow{
			{TestGroup: 0, ProductViewers: 1, ProductViews: 2, CartAdders: 2, AddToCarts: 3},
			{TestGroup: 1, ProductViewers: 1, ProductViews: 1, CheckoutStarter: 1, CheckoutStarts: 1, StartersOrdered: 1}}},
		{"Desktop", nil, results.AudienceFilter{Device: "desktop"}, []results.ActivityRow{
			{TestGroup: 0, ProductViewers: 1, ProductViews: 2, CartAdders: 1, AddToCarts: 1},
			{TestGroup: 1, ProductViewers: 1, ProductViews: 1, CheckoutStarter: 1, CheckoutStarts: 1, StartersOrdered: 1}}},
		{"CountryAnyCase", nil, results.AudienceFilter{Countries: []string{"DE"}}, []results.ActivityRow{
			{TestGroup: 0, CartAdders: 1, AddToCarts: 2}}},
		{"Returning", nil, results.AudienceFilter{VisitorType: "returning"}, []results.ActivityRow{
			{TestGroup: 0, CartAdders: 1, AddToCarts: 2}}},
		// Only the visitors who viewed 8101 (c1, v1): c2's add of 8101 is
		// not theirs; v1's order has an 8101 line.
		{"Products", []string{"8101"}, results.AudienceFilter{}, []results.ActivityRow{
			{TestGroup: 0, ProductViewers: 1, ProductViews: 1},
			{TestGroup: 1, ProductViewers: 1, ProductViews: 1, CheckoutStarter: 1, CheckoutStarts: 1, StartersOrdered: 1}}},
		{"ProductsNobodyOrdered", []string{"7777"}, results.AudienceFilter{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := q
			q.ProductIDs = tc.products
			got, err := w.StorewideActivity(context.Background(), q, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDataVersionMovesWithData: the version is stable while nothing
// arrives, changes with any new row of the test (or, storewide, of the
// shop), and ignores other shops.
func TestDataVersionMovesWithData(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	ctx := context.Background()
	version := func(storewide bool) string {
		t.Helper()
		v, err := w.DataVersion(ctx, 3, "5", storewide)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	empty, emptyStore := version(false), version(true)
	storewideFixture(t, w)
	v1, s1 := version(false), version(true)
	if v1 == empty || s1 == emptyStore || v1 != version(false) {
		t.Fatalf("versions %q → %q (storewide %q → %q)", empty, v1, emptyStore, s1)
	}
	insert := func(b warehouse.Batch) {
		t.Helper()
		if err := w.Insert(ctx, &b); err != nil {
			t.Fatal(err)
		}
	}
	insert(warehouse.Batch{Events: []warehouse.Event{{ShopID: 4, ExperimentID: "5", EventID: "x", VisitorID: "c1",
		EventType: "product_viewed", CreatedAt: at("2026-06-01 13:00:00"), ReceivedAt: at("2026-06-01 13:00:00")}}})
	if version(false) != v1 || version(true) != s1 {
		t.Fatal("another shop's event moved the version")
	}
	insert(warehouse.Batch{Events: []warehouse.Event{{ShopID: 3, ExperimentID: "", EventID: "y", VisitorID: "c1",
		EventType: "product_viewed", CreatedAt: at("2026-06-01 13:00:00"), ReceivedAt: at("2026-06-01 13:00:00")}}})
	if version(false) != v1 || version(true) == s1 {
		t.Fatal("a store event outside the test must move only the storewide version")
	}
	insert(warehouse.Batch{Orders: []warehouse.Order{{ShopID: 3, ExperimentID: "5", OrderID: "o1", Version: 7,
		VisitorID: "c1", Revenue: 10, CreatedAt: at("2026-06-01 13:00:00")}}})
	v2 := version(false)
	if v2 == v1 {
		t.Fatal("an order of the test did not move the version")
	}
	// Any event of the test, even one in a 15-minute bucket that already
	// has one (the pre-aggregate's row count stays) and of a type storewide
	// ignores.
	insert(warehouse.Batch{Events: []warehouse.Event{{ShopID: 3, ExperimentID: "5", EventID: "z", SessionID: "s-c1",
		VisitorID: "c1", EventType: "page_viewed", CreatedAt: at("2026-06-01 10:01:30"), ReceivedAt: at("2026-06-01 10:01:30")}}})
	if version(false) == v2 {
		t.Fatal("an event of the test did not move the version")
	}
}

// TestAnalyticsSQLRunsOnClickHouse runs every shape of the analytics
// statements on the real ClickHouse (18.16 here) and, with LIFT_DUMP_SQL
// naming a directory, writes each with its parameters substituted for
// make chdb-check to run on current ClickHouse.
func TestAnalyticsSQLRunsOnClickHouse(t *testing.T) {
	t.Parallel()
	w := openTestWarehouse(t)
	storewideFixture(t, w)
	q := results.MetricsQuery{ShopID: 3, ExperimentID: "5", Timezone: "America/New_York", From: "2026-06-01", To: "2026-06-02",
		Basis: results.BasisVisitors}
	scoped := q
	scoped.ProductIDs = []string{"8101"}
	every := results.AudienceFilter{Countries: []string{"US"}, Device: "desktop", VisitorType: "new"}
	shapes := []struct {
		name   string
		q      results.MetricsQuery
		filter results.AudienceFilter
	}{{"storewide", q, results.AudienceFilter{}}, {"storewide-filtered", q, every}, {"storewide-scoped", scoped, every}}
	dir := os.Getenv("LIFT_DUMP_SQL")
	lit := strings.NewReplacer("{db}", "lift", "@shop", "3", "@exp", "'5'", "@tz", "'America/New_York'",
		"@from", "'2026-06-01'", "@to", "'2026-06-02'", "@products", "['8101']", "@device", "'desktop'",
		"@countries", "['US']", "@vtype", "'new'")
	write := func(name, sql string) {
		t.Helper()
		if dir == "" {
			return
		}
		if err := os.WriteFile(filepath.Join(dir, "analytics-"+name+".sql"), []byte(lit.Replace(sql)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range shapes {
		rows, err := w.StorewideActivity(context.Background(), s.q, s.filter)
		if err != nil {
			t.Fatalf("%s SQL does not run: %v", s.name, err)
		}
		if len(rows) == 0 {
			t.Fatalf("%s on the fixture answered nothing", s.name)
		}
		write(s.name, warehouse.StorewideActivitySQL(s.q, s.filter, 1))
	}
	for _, storewide := range []bool{false, true} {
		if _, err := w.DataVersion(context.Background(), 3, "5", storewide); err != nil {
			t.Fatalf("data version (storewide %v) SQL does not run: %v", storewide, err)
		}
		write(fmt.Sprintf("version-%v", storewide), warehouse.DataVersionSQL(storewide))
	}
}
