package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/api/session"
	v1 "github.com/liftab/lift/api/v1"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

func init() { gin.SetMode(gin.TestMode) }

const (
	apiKey    = "app-key-123"
	apiSecret = "app-secret-456"
	adminKey  = "internal-admin-key"
)

// epoch is the injected clock's time; tokens are minted around it.
var epoch = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// env is the session API and /v1 on one server, as lift serve mounts them:
// real Postgres, Redis and ClickHouse, the fake platform, one service.
type env struct {
	t   testing.TB
	srv *httptest.Server
	db  *store.DB
	wh  *warehouse.Warehouse
	// fake is the platform; install runs the install lifecycle against it.
	fake    *platform.Fake
	install *experiment.InstallService
}

// scriptURL is the storefront script GET /api/enable-script installs.
const scriptURL = "https://lift.test/lift.js"

// shopEnv is one installed shop with a v1 token.
type shopEnv struct {
	*env
	shop  *experiment.Shop
	token string // v1 bearer token
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	now := func() time.Time { return epoch }
	db, err := store.Open(ctx, store.Config{URL: lifttest.PostgresURL(t), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	addr, rdb := lifttest.Redis(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: rdb})
	t.Cleanup(func() { rc.Close() })
	chAddr, chDB := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: chAddr, Database: chDB})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	fake := platform.NewFake()
	psrv := httptest.NewServer(fake)
	t.Cleanup(psrv.Close)
	sealer, err := experiment.NewAESSealer(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	inst := &experiment.InstallService{Repo: store.InstallRepo{DB: db}, Platform: platform.NewClient(psrv.URL, ""), Sealer: sealer,
		WebhookURL: "https://lift.test/api/webhooks", ScriptURL: scriptURL, Now: now}
	jc := jobs.NewClient(jobs.Redis{Addr: addr, DB: rdb})
	t.Cleanup(func() { jc.Close() })
	pc := platform.NewClient(psrv.URL, "")
	pc.RatesURL = "https://lift.test/api/carrier/rates"
	// The platform sells the demo catalog the shops' mirrors hold, its
	// zones handed to Lift rates (a shipping launch reads them).
	demo, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	fake.Catalog, fake.LiftRatesURL = demo.Snapshot(), pc.RatesURL
	svc := experiment.NewService(experiment.ServiceConfig{Repository: store.Experiments{DB: db},
		Platform: pc, Jobs: jobs.ChecksQueue{Client: jc}, Eraser: warehouse.Eraser{W: wh},
		Now: now, PreviewSecret: []byte("test-secret"), LaunchBudget: 300 * time.Millisecond})
	g := gin.New()
	g.Use(api.RequestIDs())
	(&v1.API{Tokens: db, Keys: db, Now: now, MaxBodyBytes: 10 << 20,
		Limiter:     api.NewRateLimiter(rc, time.Minute, map[api.Class]int{api.ClassRead: 100000, api.ClassWrite: 100000, api.ClassQuery: 1000}, now),
		Idempotency: api.IdempotencyConfig{StaleAfter: 90 * time.Second, Retention: 24 * time.Hour},
		Experiments: &v1.Experiments{Service: svc, Warnings: db}}).Mount(g)
	(&session.API{Service: svc, Shops: db, APIKey: apiKey, APISecret: apiSecret, AdminKey: adminKey,
		Orders: warehouse.OrderLookup{W: wh}, Scripts: inst, Warnings: db, Now: now,
		Analytics: results.NewAnalytics(results.AnalyticsConfig{Tests: db, Warehouse: wh, Activity: wh, Now: now})}).Mount(g)
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, db: db, wh: wh, fake: fake, install: inst}
}

var shopSeq struct {
	sync.Mutex
	n int
}

// newShop installs a shop with the demo catalog and every feature the
// tests here need.
func (e *env) newShop() *shopEnv {
	e.t.Helper()
	ctx := context.Background()
	shopSeq.Lock()
	shopSeq.n++
	domain := fmt.Sprintf("shop-%d-%d.myshopify.com", time.Now().UnixNano(), shopSeq.n)
	shopSeq.Unlock()
	s, err := e.db.CreateShop(ctx, experiment.Shop{Domain: domain, Name: domain})
	if err != nil {
		e.t.Fatal(err)
	}
	yes := true
	features := []string{"price", "offer", "multi_market"}
	if s, err = e.db.UpdateShop(ctx, s.ID, store.ShopUpdate{APIEnabled: &yes, Features: &features, CarrierService: &yes, SubscriptionActive: &yes}); err != nil {
		e.t.Fatal(err)
	}
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.ImportCatalog(ctx, s.ID, f); err != nil {
		e.t.Fatal(err)
	}
	_, tok, err := e.db.CreateToken(ctx, s.ID, experiment.ScopeWrite)
	if err != nil {
		e.t.Fatal(err)
	}
	return &shopEnv{env: e, shop: s, token: tok}
}

