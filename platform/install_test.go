package platform_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
)

const shopDomain = "retry.myshopify.com"

// recorder replaces the client's sleep: it keeps each wait instead of
// waiting, so retry tests are exact and fast.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return nil
}

// fakeServer serves a new fake platform for the rest of the test and
// returns it with its address.
func fakeServer(t *testing.T) (*platform.Fake, string) {
	t.Helper()
	fake := platform.NewFake()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL
}

func newInstallClient(t *testing.T) (*platform.Fake, *platform.Client, *recorder) {
	t.Helper()
	fake, url := fakeServer(t)
	fake.APIKey, fake.APISecret = "key", "secret"
	c := platform.NewClient(url, "")
	c.APIKey, c.APISecret = "key", "secret"
	c.Retry = platform.Retry{Attempts: 4, Base: 100 * time.Millisecond}
	rec := &recorder{}
	c.Sleep = rec.sleep
	return fake, c, rec
}

func TestOAuthExchange(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	auth := c.AuthorizeURL(shopDomain, []string{"read_products", "write_products"}, "https://lift.example/api/auth/callback", "nonce1")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(auth)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	q := loc.Query()
	if resp.StatusCode != http.StatusFound || q.Get("state") != "nonce1" || !experiment.VerifyQueryHMAC(q, []byte("secret")) {
		t.Fatalf("authorize answered %d %s", resp.StatusCode, loc)
	}
	grant, err := c.ExchangeCode(context.Background(), shopDomain, q.Get("code"))
	if err != nil || grant.AccessToken == "" || len(grant.Scopes) != 2 {
		t.Fatalf("exchange: %+v %v", grant, err)
	}
	if _, err := c.ExchangeCode(context.Background(), shopDomain, q.Get("code")); err == nil {
		t.Fatal("a code was exchanged twice")
	}
	if _, err := c.FetchShop(context.Background(), shopDomain, "wrong"); !isStatus(err, 401) {
		t.Fatalf("wrong token: %v", err)
	}
	if _, err := c.FetchShop(context.Background(), shopDomain, grant.AccessToken); err != nil {
		t.Fatalf("issued token: %v", err)
	}
	fake.RevokeTokens(shopDomain)
	if _, err := c.FetchShop(context.Background(), shopDomain, grant.AccessToken); !isStatus(err, 401) {
		t.Fatalf("revoked token: %v", err)
	}
}

func isStatus(err error, status int) bool {
	var pe *platform.Error
	return errors.As(err, &pe) && pe.Status == status
}

func TestGraphQLRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		setup     func(f *platform.Fake)
		wantErr   int // status of the final error, 0 for success
		attempts  int
		wantWaits []time.Duration
	}{
		{"5xxThen429ThenOK", func(f *platform.Fake) { f.FailNext(shopDomain, "Shop", 503, 429) }, 0, 3,
			[]time.Duration{100 * time.Millisecond, time.Second}}, // backoff, then Retry-After: 1
		{"ThrottledWaitsForTheBucket", func(f *platform.Fake) { f.ThrottleNext(shopDomain, 2) }, 0, 3,
			// Shop costs 1 (one object), available 0, restore 50/s: 20 ms before each retry.
			[]time.Duration{20 * time.Millisecond, 20 * time.Millisecond}},
		{"GivesUpAfterAttempts", func(f *platform.Fake) { f.FailNext(shopDomain, "Shop", 500, 502, 503, 504, 500) }, 504, 4,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"ClientErrorNotRetried", func(f *platform.Fake) { f.Fail(shopDomain, "Shop", 403) }, 403, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake, c, rec := newInstallClient(t)
			tc.setup(fake)
			_, err := c.FetchShop(context.Background(), shopDomain, "")
			if (tc.wantErr == 0) != (err == nil) || (tc.wantErr != 0 && !isStatus(err, tc.wantErr)) {
				t.Fatalf("got %v, want status %d", err, tc.wantErr)
			}
			if got := fake.Attempts(shopDomain, "Shop"); got != tc.attempts {
				t.Fatalf("attempts %d, want %d", got, tc.attempts)
			}
			if tc.wantWaits != nil && !sameWaits(rec.waits, tc.wantWaits) {
				t.Fatalf("waits %v, want %v", rec.waits, tc.wantWaits)
			}
		})
	}
}

