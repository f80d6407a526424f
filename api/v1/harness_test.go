package v1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/liftab/lift/api"
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

// clock is the injected clock every component of a test server shares.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

var epoch = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// env is the real v1 server over HTTP, with every resource mounted as lift
// serve mounts it: the middleware chain, real Postgres, Redis and
// ClickHouse, and the fake platform server. Export and result jobs run
// in-process when a test calls them; withWorker adds a real asynq worker.
type env struct {
	t             testing.TB
	srv           *httptest.Server
	db            *store.DB
	pgURL         string // the test database, for looking below the ports
	wh            *warehouse.Warehouse
	fake          *platform.Fake
	clock         *clock
	service       *experiment.Service // the tests' use cases, as the worker runs them
	redis         jobs.Redis
	jobs          *jobs.Client
	results       *results.Service // snapshots, custom queries and exports, as the jobs run them
	resultsConfig results.Config   // what results runs on, for tests that vary it
}

// shopEnv is one shop of the env with a write and a read token.
type shopEnv struct {
	*env
	shop  *experiment.Shop
	write string
	read  string
}

func init() { gin.SetMode(gin.TestMode) }

// Aliases kept so each resource's tests read as they were written.
type (
	exportEnv  = env
	resultsEnv = env
)

const queryBudget = 1000

type envOptions struct{ worker bool }

// withWorker runs a real asynq worker for result jobs, as in production.
func withWorker(o *envOptions) { o.worker = true }

func newEnv(t testing.TB, opts ...func(*envOptions)) *env {
	t.Helper()
	var o envOptions
	for _, opt := range opts {
		opt(&o)
	}
	ctx := context.Background()
	clk := &clock{now: epoch}
	pgURL := lifttest.PostgresURL(t)
	db, err := store.Open(ctx, store.Config{URL: pgURL, Now: clk.Now})
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
	r := jobs.Redis{Addr: addr, DB: rdb}
	jc := jobs.NewClient(r)
	t.Cleanup(func() { jc.Close() })

	dir := filepath.Join(t.TempDir(), "exports")
	rcfg := results.Config{Repo: store.ResultsRepository{DB: db}, Tests: db, Warehouse: wh, Jobs: jobs.ResultsQueue{Client: jc},
		Now: clk.Now, ExportDir: dir, SigningSecret: []byte("download-secret")}
	svc := results.New(rcfg)
	if o.worker {
		w := jobs.NewWorker(r, jobs.WorkerConfig{Concurrency: 2})
		jobs.HandleResults(w, svc)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Shutdown)
	}
	pc := platform.NewClient(psrv.URL, "")
	pc.RatesURL = "https://lift.test/api/carrier/rates"
	// The platform sells the demo catalog the shops' mirrors hold, its
	// zones handed to Lift rates (a shipping launch reads them).
	demo, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	fake.Catalog, fake.LiftRatesURL = demo.Snapshot(), pc.RatesURL
	tests := experiment.NewService(experiment.ServiceConfig{Repository: store.Experiments{DB: db},
		Platform: pc, Jobs: jobs.ChecksQueue{Client: jc}, Now: clk.Now,
		PreviewSecret: []byte("test-secret"), LaunchBudget: 300 * time.Millisecond})
	res := &v1.Results{Service: svc}
	ex := &v1.Exports{Service: svc}
	a := &v1.API{
		Tokens:       db,
		Keys:         db,
		Limiter:      api.NewRateLimiter(rc, time.Minute, map[api.Class]int{api.ClassRead: 100000, api.ClassWrite: 100000, api.ClassQuery: queryBudget}, clk.Now),
		Idempotency:  api.IdempotencyConfig{StaleAfter: 90 * time.Second, Retention: 24 * time.Hour},
		MaxBodyBytes: 10 << 20,
		Now:          clk.Now,
		Experiments:  &v1.Experiments{Service: tests, Summary: res.Summary},
		Exports:      ex,
		Results:      res,
	}
	g := gin.New()
	a.Mount(g)
	ex.MountPublic(g)
	g.NoRoute(v1.NotFound)
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, db: db, pgURL: pgURL, wh: wh, fake: fake, clock: clk, service: tests, redis: r, jobs: jc,
		results: svc, resultsConfig: rcfg}
}

// started creates a price test through the API and starts it now.
func (e *env) started(t *testing.T, s *shopEnv, name string) string {
	t.Helper()
	return e.startedWith(t, s, priceTest(name))
}

// startedWith creates body in s and starts it.
func (e *env) startedWith(t *testing.T, s *shopEnv, body string) string {
	t.Helper()
	x := id(s.create(t, body))
	if r := s.do(t, "POST", "/v1/experiments/"+x+"/start", ""); r.Status != 200 || r.Body["status"] != "active" {
		t.Fatalf("start = %d %s", r.Status, r.Raw)
	}
	// Every started test prices the tee, and a live one refuses the next
	// one's start (experiment/conflict.go): end it with its (sub)test.
	t.Cleanup(func() { s.do(t, "POST", "/v1/experiments/"+x+"/end", "") })
	return x
}

