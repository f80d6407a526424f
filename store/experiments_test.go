package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

func testPool(t *testing.T) (*pgxpool.Pool, int64) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, lifttest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	var shopID int64
	if err := pool.QueryRow(ctx, `INSERT INTO shops (domain, name) VALUES ('s.myshopify.com', 'S') RETURNING id`).Scan(&shopID); err != nil {
		t.Fatal(err)
	}
	return pool, shopID
}

func TestCatalogImportAndLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, shopID := testPool(t)
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	// Importing twice replaces, never duplicates.
	for range 2 {
		if err := store.ImportCatalog(ctx, pool, shopID, f); err != nil {
			t.Fatal(err)
		}
	}
	v, err := store.Catalog{Q: pool}.Lookup(ctx, shopID, experiment.CatalogRefs{
		Products: []string{"gid://shopify/Product/8101", "gid://shopify/Product/1"},
		Variants: []string{"gid://shopify/ProductVariant/44001"},
		Zones:    []string{"gid://shopify/DeliveryZone/501"},
		Markets:  []string{"gid://shopify/Market/602"},
		Themes:   []string{"gid://shopify/OnlineStoreTheme/1202"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Products) != 1 || v.Products["gid://shopify/Product/8101"].Title != "Organic Cotton Tee" {
		t.Fatalf("products = %+v", v.Products)
	}
	want := experiment.Variant{ID: "gid://shopify/ProductVariant/44001", ProductID: "gid://shopify/Product/8101",
		Title: "S", SKU: "ORGANI-S", Price: "28.00", Cost: "9.50"}
	if diff := cmp.Diff(want, v.Variants[want.ID]); diff != "" {
		t.Fatalf("variant mismatch (-want +got):\n%s", diff)
	}
	// A product's variants are looked up by the product, for a discount
	// that names no variant (experiment's "keeps every price above zero").
	byProduct, err := store.Catalog{Q: pool}.Lookup(ctx, shopID, experiment.CatalogRefs{
		ProductVariants: []string{"gid://shopify/Product/8102", "gid://shopify/Product/1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var sweater []string
	for id, x := range byProduct.Variants {
		if x.ProductID != "gid://shopify/Product/8102" || x.Price != "98.00" {
			t.Fatalf("variant %s = %+v, want one of the sweater's at 98.00", id, x)
		}
		sweater = append(sweater, id)
	}
	slices.Sort(sweater)
	if want := []string{"gid://shopify/ProductVariant/44005", "gid://shopify/ProductVariant/44006", "gid://shopify/ProductVariant/44007"}; !slices.Equal(sweater, want) {
		t.Fatalf("variants of the sweater = %v, want %v", sweater, want)
	}
	if z := v.Zones["gid://shopify/DeliveryZone/501"]; len(z.Rates) != 2 || z.Rates[0].Price != "6.95" || !z.LiftRates {
		t.Fatalf("zone = %+v", z)
	}
	if m := v.Markets["gid://shopify/Market/602"]; m.Currency != "EUR" || len(m.Countries) != 3 {
		t.Fatalf("market = %+v", m)
	}
	if th := v.Themes["gid://shopify/OnlineStoreTheme/1202"]; len(th.Templates) == 0 {
		t.Fatalf("theme = %+v", th)
	}
	for _, bad := range []string{
		`{"currency":"USD","products":[{"id":"nope"}]}`,
		`{"currency":"USD","products":[{"id":"gid://shopify/Product/1","variants":[{"id":"gid://shopify/ProductVariant/1","price":"1.00"}]},{"id":"gid://shopify/Product/1"}]}`,
		`{"currency":"USD","products":[{"id":"gid://shopify/Product/1","variants":[{"id":"gid://shopify/ProductVariant/1","price":"cheap"}]}]}`,
		`{"currency":"USD","markets":[{"id":"gid://shopify/Market/1","currency":"EURO"}]}`,
		`{"currency":"USD","colour":"red"}`,
		`{"currency":"USD","delivery_zones":[{"id":"gid://shopify/DeliveryZone/1","name":"World","rest_of_world":true,"countries":["US"]}]}`,
	} {
		if _, err := store.ParseCatalog([]byte(bad)); err == nil {
			t.Fatalf("a bad catalog was accepted: %s", bad)
		}
	}
}

func newTest(shopID int64, created time.Time) *experiment.Test {
	return &experiment.Test{ShopID: shopID, Type: experiment.TypeURLRedirect, Status: experiment.StatusDraft,
		Name: "t", TrafficAllocation: 100, AssignmentVersion: 1,
		Shared:    map[string]json.RawMessage{"url_redirect": json.RawMessage(`{"source_path":"/"}`)},
		Groups:    []experiment.Group{{Index: 0, Name: "A", Split: 50, Content: json.RawMessage(`{}`)}, {Index: 1, Name: "B", Split: 50, Content: json.RawMessage(`{"destination":"/b"}`)}},
		CreatedAt: created, UpdatedAt: created,
		// Options other than the defaults, so the round trip proves they are kept.
		Analysis: experiment.AnalysisOptions{Sequential: true, CUPED: true, Winsorize: 0.95,
			Correction: experiment.CorrectionHolm, Prior: &experiment.Prior{Mean: 0.01, StdDev: 0.1}},
		Guardrails:  []experiment.Guardrail{{Metric: "conversion_rate", MaxHarm: 0.02}},
		PauseReason: "guardrail conversion_rate breached"}
}

func TestTestsRoundTripListAndDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, shopID := testPool(t)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ids []int64
	for i := range 5 {
		tt := newTest(shopID, base.Add(time.Duration(i)*time.Minute))
		if i == 4 {
			start, end := base.Add(time.Hour), base.Add(48*time.Hour)
			tt.Schedule = &experiment.Schedule{StartAt: &start, EndAt: &end}
		}
		if err := store.CreateTest(ctx, pool, tt); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tt.ID)
	}
	got, err := store.FindTestByID(ctx, pool, shopID, ids[4], false)
	if err != nil {
		t.Fatal(err)
	}
	want := newTest(shopID, base.Add(4*time.Minute))
	want.ID = ids[4]
	start, end := base.Add(time.Hour), base.Add(48*time.Hour)
	want.Schedule = &experiment.Schedule{StartAt: &start, EndAt: &end}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("round trip mismatch (-want +got):\n%s", diff)
	}
	if _, err := store.FindTestByID(ctx, pool, shopID+1, ids[0], false); err == nil {
		t.Fatal("another shop's test was found")
	} else if e, ok := experiment.AsError(err); !ok || e.Code != "experiment_not_found" {
		t.Fatalf("got %v", err)
	}

	// Newest first, two per page, continuing from the last one seen.
	var seen []int64
	f := experiment.Filter{Limit: 2}
	for {
		page, more, err := store.FindTests(ctx, pool, shopID, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page {
			seen = append(seen, x.ID)
		}
		if !more {
			break
		}
		last := page[len(page)-1]
		f.After = &experiment.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if diff := cmp.Diff([]int64{ids[4], ids[3], ids[2], ids[1], ids[0]}, seen); diff != "" {
		t.Fatalf("order mismatch (-want +got):\n%s", diff)
	}
	yes := true
	sched, _, err := store.FindTests(ctx, pool, shopID, experiment.Filter{Scheduled: &yes, Limit: 10})
	if err != nil || len(sched) != 1 || sched[0].ID != ids[4] {
		t.Fatalf("scheduled = %v, %v", sched, err)
	}

	db, err := store.Open(ctx, store.Config{URL: pool.Config().ConnString()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	due, err := db.FindDueActions(ctx, base.Add(2*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]experiment.DueAction{{ShopID: shopID, TestID: ids[4], Action: experiment.ActionStart, At: start}}, due,
		cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Fatalf("due mismatch (-want +got):\n%s", diff)
	}
}