// sameWaits compares within 5%: bucket waits depend on elapsed time.
func sameWaits(got, want []time.Duration) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if d := got[i] - want[i]; d > want[i]/20 || -d > want[i]/20 {
			return false
		}
	}
	return true
}

func TestFetchCatalogPagesAtTheProductRate(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	// A clock only the client's waits move: each product query's slot is
	// the clock when its wait returns, so the spacing is exact, not a
	// measurement of the machine.
	var mu sync.Mutex
	clock := time.Unix(1_700_000_000, 0)
	var slots []time.Time
	c.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	c.Sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(d)
		slots = append(slots, clock)
		return nil
	}
	c.ProductInterval = 40 * time.Millisecond
	var products []experiment.CatalogProduct
	for i, id := range []string{"1", "2", "3", "4", "5"} {
		products = append(products, experiment.CatalogProduct{Product: experiment.Product{ID: "gid://shopify/Product/" + id, Title: "P" + id},
			Variants: []experiment.Variant{{ID: "gid://shopify/ProductVariant/" + id, Price: "10.00", Cost: map[bool]string{true: "4.00"}[i%2 == 0]}}})
	}
	fake.SetShop(shopDomain, experiment.ShopInfo{Name: "R", Currency: "EUR", Timezone: "UTC"}, experiment.CatalogSnapshot{Products: products,
		Collections: []experiment.Collection{{ID: "gid://shopify/Collection/1", Title: "All", ProductIDs: []string{"gid://shopify/Product/1"}}},
		Themes:      []experiment.Theme{{ID: "gid://shopify/OnlineStoreTheme/1", Name: "Dawn", Role: "main"}}})
	snap, err := c.FetchCatalog(context.Background(), shopDomain, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Products) != 5 || snap.Products[0].Variants[0].Cost != "4.00" || snap.Products[1].Variants[0].Cost != "" ||
		len(snap.Collections) != 1 || snap.Themes[0].Role != "main" {
		t.Fatalf("snapshot %+v", snap)
	}
	if n := len(fake.ProductQueryTimes(shopDomain)); n != 3 { // pages of 2
		t.Fatalf("%d product queries, want 3", n)
	}
	if len(slots) != 3 {
		t.Fatalf("%d waits before product queries, want 3", len(slots))
	}
	for i := 1; i < len(slots); i++ {
		if gap := slots[i].Sub(slots[i-1]); gap != 40*time.Millisecond {
			t.Fatalf("product query slots %v apart, want the 40 ms interval", gap)
		}
	}
}

func TestFetchCatalogReadsEveryPage(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	c.ProductInterval = time.Millisecond
	v := func(id string) experiment.Variant {
		return experiment.Variant{ID: "gid://shopify/ProductVariant/" + id, Title: "V" + id, Price: "5.00"}
	}
	col := func(id string, products ...string) experiment.Collection {
		c := experiment.Collection{ID: "gid://shopify/Collection/" + id, Title: "C" + id}
		for _, p := range products {
			c.ProductIDs = append(c.ProductIDs, "gid://shopify/Product/"+p)
		}
		return c
	}
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{
		Products: []experiment.CatalogProduct{ // P1's variants span the first two pages of 2
			{Product: experiment.Product{ID: "gid://shopify/Product/1", Title: "P1"}, Variants: []experiment.Variant{v("11"), v("12"), v("13")}},
			{Product: experiment.Product{ID: "gid://shopify/Product/2", Title: "P2"}, Variants: []experiment.Variant{v("21")}}},
		Collections: []experiment.Collection{col("1", "1", "2", "3", "4", "5"), col("2"), col("3", "2")},
		Themes:      []experiment.Theme{{ID: "gid://shopify/OnlineStoreTheme/1", Name: "Dawn", Role: "main"}}})
	snap, err := c.FetchCatalog(context.Background(), shopDomain, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Products) != 2 || len(snap.Products[0].Variants) != 3 || snap.Products[0].Variants[2].ID != "gid://shopify/ProductVariant/13" ||
		snap.Products[0].Variants[2].ProductID != "gid://shopify/Product/1" || snap.Products[1].Title != "P2" || len(snap.Products[1].Variants) != 1 {
		t.Fatalf("products %+v", snap.Products)
	}
	if len(snap.Collections) != 3 || len(snap.Collections[0].ProductIDs) != 5 || snap.Collections[0].ProductIDs[4] != "gid://shopify/Product/5" ||
		len(snap.Collections[1].ProductIDs) != 0 || len(snap.Collections[2].ProductIDs) != 1 || len(snap.Themes) != 1 {
		t.Fatalf("collections %+v, themes %+v", snap.Collections, snap.Themes)
	}
	for op, want := range map[string]int{"Products": 2, "Collections": 2, "CollectionProducts": 2, "Themes": 1} {
		if got := fake.Calls(shopDomain, op); got != want {
			t.Errorf("%s answered %d times, want %d", op, got, want)
		}
	}
}

