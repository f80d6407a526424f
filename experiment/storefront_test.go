package experiment_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/experimenttest"
)

// TestStorefrontConfig: only active tests, oldest first, more than one page,
// and only what a browser applies.
func TestStorefrontConfig(t *testing.T) {
	t.Parallel()
	repo := experimenttest.NewRepo(time.Now)
	svc := experiment.NewService(experiment.ServiceConfig{Repository: repo})
	shop, err := repo.AddShop(experiment.Shop{Domain: "config.example", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := repo.AddShop(experiment.Shop{Domain: "other.example"})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	price := json.RawMessage(`{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/1","price":{"amount":"9.00","currency":"USD"}}]}`)
	tests := []experiment.Test{
		{ShopID: shop.ID, Type: experiment.TypePrice, Status: experiment.StatusActive, Name: "secret plan",
			Shared: map[string]json.RawMessage{"price": json.RawMessage(`{"product_ids":["gid://shopify/Product/7"]}`)},
			Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Cheaper", Split: 50, Content: price}}},
		{ShopID: shop.ID, Type: experiment.TypeShipping, Status: experiment.StatusActive,
			Shared: map[string]json.RawMessage{"shipping": json.RawMessage(`{"zone_ids":["z"]}`)},
			Groups: []experiment.Group{{Index: 0, Split: 30}, {Index: 1, Split: 70, Content: json.RawMessage(`{"rates":[]}`)}}},
		{ShopID: shop.ID, Type: experiment.TypeCombined, Status: experiment.StatusActive, Audience: json.RawMessage(`{"countries":["US"]}`),
			Groups: []experiment.Group{{Index: 0, Split: 50}, {Index: 1, Split: 50,
				Content: json.RawMessage(`{"theme":{"theme_id":"gid://shopify/Theme/2"},"offer":{"offers":[]}}`)}}},
		{ShopID: shop.ID, Type: experiment.TypePrice, Status: experiment.StatusDraft, Name: "draft"},
		{ShopID: shop.ID, Type: experiment.TypePrice, Status: experiment.StatusPaused, Name: "paused"},
		{ShopID: other.ID, Type: experiment.TypePrice, Status: experiment.StatusActive, Name: "other shop"},
	}
	// Enough extra active tests to need a second page.
	for i := 0; i < 100; i++ {
		tests = append(tests, experiment.Test{ShopID: shop.ID, Type: experiment.TypeTheme, Status: experiment.StatusActive,
			Groups: []experiment.Group{{Index: 0, Split: 50}, {Index: 1, Split: 50}}})
	}
	var ids []int64
	for i := range tests {
		tests[i].CreatedAt = base.Add(time.Duration(i) * time.Minute)
		tests[i].TrafficAllocation = 100
		_, err := repo.Write(context.Background(), experiment.WriteMeta{ShopID: tests[i].ShopID, Action: "test"},
			func(ctx context.Context, tx experiment.Tx) (experiment.WriteResult, error) {
				return experiment.WriteResult{}, tx.CreateTest(ctx, &tests[i])
			})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tests[i].ID)
	}
	cfg, err := svc.StorefrontConfig(context.Background(), shop)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Shop != "config.example" || cfg.Currency != "USD" || len(cfg.Tests) != 103 {
		t.Fatalf("config = %s %s with %d tests, want 103", cfg.Shop, cfg.Currency, len(cfg.Tests))
	}
	b, _ := json.Marshal(cfg)
	for _, leak := range []string{"secret plan", "draft", "paused", "other shop", "rates", "offers", "zone_ids"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("config leaks %q: %s", leak, b[:200])
		}
	}
	for _, c := range []struct {
		i           int
		wantID      int64
		wantChanges string
		wantScope   string
		wantAud     string
	}{
		{0, ids[0], string(price), `{"price":{"product_ids":["gid://shopify/Product/7"]}}`, "null"},
		{1, ids[1], "null", `{}`, "null"},
		{2, ids[2], `{"theme":{"theme_id":"gid://shopify/Theme/2"}}`, `{}`, `{"countries":["US"]}`},
		{102, ids[len(ids)-1], "null", `{}`, "null"},
	} {
		got := cfg.Tests[c.i]
		scope, _ := json.Marshal(got.Scope)
		if got.ID != itoa(c.wantID) || string(got.Groups[1].Changes) != c.wantChanges || string(scope) != c.wantScope ||
			string(got.Audience) != c.wantAud || got.TrafficAllocation != 100 {
			t.Errorf("test %d = id %s changes %s scope %s audience %s, want %d %s %s %s", c.i, got.ID,
				got.Groups[1].Changes, scope, got.Audience, c.wantID, c.wantChanges, c.wantScope, c.wantAud)
		}
	}
	if g := cfg.Tests[1].Groups; g[0].Weight != 30 || g[1].Weight != 70 {
		t.Errorf("weights = %d/%d, want 30/70", g[0].Weight, g[1].Weight)
	}
	// Only the shipping test asks the tracker to put assignments on lines.
	for i, want := range []bool{false, true, false} {
		if got := cfg.Tests[i].LineAssignments; got != want {
			t.Errorf("test %d line_assignments = %v, want %v", i, got, want)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestStorefrontPreview: a preview link's config is its test and group, in
// the statuses a preview can show, alone (no running test to enter), and
// nothing for a forged, expired or foreign link (browser audit 2, B2-1).
func TestStorefrontPreview(t *testing.T) {
	t.Parallel()
	clk := &experimenttest.Clock{}
	clk.Set(experimenttest.Epoch)
	secret := []byte("preview-secret")
	repo := experimenttest.NewRepo(clk.Now)
	svc := experiment.NewService(experiment.ServiceConfig{Repository: repo, Now: clk.Now, PreviewSecret: secret})
	shop, err := repo.AddShop(experiment.Shop{Domain: "preview.example", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := repo.AddShop(experiment.Shop{Domain: "other.example"})
	if err != nil {
		t.Fatal(err)
	}
	put := func(status experiment.Status) int64 {
		x := experiment.Test{ShopID: shop.ID, Type: experiment.TypeVisualEditor, Status: status, TrafficAllocation: 100,
			Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50},
				{Index: 1, Name: "Red", Split: 50, Content: json.RawMessage(`{"custom_css":"h1{color:red}"}`)}}}
		_, err := repo.Write(context.Background(), experiment.WriteMeta{ShopID: shop.ID, Action: "test"},
			func(ctx context.Context, tx experiment.Tx) (experiment.WriteResult, error) {
				return experiment.WriteResult{}, tx.CreateTest(ctx, &x)
			})
		if err != nil {
			t.Fatal(err)
		}
		return x.ID
	}
	exp := experimenttest.Epoch.Add(time.Hour)
	for _, st := range []experiment.Status{experiment.StatusDraft, experiment.StatusPreview, experiment.StatusActive, experiment.StatusPaused} {
		id := put(st)
		cfg, err := svc.StorefrontPreview(context.Background(), shop, experiment.SignPreview(secret, id, 1, exp))
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if len(cfg.Tests) != 0 || cfg.Preview == nil || cfg.Preview.Group != 1 || cfg.Preview.Test.ID != strconv.FormatInt(id, 10) ||
			!strings.Contains(string(cfg.Preview.Test.Groups[1].Changes), "color:red") {
			t.Fatalf("%s: preview config %+v", st, cfg)
		}
	}
	ended, draft := put(experiment.StatusEnded), put(experiment.StatusDraft)
	cases := []struct {
		name  string
		shop  *experiment.Shop
		token string
		code  string
	}{
		{"forged", shop, experiment.SignPreview([]byte("other secret"), draft, 1, exp), "invalid_preview"},
		{"garbage", shop, "not-a-token", "invalid_preview"},
		{"expired", shop, experiment.SignPreview(secret, draft, 1, experimenttest.Epoch.Add(-time.Second)), "invalid_preview"},
		{"another shop's test", other, experiment.SignPreview(secret, draft, 1, exp), "experiment_not_found"},
		{"ended", shop, experiment.SignPreview(secret, ended, 1, exp), "experiment_not_found"},
		{"no such group", shop, experiment.SignPreview(secret, draft, 7, exp), "experiment_not_found"},
	}
	for _, c := range cases {
		_, err := svc.StorefrontPreview(context.Background(), c.shop, c.token)
		if e, ok := experiment.AsError(err); !ok || e.Code != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
}
