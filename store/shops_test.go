package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/migrations"
)

// TestShopDomainsAreOneSpelling: a domain in any case, with spaces or a
// trailing dot, is the same shop for creation and lookup.
func TestShopDomainsAreOneSpelling(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := context.Background()
	s, err := db.CreateShop(ctx, experiment.Shop{Domain: " Case-Shop.MyShopify.com. "})
	if err != nil {
		t.Fatal(err)
	}
	if s.Domain != "case-shop.myshopify.com" {
		t.Fatalf("stored domain %q, want case-shop.myshopify.com", s.Domain)
	}
	_, err = db.CreateShop(ctx, experiment.Shop{Domain: "case-shop.myshopify.com"})
	wantCode(t, err, "shop_exists")
	_, err = db.CreateShop(ctx, experiment.Shop{Domain: "CASE-SHOP.myshopify.com"})
	wantCode(t, err, "shop_exists")
	for _, spelling := range []string{"case-shop.myshopify.com", "Case-Shop.MyShopify.com", "case-shop.myshopify.com.", "  CASE-SHOP.MYSHOPIFY.COM"} {
		got, err := db.FindShopByDomain(ctx, spelling)
		if err != nil || got.ID != s.ID {
			t.Errorf("FindShopByDomain(%q) = %v, %v; want shop %d", spelling, got, err, s.ID)
		}
	}
}

// TestShopDomainMigration rewrites rows stored before domains were
// normalised, leaving a spelling alone when its normalised form is taken.
func TestShopDomainMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, lifttest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO shops (domain, name, timezone, currency, plan, features, installed_at, created_at, updated_at)
		SELECT d, d, 'UTC', 'USD', 'growth', '{}', now(), now(), now()
		FROM unnest(ARRAY['Old-Shop.myshopify.com.', 'taken.myshopify.com', 'Taken.myshopify.com', 'Twin.myshopify.com', 'TWIN.myshopify.com']) AS d`); err != nil {
		t.Fatal(err)
	}
	var sql string
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if m.Name == "shop_domains_normalized" {
			sql = m.SQL
		}
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT domain FROM shops WHERE domain ILIKE ANY (ARRAY['old-shop%', 'taken%', 'twin%']) ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"old-shop.myshopify.com", "taken.myshopify.com", "Taken.myshopify.com", "twin.myshopify.com", "TWIN.myshopify.com"}
	if len(got) != len(want) {
		t.Fatalf("domains %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("domains %v, want %v", got, want)
		}
	}
}