// TestFetchCatalogLeavesOutLiftsDuplicates: the variants Lift duplicated
// for a live price test are the shop's variants on the platform, but a
// catalog read (a reinstall, a refresh) must not mirror them as the
// merchant's, paged or in bulk.
func TestFetchCatalogLeavesOutLiftsDuplicates(t *testing.T) {
	t.Parallel()
	for _, bulk := range []bool{false, true} {
		fake, c, _ := newInstallClient(t)
		c.ProductInterval, c.BulkPollInterval = time.Millisecond, time.Millisecond
		if bulk {
			c.BulkThreshold = 1
		}
		fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{Products: []experiment.CatalogProduct{
			{Product: experiment.Product{ID: "gid://shopify/Product/1", Title: "P1"}, Variants: []experiment.Variant{
				{ID: "gid://shopify/ProductVariant/1", Price: "28.00"}, {ID: "gid://shopify/ProductVariant/2", Price: "30.00"}}},
			{Product: experiment.Product{ID: "gid://shopify/Product/2", Title: "P2"}, Variants: []experiment.Variant{
				{ID: "gid://shopify/ProductVariant/3", Price: "9.00"}}}}})
		if err := c.PrepareLaunch(context.Background(), &experiment.Shop{Domain: shopDomain}, priceTest()); err != nil {
			t.Fatal(err)
		}
		if len(fake.Duplicates(shopDomain, "gid://shopify/ProductVariant/1")) != 1 {
			t.Fatal("the launch made no duplicate")
		}
		snap, err := c.FetchCatalog(context.Background(), shopDomain, "")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range snap.Products {
			for _, v := range p.Variants {
				ids = append(ids, v.ID)
			}
		}
		if want := []string{"gid://shopify/ProductVariant/1", "gid://shopify/ProductVariant/2", "gid://shopify/ProductVariant/3"}; !slices.Equal(ids, want) {
			t.Fatalf("bulk %v: variants %v, want %v", bulk, ids, want)
		}
	}
}

func TestCleanupRemovesLiftResources(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	c.Token = ""
	shop := &experiment.Shop{Domain: shopDomain}
	price := priceTest()
	if err := c.PrepareLaunch(context.Background(), shop, price); err != nil {
		t.Fatal(err)
	}
	// The merchant's own discounts and customizations fill the first page
	// of their kinds (the fake's pages hold 2): they carry no Lift
	// metafield and must stay, and Lift's behind them must go.
	fake.PutMerchantResources(shopDomain)
	fake.PutMerchantResources(shopDomain)
	for range 3 { // more of a kind than a page holds: Cleanup reads again
		fake.PutLiftResources(shopDomain)
	}
	before := fake.LiftResources(shopDomain)
	rep, err := c.Cleanup(context.Background(), shopDomain, "")
	if err != nil {
		t.Fatal(err)
	}
	if before < 14 || fake.LiftResources(shopDomain) != 0 {
		t.Fatalf("before %d, after %d (%+v)", before, fake.LiftResources(shopDomain), rep)
	}
	// 3 script tags, metafields, delivery and payment customizations; a
	// duplicate variant and a cart transform from the launch.
	if rep.ScriptTags != 3 || rep.Metafields != 3 || rep.DuplicateVariants != 1 || rep.Functions != 7 {
		t.Fatalf("report %+v", rep)
	}
	if n := fake.Calls(shopDomain, "LiftResources"); n != 4 { // pages of 2 shared with the merchant's, then none of Lift's
		t.Fatalf("%d reads of Lift's resources, want 4", n)
	}
	if n := fake.MerchantResources(shopDomain); n != 6 {
		t.Fatalf("the merchant's discounts and customizations: %d left, want all 6", n)
	}
}