// claims are a valid session token's claims for shop; edit them to break it.
func claims(shop string) jwt.MapClaims {
	return jwt.MapClaims{"iss": "https://" + shop + "/admin", "dest": "https://" + shop, "aud": apiKey, "sub": "42",
		"exp": epoch.Add(time.Minute).Unix(), "nbf": epoch.Add(-time.Second).Unix(), "iat": epoch.Add(-time.Second).Unix(),
		"jti": "jti-1", "sid": "sid-1"}
}

func sign(t testing.TB, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(apiSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// session is a valid session token of the shop.
func (s *shopEnv) session(t testing.TB) string { return sign(t, claims(s.shop.Domain)) }

// resp is an HTTP answer with its JSON body decoded.
type resp struct {
	Status int
	Raw    []byte
	Body   any
}

func (r resp) obj() map[string]any { m, _ := r.Body.(map[string]any); return m }

// data is the success envelope's data.
func (r resp) data() any { return r.obj()["data"] }

func (e *env) send(t testing.TB, method, path, body string, header ...string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{Status: res.StatusCode, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %s", method, path, raw)
		}
	}
	return r
}

// do calls the session API with the shop's session token.
func (s *shopEnv) do(t testing.TB, method, path, body string) resp {
	t.Helper()
	return s.send(t, method, path, body, "Authorization", "Bearer "+s.session(t))
}

// v1 calls the public API with the shop's bearer token.
func (s *shopEnv) v1(t testing.TB, method, path, body string) resp {
	t.Helper()
	return s.send(t, method, path, body, "Authorization", "Bearer "+s.token)
}

// wantSuccess requires 200 and the JSON string "success".
func wantSuccess(t testing.TB, r resp) {
	t.Helper()
	if r.Status != http.StatusOK || r.Body != "success" {
		t.Fatalf("want 200 \"success\", got %d %s", r.Status, r.Raw)
	}
}

// wantError requires status and part 7's error envelope.
func wantError(t testing.TB, r resp, status int) string {
	t.Helper()
	m := r.obj()
	msg, _ := m["message"].(string)
	if r.Status != status || m["status"] != "error" || msg == "" || len(m) != 2 {
		t.Fatalf("want %d {status:error,message}, got %d %s", status, r.Status, r.Raw)
	}
	return msg
}

// list is GET /api/experiments's data.
func (s *shopEnv) list(t testing.TB) []map[string]any {
	t.Helper()
	r := s.do(t, "GET", "/api/experiments", "")
	if r.Status != 200 || r.obj()["status"] != "success" {
		t.Fatalf("list = %d %s", r.Status, r.Raw)
	}
	var out []map[string]any
	for _, x := range r.data().([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// created creates through path and returns the new test's _id (the newest).
func (s *shopEnv) created(t testing.TB, path, body string) string {
	t.Helper()
	wantSuccess(t, s.do(t, "POST", path, body))
	l := s.list(t)
	if len(l) == 0 {
		t.Fatal("created test not listed")
	}
	return l[0]["_id"].(string)
}

// Demo catalog ids (experiment/catalogdata/demo.json), as the session
// document writes them: numbers without the gid:// prefix.
const (
	tee      = "8101"
	teeS     = "44001"
	teeM     = "44002"
	sweater  = "8102"
	sweaterS = "44005"
	domestic = "501"
	standard = "5011"
	holiday  = "1202"
	dawn     = "1201"
)

func priceV1(name string) string {
	return fmt.Sprintf(`{"name":%q,"products":[{"productId":%q,"variants":[{"variantId":%q,"price":"19.00","compareAtPrice":"25.00"}]}],
		"testGroups":[{"name":"Control","weight":50},{"name":"Variant","weight":50}]}`, name, tee, teeS)
}
