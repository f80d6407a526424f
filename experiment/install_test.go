package experiment_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
)

func TestAESSealer(t *testing.T) {
	t.Parallel()
	s, err := experiment.NewAESSealer(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Seal([]byte("shpat_secret"))
	b, _ := s.Seal([]byte("shpat_secret"))
	if bytes.Equal(a, b) || bytes.Contains(a, []byte("shpat_secret")) {
		t.Fatal("sealing is deterministic or leaks the plaintext")
	}
	if p, err := s.Open(a); err != nil || string(p) != "shpat_secret" {
		t.Fatalf("open = %q %v", p, err)
	}
	other, _ := experiment.NewAESSealer(bytes.Repeat([]byte{2}, 32))
	tampered := append([]byte(nil), a...)
	tampered[len(tampered)-1] ^= 1
	for name, sealed := range map[string][]byte{"OtherKey": nil, "Tampered": tampered, "Short": a[:5]} {
		opener := s
		if name == "OtherKey" {
			opener, sealed = other, a
		}
		if _, err := opener.Open(sealed); !errors.Is(err, experiment.ErrUnsealable) {
			t.Fatalf("%s: Open = %v, want ErrUnsealable", name, err)
		}
	}
	if _, err := experiment.NewAESSealer(make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte key was taken")
	}
}

func TestVerifyQueryHMAC(t *testing.T) {
	t.Parallel()
	// Shopify's documented example: the query without hmac, sorted, keyed
	// with the secret "hush".
	q, _ := url.ParseQuery("code=0907a61c0c8d55e99db179b68161bc00&shop=some-shop.myshopify.com&state=0.6784241404160823&timestamp=1337178173")
	want := "700e2dadb827fcc8609e9d5ce208b2e9cdaab9df07390d2cbca10d7c328fc4bf"
	if got := experiment.QueryHMAC(q, []byte("hush")); got != want {
		t.Fatalf("hmac %s, want %s", got, want)
	}
	for _, tc := range []struct {
		name string
		edit func(q url.Values)
		ok   bool
	}{
		{"Valid", func(url.Values) {}, true},
		{"UpperCaseHex", func(q url.Values) { q.Set("hmac", strings.ToUpper(want)) }, true},
		{"Missing", func(q url.Values) { q.Del("hmac") }, false},
		{"NotHex", func(q url.Values) { q.Set("hmac", "zz") }, false},
		{"ParamChanged", func(q url.Values) { q.Set("shop", "evil.myshopify.com") }, false},
		{"ParamAdded", func(q url.Values) { q.Set("extra", "1") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := url.Values{}
			for k, v := range q {
				c[k] = v
			}
			c.Set("hmac", want)
			tc.edit(c)
			if got := experiment.VerifyQueryHMAC(c, []byte("hush")); got != tc.ok {
				t.Fatalf("verify = %v, want %v", got, tc.ok)
			}
		})
	}
	q.Set("hmac", want)
	if experiment.VerifyQueryHMAC(q, nil) {
		t.Fatal("an empty secret verified")
	}
}

// memInstall is an in-memory InstallRepository and InstallPlatform.
type memInstall struct {
	states  map[string]experiment.InstallState
	shops   map[string]*experiment.Shop
	sealed  map[int64][]byte
	catalog map[int64]*experiment.CatalogSnapshot
	subs    map[string]int
	cleaned int
	synced  []string // token and inventory item of each stock sync
	blocks  []string // token and theme of each app block written
	scripts map[string]bool
}

func newMemInstall() *memInstall {
	return &memInstall{states: map[string]experiment.InstallState{}, shops: map[string]*experiment.Shop{},
		sealed: map[int64][]byte{}, catalog: map[int64]*experiment.CatalogSnapshot{}, subs: map[string]int{}, scripts: map[string]bool{}}
}

func (m *memInstall) Write(ctx context.Context, _ experiment.WriteMeta, fn func(context.Context, experiment.InstallTx) (experiment.WriteResult, error)) (experiment.WriteResult, error) {
	return fn(ctx, m)
}
func (m *memInstall) FindShopByDomain(_ context.Context, d string) (*experiment.Shop, error) {
	if s, ok := m.shops[d]; ok {
		return s, nil
	}
	return nil, experiment.Errorf(experiment.KindNotFound, "shop_not_found", "no")
}
func (m *memInstall) FindAccessToken(_ context.Context, id int64) ([]byte, error) {
	if b, ok := m.sealed[id]; ok {
		return b, nil
	}
	return nil, experiment.Errorf(experiment.KindNotFound, "access_token_not_found", "no")
}
func (m *memInstall) SaveInstallState(_ context.Context, s experiment.InstallState) error {
	m.states[s.Nonce] = s
	return nil
}
func (m *memInstall) ConsumeInstallState(_ context.Context, d, n string, now time.Time) error {
	s, ok := m.states[n]
	if !ok || s.Domain != d || s.ExpiresAt.Before(now) {
		return experiment.Errorf(experiment.KindNotFound, "install_state_not_found", "no")
	}
	delete(m.states, n)
	return nil
}
func (m *memInstall) InstallShop(_ context.Context, in experiment.ShopInstall) (*experiment.Shop, error) {
	s, ok := m.shops[in.Domain]
	if !ok {
		s = &experiment.Shop{ID: int64(len(m.shops) + 1), Domain: in.Domain}
		m.shops[in.Domain] = s
	}
	s.UninstalledAt, s.Name = nil, in.Info.Name
	m.sealed[s.ID] = in.SealedToken
	return s, nil
}
func (m *memInstall) ImportCatalog(_ context.Context, id int64, c *experiment.CatalogSnapshot) error {
	m.catalog[id] = c
	return nil
}
func (m *memInstall) ClearInstall(_ context.Context, id int64) error {
	delete(m.sealed, id)
	delete(m.catalog, id)
	return nil
}
func (m *memInstall) LockShop(_ context.Context, id int64) (*experiment.Shop, bool, error) {
	for _, s := range m.shops {
		if s.ID == id {
			_, ok := m.sealed[id]
			return s, ok, nil
		}
	}
	return nil, false, experiment.Errorf(experiment.KindNotFound, "shop_not_found", "no")
}
func (m *memInstall) RegisterCarrier(context.Context, string, string) error { return nil }
func (m *memInstall) FindOpenTests(context.Context, int64) ([]*experiment.Test, error) {
	return nil, nil
}
func (m *memInstall) SetTestWarning(context.Context, int64, int64, experiment.Finding) error {
	return nil
}
func (m *memInstall) ClearTestWarning(context.Context, int64, string) error { return nil }
func (m *memInstall) ReadCatalog(_ context.Context, id int64) (*experiment.CatalogSnapshot, error) {
	if c, ok := m.catalog[id]; ok {
		return c, nil
	}
	return &experiment.CatalogSnapshot{}, nil
}
func (m *memInstall) AuthorizeURL(d string, _ []string, r, st string) string {
	return "https://" + d + "/authorize?state=" + st + "&redirect_uri=" + r
}
func (m *memInstall) ExchangeCode(_ context.Context, _, code string) (experiment.AccessGrant, error) {
	if code != "good" {
		return experiment.AccessGrant{}, &experiment.PlatformError{Op: "exchange", Status: 400, Message: "bad code"}
	}
	return experiment.AccessGrant{AccessToken: "tok-1", Scopes: []string{"read_products"}}, nil
}
func (m *memInstall) FetchShop(context.Context, string, string) (experiment.ShopInfo, error) {
	return experiment.ShopInfo{Name: "Mem", Currency: "EUR", Timezone: "UTC"}, nil
}
func (m *memInstall) SubscribeWebhook(_ context.Context, _, _, topic, _ string) (string, error) {
	m.subs[topic]++
	return "sub-" + topic, nil
}
func (m *memInstall) FetchCatalog(context.Context, string, string) (*experiment.CatalogSnapshot, error) {
	return &experiment.CatalogSnapshot{Products: []experiment.CatalogProduct{{Product: experiment.Product{ID: "p1"}}}}, nil
}
func (m *memInstall) Cleanup(context.Context, string, string) (experiment.CleanupReport, error) {
	m.cleaned++
	return experiment.CleanupReport{ScriptTags: 1}, nil
}

func (m *memInstall) SyncDuplicateStock(_ context.Context, _, tok string, l experiment.InventoryLevel) (int, error) {
	m.synced = append(m.synced, tok+" "+l.InventoryItemID)
	return 1, nil
}

func (m *memInstall) InstallThemeBlock(_ context.Context, _, tok, themeID string) error {
	m.blocks = append(m.blocks, tok+" "+themeID)
	return nil
}

func (m *memInstall) EnableScript(_ context.Context, _, tok, src string) (string, error) {
	if tok == "" || src == "" {
		return "", &experiment.PlatformError{Op: "enable script", Status: 401}
	}
	m.scripts[src] = true
	return "tag-" + src, nil
}

func TestInstallService(t *testing.T) {
	t.Parallel()
	m := newMemInstall()
	sealer, _ := experiment.NewAESSealer(bytes.Repeat([]byte{3}, 32))
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	svc := &experiment.InstallService{Repo: m, Platform: m, Sealer: sealer, APISecret: []byte("s"),
		RedirectURI: "https://lift/cb", WebhookURL: "https://lift/wh", Now: func() time.Time { return now }}
	ctx := context.Background()
	callback := func(state, code string) url.Values {
		q := url.Values{"shop": {"a.myshopify.com"}, "state": {state}, "code": {code}}
		q.Set("hmac", experiment.QueryHMAC(q, []byte("s")))
		return q
	}
	wantCode := func(err error, code string) {
		t.Helper()
		if e, ok := experiment.AsError(err); !ok || e.Code != code {
			t.Fatalf("got %v, want %s", err, code)
		}
	}
	// Only the platform's shop hosts: any other would make the authorize
	// redirect an open redirect off Lift's domain (session audit 2, S2-8).
	for _, bad := range []string{"not a shop", "evil.example", "127.0.0.1", "a.b", "myshopify.com", "a.myshopify.com.evil.example",
		"-a.myshopify.com", "a.b.myshopify.com", "localhost.localdomain"} {
		if _, err := svc.Begin(ctx, bad); err == nil {
			t.Fatalf("shop %q began an install", bad)
		}
	}
	u, err := svc.Begin(ctx, "A.myshopify.com")
	if err != nil {
		t.Fatal(err)
	}
	state := strings.TrimPrefix(strings.Split(u, "&")[0], "https://a.myshopify.com/authorize?state=")

	_, err = svc.Complete(ctx, callback("forged", "good"))
	wantCode(err, "invalid_state")
	q := callback(state, "good")
	q.Set("code", "other")
	_, err = svc.Complete(ctx, q)
	wantCode(err, "invalid_hmac")
	_, err = svc.Complete(ctx, callback(state, "bad")) // consumes the state, the platform refuses
	wantCode(err, "platform_unavailable")

	u, _ = svc.Begin(ctx, "a.myshopify.com")
	state = strings.TrimPrefix(strings.Split(u, "&")[0], "https://a.myshopify.com/authorize?state=")
	now = now.Add(11 * time.Minute)
	_, err = svc.Complete(ctx, callback(state, "good"))
	wantCode(err, "invalid_state") // expired

	u, _ = svc.Begin(ctx, "a.myshopify.com")
	state = strings.TrimPrefix(strings.Split(u, "&")[0], "https://a.myshopify.com/authorize?state=")
	shop, err := svc.Complete(ctx, callback(state, "good"))
	if err != nil || !shop.Installed() || shop.Name != "Mem" || shop.Currency != "EUR" {
		t.Fatalf("install: %+v %v", shop, err)
	}
	if p, _ := sealer.Open(m.sealed[shop.ID]); string(p) != "tok-1" || len(m.subs) != len(experiment.WebhookTopics) || len(m.catalog[shop.ID].Products) != 1 {
		t.Fatalf("token %q, subscriptions %v, catalog %+v", p, m.subs, m.catalog[shop.ID])
	}

	if _, err := svc.EnableScript(ctx, shop.Domain); err == nil {
		t.Fatal("enabled a script without a configured URL")
	}
	svc.ScriptURL = "https://lift/lift.js"
	for range 2 {
		st, err := svc.EnableScript(ctx, "A.myshopify.com")
		if err != nil || st.ScriptTagID != "tag-https://lift/lift.js" || st.Shop.ID != shop.ID || len(m.scripts) != 1 {
			t.Fatalf("enable script: %+v %v %v", st, err, m.scripts)
		}
	}
	_, err = svc.EnableScript(ctx, "nobody.myshopify.com")
	wantCode(err, "shop_not_found")
	level := experiment.InventoryLevel{InventoryItemID: "7", LocationID: "1"}
	if out, err := svc.SyncStock(ctx, shop, level); err != nil || len(m.synced) != 1 || m.synced[0] != "tok-1 7" || !strings.Contains(out, "1 duplicate") {
		t.Fatalf("stock sync: %q %v %v", out, err, m.synced)
	}
	if out, err := svc.ReinstallThemeBlock(ctx, shop, "gid://shopify/OnlineStoreTheme/9"); err != nil || len(m.blocks) != 1 ||
		m.blocks[0] != "tok-1 gid://shopify/OnlineStoreTheme/9" || out != "theme block reinstalled" {
		t.Fatalf("theme block: %q %v %v", out, err, m.blocks)
	}

	outcome, err := svc.Uninstall(ctx, shop)
	if err != nil || m.cleaned != 1 || m.sealed[shop.ID] != nil || !strings.Contains(outcome, "removed 1 script tags") {
		t.Fatalf("uninstall: %q %v (cleaned %d)", outcome, err, m.cleaned)
	}
	if outcome, err := svc.Uninstall(ctx, shop); err != nil || m.cleaned != 1 || !strings.Contains(outcome, "no platform token") {
		t.Fatalf("second uninstall: %q %v", outcome, err)
	}

	_, err = svc.EnableScript(ctx, shop.Domain)
	wantCode(err, "shop_not_installed")
	if out, err := svc.SyncStock(ctx, shop, level); err != nil || len(m.synced) != 1 || !strings.Contains(out, "no platform token") {
		t.Fatalf("stock sync after uninstall: %q %v %v", out, err, m.synced)
	}
	if out, err := svc.ReinstallThemeBlock(ctx, shop, "gid://shopify/OnlineStoreTheme/9"); err != nil || len(m.blocks) != 1 || !strings.Contains(out, "no platform token") {
		t.Fatalf("theme block after uninstall: %q %v %v", out, err, m.blocks)
	}

	_, err = svc.Install(ctx, experiment.InstallRequest{Domain: "a.myshopify.com", RefuseInstalled: true})
	wantCode(err, "shop_exists")
}