func TestFetchCatalogInBulkWaitsItsTurn(t *testing.T) {
	t.Parallel()
	// Someone else's export is running, or winding down after a cancel
	// (CANCELING holds the slot too): Lift's must queue behind it.
	for name, foreign := range map[string]func(*platform.Fake){
		"running":   func(f *platform.Fake) { f.StartForeignBulk(shopDomain, 3) },
		"canceling": func(f *platform.Fake) { f.CancelForeignBulk(shopDomain, 3) },
	} {
		t.Run(name, func(t *testing.T) { t.Parallel(); bulkWaitsItsTurn(t, foreign) })
	}
}

func bulkWaitsItsTurn(t *testing.T, foreign func(*platform.Fake)) {
	fake, c, rec := newInstallClient(t)
	c.BulkThreshold, c.BulkPollInterval, c.ProductInterval = 2, 5*time.Millisecond, time.Millisecond
	fake.BulkPolls = 2
	var products []experiment.CatalogProduct
	for _, id := range []string{"1", "2", "3"} {
		products = append(products, experiment.CatalogProduct{Product: experiment.Product{ID: "gid://shopify/Product/" + id, Title: "P" + id},
			Variants: []experiment.Variant{{ID: "gid://shopify/ProductVariant/" + id, Price: "9.50", Cost: "3.25"},
				{ID: "gid://shopify/ProductVariant/" + id + "0", Price: "12.00"}}})
	}
	fake.SetShop(shopDomain, experiment.ShopInfo{Currency: "USD"}, experiment.CatalogSnapshot{Products: products})
	foreign(fake)
	snap, err := c.FetchCatalog(context.Background(), shopDomain, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Products) != 3 || len(snap.Products[2].Variants) != 2 || snap.Products[2].Variants[0].Cost != "3.25" ||
		snap.Products[2].Variants[1].Cost != "" || snap.Products[2].Variants[0].ProductID != "gid://shopify/Product/3" {
		t.Fatalf("bulk snapshot %+v", snap.Products)
	}
	if fake.Calls(shopDomain, "Products") != 0 || fake.Calls(shopDomain, "BulkOperationRunQuery") != 1 {
		t.Fatalf("pages %d, bulk runs %d", fake.Calls(shopDomain, "Products"), fake.Calls(shopDomain, "BulkOperationRunQuery"))
	}
	// 4 polls until the foreign operation is done, then 3 until ours is.
	if got := fake.Calls(shopDomain, "CurrentBulkOperation"); got != 4+3 {
		t.Fatalf("%d polls of the current bulk operation, want 7", got)
	}
	polls := 0
	for _, w := range rec.waits {
		if w == 5*time.Millisecond {
			polls++
		}
	}
	if polls != 6 { // a wait after each RUNNING answer
		t.Fatalf("%d poll waits (%v), want 6", polls, rec.waits)
	}
}

// TestSubscribeWebhookAgain: the platform refuses a second subscription of
// a topic to the same address; an install run again reads the first one's
// id instead of failing. Another refusal stays an error.
func TestSubscribeWebhookAgain(t *testing.T) {
	t.Parallel()
	fake, c, _ := newInstallClient(t)
	const topic, url = "ORDERS_CREATE", "https://lift.example/api/webhooks"
	first, err := c.SubscribeWebhook(context.Background(), shopDomain, "", topic, url)
	if err != nil || first == "" {
		t.Fatalf("first subscription %q (%v)", first, err)
	}
	again, err := c.SubscribeWebhook(context.Background(), shopDomain, "", topic, url)
	if err != nil || again != first {
		t.Fatalf("subscribing again = %q (%v), want the first id %q", again, err, first)
	}
	if n := fake.Calls(shopDomain, "WebhookSubscriptions"); n != 1 {
		t.Fatalf("%d lookups of the existing subscription, want 1", n)
	}
	if _, err := c.SubscribeWebhook(context.Background(), shopDomain, "", topic, ""); !isStatus(err, http.StatusUnprocessableEntity) {
		t.Fatalf("a subscription without an address = %v, want the platform's refusal", err)
	}
}
