package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/store"
)

// installHarness drives the install lifecycle over real HTTP: Lift's
// server, the built-in fake platform it talks to, and a browser that does
// not follow redirects, so each hop is checked.
type installHarness struct {
	*server
	fake    *platform.Fake
	domain  string
	browser *http.Client
	key     []byte
}

const installPublicURL = "https://lift.test"

func newInstallHarness(t *testing.T, opts ...option) *installHarness {
	key := bytes.Repeat([]byte{7}, 32)
	s := newServer(t, append([]option{func(c *config.Config) {
		c.HTTP.PublicURL = installPublicURL
		c.Platform.APIKey, c.Platform.APISecret = "app-key", "app-secret"
		c.Platform.WebhookSecret, c.SigningSecret = "install-webhooks", "install-signing"
		c.Platform.TokenKey = base64.StdEncoding.EncodeToString(key)
		c.Admin.APIKey = "install-admin"
	}}, opts...)...)
	s.app.PlatformClient.ProductInterval = 10 * time.Millisecond
	h := &installHarness{server: s, fake: s.app.fakePlatform.Handler.(*platform.Fake), key: key,
		domain:  lifttest.Name("inst-") + ".myshopify.com",
		browser: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	var products []experiment.CatalogProduct
	for i, id := range []string{"101", "102", "103"} {
		products = append(products, experiment.CatalogProduct{
			Product: experiment.Product{ID: "gid://shopify/Product/" + id, Title: "Product " + id, Handle: "p-" + id},
			Variants: []experiment.Variant{{ID: "gid://shopify/ProductVariant/" + id, Title: "Default", SKU: "SKU-" + id,
				Price: []string{"19.90", "25.00", "40.00"}[i], Cost: []string{"7.50", "10.00", "16.25"}[i]}}})
	}
	h.fake.SetShop(h.domain, experiment.ShopInfo{Name: "Installed Shop", Currency: "EUR", Timezone: "Europe/Berlin"},
		experiment.CatalogSnapshot{Products: products,
			Collections: []experiment.Collection{{ID: "gid://shopify/Collection/9", Title: "All", ProductIDs: []string{"gid://shopify/Product/101"}}},
			Themes:      []experiment.Theme{{ID: "gid://shopify/OnlineStoreTheme/5", Name: "Dawn", Role: "main"}}})
	return h
}

// get fetches u (a full URL; Lift's public URL is served by the test
// server) without following redirects.
func (h *installHarness) get(u string) (int, string, map[string]any) {
	h.t.Helper()
	u = strings.Replace(u, installPublicURL, h.url, 1)
	res, err := h.browser.Get(u)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	return res.StatusCode, res.Header.Get("Location"), body
}

// authorize runs /api/auth and the platform's approval, and returns the
// callback URL the platform redirects the merchant to, and the state.
func (h *installHarness) authorize() (*url.URL, string) {
	h.t.Helper()
	status, loc, _ := h.get(h.url + "/api/auth?shop=" + url.QueryEscape(strings.ToUpper(h.domain)))
	au, _ := url.Parse(loc)
	q := au.Query()
	if status != http.StatusFound || !strings.HasSuffix(au.Path, "/admin/shops/"+h.domain+"/oauth/authorize") ||
		q.Get("client_id") != "app-key" || q.Get("redirect_uri") != installPublicURL+"/api/auth/callback" ||
		!strings.Contains(q.Get("scope"), "read_products") || q.Get("state") == "" {
		h.t.Fatalf("/api/auth = %d %s", status, loc)
	}
	if n := h.countWhere("SELECT count(*) FROM install_states WHERE nonce = $1", q.Get("state")); n != 1 {
		h.t.Fatalf("%d stored states for the nonce, want 1", n)
	}
	status, cb, _ := h.get(loc)
	cu, _ := url.Parse(cb)
	if status != http.StatusFound || cu.Query().Get("code") == "" {
		h.t.Fatalf("platform authorize = %d %s", status, cb)
	}
	return cu, q.Get("state")
}

func (h *installHarness) wantRefused(u string, status int) {
	h.t.Helper()
	got, _, body := h.get(u)
	if got != status || body["status"] != "error" || body["message"] == "" {
		h.t.Fatalf("%s = %d %v, want %d in the session envelope", u, got, body, status)
	}
}

func (h *installHarness) sealedToken() []byte {
	h.t.Helper()
	conn, err := pgx.Connect(context.Background(), h.cfg.Postgres.URL)
	if err != nil {
		h.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var sealed []byte
	if err := conn.QueryRow(context.Background(), "SELECT access_token_sealed FROM shops WHERE domain = $1", h.domain).Scan(&sealed); err != nil {
		h.t.Fatal(err)
	}
	return sealed
}

func (h *installHarness) install() *experiment.Shop {
	h.t.Helper()
	cb, _ := h.authorize()
	status, loc, body := h.get(cb.String())
	if status != http.StatusFound || loc != installPublicURL+"/app/?shop="+url.QueryEscape(h.domain) {
		h.t.Fatalf("callback = %d %s %v", status, loc, body)
	}
	shop, err := h.app.DB.FindShopByDomain(context.Background(), h.domain)
	if err != nil || !shop.Installed() {
		h.t.Fatalf("shop after install: %+v %v", shop, err)
	}
	return shop
}

// installForPriceTests installs the shop through OAuth, lets it run price
// tests over the v1 API, and returns it with a write token.
func (h *installHarness) installForPriceTests(ctx context.Context) (*experiment.Shop, string) {
	h.t.Helper()
	shop := h.install()
	on, features := true, []string{"price"}
	if _, err := h.app.DB.UpdateShop(ctx, shop.ID, store.ShopUpdate{APIEnabled: &on, Features: &features, SubscriptionActive: &on}); err != nil {
		h.t.Fatal(err)
	}
	_, token, err := h.app.DB.CreateToken(ctx, shop.ID, experiment.ScopeWrite)
	if err != nil {
		h.t.Fatal(err)
	}
	return shop, token
}

// TestInstallLifecycle is issue 13 end to end: OAuth install, the
// encrypted token, webhooks and catalog on the platform, uninstall and
// reinstall.
func TestInstallLifecycle(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})

	h.wantRefused(h.url+"/api/auth", http.StatusBadRequest)
	h.wantRefused(h.url+"/api/auth?shop=not%20a%20shop", http.StatusBadRequest)

	cb, state := h.authorize()
	q := cb.Query()
	bad := url.Values{}
	for k, v := range q {
		bad[k] = v
	}
	bad.Set("hmac", strings.Repeat("0", 64))
	h.wantRefused(h.url+cb.Path+"?"+bad.Encode(), http.StatusUnauthorized)
	bad = url.Values{}
	for k, v := range q {
		bad[k] = v
	}
	bad.Set("shop", "other-"+h.domain) // signed for another shop
	h.wantRefused(h.url+cb.Path+"?"+bad.Encode(), http.StatusUnauthorized)
	unknown := url.Values{"code": {q.Get("code")}, "shop": {h.domain}, "state": {"never-issued"}, "timestamp": {"1"}}
	unknown.Set("hmac", experiment.QueryHMAC(unknown, []byte("app-secret")))
	h.wantRefused(h.url+cb.Path+"?"+unknown.Encode(), http.StatusUnauthorized)
	if n := h.countWhere("SELECT count(*) FROM shops WHERE domain = $1", h.domain); n != 0 {
		t.Fatalf("refused callbacks installed the shop")
	}

	status, _, body := h.get(cb.String())
	if status != http.StatusFound {
		t.Fatalf("callback = %d %v", status, body)
	}
	h.wantRefused(cb.String(), http.StatusUnauthorized) // the state was consumed: a replay is refused
	if n := h.countWhere("SELECT count(*) FROM install_states WHERE nonce = $1", state); n != 0 {
		t.Fatal("the state outlived its use")
	}
	shop, err := h.app.DB.FindShopByDomain(ctx, h.domain)
	if err != nil || !shop.Installed() || shop.Name != "Installed Shop" || shop.Timezone != "Europe/Berlin" || shop.Currency != "EUR" {
		t.Fatalf("installed shop %+v %v", shop, err)
	}

	// The token is sealed at rest, opens with the configured key, and is
	// the one the platform issued (the fake accepts only issued tokens).
	sealed := h.sealedToken()
	sealer, _ := experiment.NewAESSealer(h.key)
	plain, err := sealer.Open(sealed)
	if err != nil || !strings.HasPrefix(string(plain), "shpat_") || bytes.Contains(sealed, plain) {
		t.Fatalf("sealed token %x opens to %q (%v)", sealed, plain, err)
	}
	if _, err := h.app.PlatformClient.FetchShop(ctx, h.domain, string(plain)); err != nil {
		t.Fatalf("stored token refused by the platform: %v", err)
	}

	hooks := h.fake.Webhooks(h.domain)
	for _, topic := range experiment.WebhookTopics {
		if hooks[topic] != installPublicURL+"/api/webhooks" {
			t.Fatalf("webhook %s → %q (all: %v)", topic, hooks[topic], hooks)
		}
	}
	h.wantCatalog(shop.ID, 3)
	if n := h.fake.Calls(h.domain, "Products"); n != 2 {
		t.Fatalf("%d product pages read, want 2", n)
	}

	// A merchant's API token and a live test, then the platform's uninstall.
	on := true
	if _, err := h.app.DB.UpdateShop(ctx, shop.ID, store.ShopUpdate{APIEnabled: &on}); err != nil {
		t.Fatal(err)
	}
	_, token, err := h.app.DB.CreateToken(ctx, shop.ID, experiment.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.do("GET", "/v1/experiments", token, ""); r.status != 200 {
		t.Fatalf("token before uninstall: %d %s", r.status, r.raw)
	}
	started := time.Now().UTC().Add(-time.Hour)
	live := lifttest.RunningTest(shop.ID, "live", started)
	lifttest.PutTest(t, h.app.DB, live)
	price := &experiment.Test{ID: live.ID, Type: experiment.TypePrice, Groups: []experiment.Group{{Index: 1,
		Content: json.RawMessage(`{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/101"}]}`)}}}
	if err := h.app.PlatformClient.PrepareLaunch(ctx, shop, price); err != nil {
		t.Fatal(err)
	}
	h.fake.PutLiftResources(h.domain)
	h.uninstall(shop, "d-1")

	if got, err := h.app.DB.FindTestByID(ctx, shop.ID, live.ID); err != nil || got.Status != experiment.StatusEnded {
		t.Fatalf("live test after uninstall: %+v %v", got, err)
	}
	if n, hooks := h.fake.LiftResources(h.domain), h.fake.Webhooks(h.domain); n != 0 || len(hooks) != 0 {
		t.Fatalf("%d Lift resources and webhooks %v left on the platform", n, hooks)
	}
	if n := h.fake.Calls(h.domain, "WebhookSubscriptionDelete"); n != len(experiment.WebhookTopics) {
		t.Fatalf("%d webhook subscriptions deleted, want %d", n, len(experiment.WebhookTopics))
	}
	for _, op := range []string{"ScriptTagDelete", "MetafieldsDelete", "ProductVariantsBulkDelete", "CartTransformDelete",
		"DeliveryCustomizationDelete", "PaymentCustomizationDelete"} {
		if h.fake.Calls(h.domain, op) != 1 {
			t.Fatalf("cleanup call %s seen %d times", op, h.fake.Calls(h.domain, op))
		}
	}
	h.wantUninstalled(t, token, shop.ID)

	// The platform revoked its token; the merchant installs again.
	h.fake.RevokeTokens(h.domain)
	again := h.install()
	if again.ID != shop.ID {
		t.Fatalf("reinstall made shop %d, want %d", again.ID, shop.ID)
	}
	if r := h.do("GET", "/v1/experiments", token, ""); r.status != 200 {
		t.Fatalf("token after reinstall: %d %s", r.status, r.raw)
	}
	if p2, _ := sealer.Open(h.sealedToken()); string(p2) == string(plain) || len(p2) == 0 {
		t.Fatalf("reinstall kept the revoked platform token")
	}
	h.wantCatalog(shop.ID, 3)
	if hooks := h.fake.Webhooks(h.domain); len(hooks) != len(experiment.WebhookTopics) {
		t.Fatalf("webhooks after reinstall: %v", hooks)
	}
}

// uninstall delivers APP_UNINSTALLED over HTTP and processes it as the
// worker does.
func (h *installHarness) uninstall(shop *experiment.Shop, id string) {
	h.t.Helper()
	body := `{"id":1,"domain":"` + h.domain + `"}`
	r := h.do("POST", "/api/webhooks", "", body, "Content-Type", "application/json",
		webhooks.HeaderTopic, experiment.TopicAppUninstalled, webhooks.HeaderShop, h.domain, webhooks.HeaderID, id,
		webhooks.HeaderSignature, webhooks.Sign([]byte(h.cfg.Platform.WebhookSecret), []byte(body)))
	if r.status != 200 {
		h.t.Fatalf("uninstall webhook = %d %s", r.status, r.raw)
	}
	if err := h.app.webhookService().Process(context.Background(), shop.ID, id, experiment.WebhookAttempt{Try: 1}); err != nil {
		h.t.Fatal(err)
	}
}

// wantCatalog checks the mirror holds n variants with their prices and
// costs, and the collection and theme when n > 0.
func (h *installHarness) wantCatalog(shopID int64, n int) {
	h.t.Helper()
	if got := h.countWhere("SELECT count(*) FROM catalog_variants WHERE shop_id = $1 AND price > 0 AND cost > 0 AND cost < price", shopID); got != n {
		h.t.Fatalf("%d priced and costed variants in the mirror, want %d", got, n)
	}
	want := min(n, 1)
	if c, th := h.countWhere("SELECT count(*) FROM catalog_collections WHERE shop_id = $1", shopID),
		h.countWhere("SELECT count(*) FROM catalog_themes WHERE shop_id = $1 AND role = 'main'", shopID); c != want || th != want {
		h.t.Fatalf("%d collections, %d main themes; want %d", c, th, want)
	}
}

// TestShopsCreateInstalls: `lift shops create` runs the install (minus
// OAuth): the shop is installed with the platform's webhooks subscribed
// and its token sealed, and creating it again names it.
func TestShopsCreateInstalls(t *testing.T) {
	t.Parallel()
	s := roleServer(t, "all")
	domain := lifttest.Name("cli-new-") + ".myshopify.com"
	run := func() error {
		_, _, err := s.command(newShopsCmd(), "create", domain, "--currency", "GBP", "--data-dir", t.TempDir())
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	shop, err := s.app.DB.FindShopByDomain(context.Background(), domain)
	if err != nil || !shop.Installed() || shop.Currency != "GBP" {
		t.Fatalf("shop %+v %v", shop, err)
	}
	if n := s.countWhere("SELECT jsonb_array_length(webhook_subscriptions) FROM shops WHERE domain = $1", domain); n != len(experiment.WebhookTopics) {
		t.Fatalf("%d webhook subscriptions stored, want %d", n, len(experiment.WebhookTopics))
	}
	if n := s.countWhere("SELECT count(*) FROM shops WHERE domain = $1 AND access_token_sealed IS NOT NULL", domain); n != 1 {
		t.Fatal("no sealed platform token stored")
	}
	if err := run(); err == nil || !strings.Contains(err.Error(), "already installed") {
		t.Fatalf("second create = %v", err)
	}
}

// wantUninstalled checks what an uninstall leaves: the shop's API token
// refused as the contract says (401 invalid_token: a shop Lift can no longer
// act for), no sealed platform token, an empty catalog mirror.
func (h *installHarness) wantUninstalled(t *testing.T, token string, shopID int64) {
	t.Helper()
	wantError(t, h.do("GET", "/v1/experiments", token, ""), 401, "authentication_error", "invalid_token", nil)
	if h.sealedToken() != nil {
		t.Fatal("the platform token outlived the uninstall")
	}
	h.wantCatalog(shopID, 0)
}