var shopSeq struct {
	sync.Mutex
	n int
}

// newShop installs an API-enabled shop with the demo catalog. The default
// plan has every feature a test here needs and a carrier service.
func (e *env) newShop(upd store.ShopUpdate) *shopEnv {
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
	base := store.ShopUpdate{APIEnabled: &yes, Features: &features, CarrierService: &yes, SubscriptionActive: &yes}
	if _, err := e.db.UpdateShop(ctx, s.ID, base); err != nil {
		e.t.Fatal(err)
	}
	if s, err = e.db.UpdateShop(ctx, s.ID, upd); err != nil {
		e.t.Fatal(err)
	}
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.db.ImportCatalog(ctx, s.ID, f); err != nil {
		e.t.Fatal(err)
	}
	_, w, err := e.db.CreateToken(ctx, s.ID, experiment.ScopeWrite)
	if err != nil {
		e.t.Fatal(err)
	}
	_, r, err := e.db.CreateToken(ctx, s.ID, experiment.ScopeRead)
	if err != nil {
		e.t.Fatal(err)
	}
	return &shopEnv{env: e, shop: s, write: w, read: r}
}

func (s *shopEnv) update(upd store.ShopUpdate) {
	s.t.Helper()
	if _, err := s.db.UpdateShop(context.Background(), s.shop.ID, upd); err != nil {
		s.t.Fatal(err)
	}
}

// resp is an HTTP answer with its JSON body decoded.
type resp struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

func (s *shopEnv) do(t *testing.T, method, path, body string, header ...string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.write)
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
	r := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %s", method, path, raw)
		}
	}
	return r
}

// create posts a test and requires 201.
func (s *shopEnv) create(t *testing.T, body string) map[string]any {
	t.Helper()
	r := s.do(t, "POST", "/v1/experiments", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create = %d %s", r.Status, r.Raw)
	}
	return r.Body
}

// wantError checks the contract's error envelope.
func wantError(t *testing.T, r resp, status int, typ, code, param string) map[string]any {
	t.Helper()
	e, _ := r.Body["error"].(map[string]any)
	if r.Status != status || e == nil || e["type"] != typ || e["code"] != code {
		t.Fatalf("want %d %s %s, got %d %s", status, typ, code, r.Status, r.Raw)
	}
	var gotParam string
	if p, ok := e["param"].(string); ok {
		gotParam = p
	} else if e["param"] != nil {
		t.Fatalf("param is not a string or null: %s", r.Raw)
	}
	if gotParam != param {
		t.Fatalf("param = %q, want %q: %s", gotParam, param, r.Raw)
	}
	if _, has := e["request_id"]; has && status < 500 {
		t.Fatalf("a 4xx carries a request_id: %s", r.Raw)
	}
	if status == http.StatusUnprocessableEntity {
		f, _ := e["findings"].([]any)
		if len(f) == 0 {
			t.Fatalf("a 422 has no findings: %s", r.Raw)
		}
		for _, x := range f {
			fm := x.(map[string]any)
			if fm["severity"] == "error" {
				if fm["code"] != code || fm["param"] != e["param"] {
					t.Fatalf("top-level code/param does not repeat the first blocking finding: %s", r.Raw)
				}
				break
			}
		}
	}
	return e
}

func id(m map[string]any) string { return m["id"].(string) }

// Bodies of the demo catalog (experiment/catalogdata/demo.json).
const (
	tee       = "gid://shopify/Product/8101"
	teeS      = "gid://shopify/ProductVariant/44001"
	teeM      = "gid://shopify/ProductVariant/44002"
	sweater   = "gid://shopify/Product/8102"
	sweaterS  = "gid://shopify/ProductVariant/44005"
	domestic  = "gid://shopify/DeliveryZone/501"
	intl      = "gid://shopify/DeliveryZone/502"
	standard  = "gid://shopify/DeliveryMethodDefinition/5011"
	dawn      = "gid://shopify/OnlineStoreTheme/1201"
	holiday   = "gid://shopify/OnlineStoreTheme/1202"
	euMarket  = "gid://shopify/Market/602"
	tops      = "gid://shopify/Collection/301"
	usd19     = `{"amount":"19.00","currency":"USD"}`
	twoGroups = `[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,"content":%s}]`
)

// accessories is the demo collection whose cheapest item is the socks'
// S/M (44018) at 22.00.
const accessories = "gid://shopify/Collection/302"

func priceTest(name string) string { return priceTestOf(name, tee, teeS) }

// priceTestOf prices one variant of product at 19.00: a test beside a live
// one of the tee takes another product (experiment/conflict.go).
func priceTestOf(name, product, variant string) string {
	return fmt.Sprintf(`{"type":"price","name":%q,"shared":{"price":{"product_ids":[%q]}},"test_groups":`+twoGroups+`}`,
		name, product, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s}]}`, variant, usd19))
}
