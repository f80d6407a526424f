package experimenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
)

// Plan is the part of a shop's plan the suite varies.
type Plan struct {
	Features           []string
	SubscriptionActive bool
	CarrierService     bool
}

// FullPlan lets a shop do everything the suite's tests need.
var FullPlan = Plan{Features: []string{"price", "offer", "multi_market"}, SubscriptionActive: true, CarrierService: true}

// Backend is one implementation of the repository port under test, with
// what the suite needs to arrange shops and read the audit log.
type Backend struct {
	Repo experiment.Repository
	// NewShop installs a shop with the demo catalog (catalogdata) on plan.
	NewShop func(t *testing.T, p Plan) *experiment.Shop
	// SetPlan changes a shop's plan.
	SetPlan func(t *testing.T, shop *experiment.Shop, p Plan)
	// Uninstall marks the shop uninstalled, as APP_UNINSTALLED does.
	Uninstall func(t *testing.T, shop *experiment.Shop)
	// Audit lists a shop's audit records, newest first.
	Audit func(t *testing.T, shopID int64) []AuditRecord
	// SetLiftRates says whether a zone of the shop's catalog offers Lift
	// rates, as a catalog refresh would find it.
	SetLiftRates func(t *testing.T, shop *experiment.Shop, zoneID string, on bool)
	// Warnings reads a test's standing warnings.
	Warnings experiment.TestWarningReader
}

// NewBackend builds a fresh backend whose units of work read the clock now.
type NewBackend func(t *testing.T, now experiment.Clock) Backend

// FakeBackend is the in-memory backend.
func FakeBackend(t *testing.T, now experiment.Clock) Backend {
	r := NewRepo(now)
	return Backend{
		Repo: r,
		NewShop: func(t *testing.T, p Plan) *experiment.Shop {
			s, err := r.AddShop(applyPlan(experiment.Shop{Domain: fmt.Sprintf("fake-%d.myshopify.com", time.Now().UnixNano()), APIEnabled: true}, p))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		SetPlan: func(t *testing.T, shop *experiment.Shop, p Plan) { r.UpdateShop(applyPlan(*shop, p)) },
		Uninstall: func(t *testing.T, shop *experiment.Shop) {
			s, err := r.FindShopByID(context.Background(), shop.ID)
			if err != nil {
				t.Fatal(err)
			}
			gone := now()
			u := *s
			u.UninstalledAt = &gone
			r.UpdateShop(u)
		},
		Audit:        func(t *testing.T, shopID int64) []AuditRecord { return r.Audit(shopID) },
		SetLiftRates: func(t *testing.T, shop *experiment.Shop, zoneID string, on bool) { r.SetLiftRates(shop.ID, zoneID, on) },
		Warnings:     r,
	}
}

func applyPlan(s experiment.Shop, p Plan) experiment.Shop {
	s.Features, s.SubscriptionActive, s.CarrierService = p.Features, p.SubscriptionActive, p.CarrierService
	return s
}

// Epoch is where every suite clock starts.
var Epoch = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// Clock is a settable clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now reads the clock.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Set moves the clock.
func (c *Clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// PreviewSecret signs the suite's preview links.
var PreviewSecret = []byte("suite-secret")

// Bundle is one backend with the service over it and fakes of the other
// ports.
type Bundle struct {
	Backend
	Clock    *Clock
	Platform *Platform
	Queue    *Queue
	Eraser   *Eraser
	Service  *experiment.Service
	Shop     *experiment.Shop
	ctx      context.Context
}

// Setup builds a bundle with one shop on FullPlan.
func Setup(t *testing.T, newBackend NewBackend) *Bundle {
	t.Helper()
	clk := &Clock{now: Epoch}
	be := newBackend(t, clk.Now)
	b := &Bundle{Backend: be, Clock: clk, Platform: &Platform{}, Queue: &Queue{}, Eraser: &Eraser{},
		ctx: experiment.WithActor(context.Background(), experiment.Actor{Name: "token", TokenID: 1})}
	b.Service = experiment.NewService(experiment.ServiceConfig{Repository: be.Repo, Platform: b.Platform, Jobs: b.Queue, Eraser: b.Eraser,
		Now: clk.Now, PreviewSecret: PreviewSecret, LaunchBudget: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	b.Shop = be.NewShop(t, FullPlan)
	return b
}

// Ctx is the context of a request by token 1.
func (b *Bundle) Ctx() context.Context { return b.ctx }

// JSONReply renders like the public API: the test or the preview link.
func JSONReply(status int) experiment.Reply {
	return func(o *experiment.Outcome) (int, []byte, error) {
		var v any = o.Test
		if o.Preview != nil {
			v = o.Preview
		}
		b, err := json.Marshal(v)
		return status, b, err
	}
}

// Create creates body in the bundle's shop and requires success. The
// cases' tests share a few catalog items, and a live test refuses the start
// of another of the same item (conflict.go), so the test is ended when the
// case that made it is done.
func (b *Bundle) Create(t *testing.T, body string) *experiment.Test {
	t.Helper()
	out, err := b.Service.Create(b.ctx, b.Shop, []byte(body), JSONReply(201))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	id := out.Test.ID
	t.Cleanup(func() {
		if now, err := b.Service.Get(b.ctx, b.Shop, id); err == nil && (now.Status == experiment.StatusActive || now.Status == experiment.StatusPaused) {
			b.Act(t, id, experiment.ActionEnd)
		}
	})
	return out.Test
}

// Get reads a test of the bundle's shop and requires success.
func (b *Bundle) Get(t *testing.T, id int64) *experiment.Test {
	t.Helper()
	x, err := b.Service.Get(b.ctx, b.Shop, id)
	if err != nil {
		t.Fatalf("get %d: %v", id, err)
	}
	return x
}

// Act applies an action (preview shows group 1) and requires success.
func (b *Bundle) Act(t *testing.T, id int64, a experiment.Action) *experiment.Outcome {
	t.Helper()
	out, err := b.act(id, a)
	if err != nil {
		t.Fatalf("%s %d: %v", a, id, err)
	}
	return out
}

func (b *Bundle) act(id int64, a experiment.Action) (*experiment.Outcome, error) {
	if a == experiment.ActionPreview {
		return b.Service.Preview(b.ctx, b.Shop, id, 1, JSONReply(200))
	}
	return b.Service.Apply(b.ctx, b.Shop, id, a, JSONReply(200))
}

// ExperimentAudit lists the shop's experiment.* audit actions, newest first.
func (b *Bundle) ExperimentAudit(t *testing.T) []string {
	var out []string
	for _, r := range b.Audit(t, b.Shop.ID) {
		if strings.HasPrefix(r.Action, "experiment.") {
			out = append(out, r.Action)
		}
	}
	return out
}

// WantCode fails unless err is an *experiment.Error of kind and code.
func WantCode(t *testing.T, err error, kind experiment.Kind, code string) *experiment.Error {
	t.Helper()
	e, ok := experiment.AsError(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("error = %v, want kind %d code %s", err, kind, code)
	}
	return e
}

// Bodies of the demo catalog (experiment/catalogdata/demo.json).
const (
	Tee       = "gid://shopify/Product/8101"
	TeeS      = "gid://shopify/ProductVariant/44001"
	TeeM      = "gid://shopify/ProductVariant/44002"
	Sweater   = "gid://shopify/Product/8102"
	SweaterS  = "gid://shopify/ProductVariant/44005"
	Domestic  = "gid://shopify/DeliveryZone/501"
	Intl      = "gid://shopify/DeliveryZone/502"
	Standard  = "gid://shopify/DeliveryMethodDefinition/5011"
	Dawn      = "gid://shopify/OnlineStoreTheme/1201"
	Holiday   = "gid://shopify/OnlineStoreTheme/1202"
	Tops      = "gid://shopify/Collection/301"
	usd19     = `{"amount":"19.00","currency":"USD"}`
	twoGroups = `[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,"content":%s}]`
)

// Accessories is the demo collection whose cheapest item is the socks'
// S/M (44018) at 22.00.
const Accessories = "gid://shopify/Collection/302"

// PriceTest is a valid price test of the tee.
func PriceTest(name string) string {
	return fmt.Sprintf(`{"type":"price","name":%q,"shared":{"price":{"product_ids":[%q]}},"test_groups":`+twoGroups+`}`,
		name, Tee, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s}]}`, TeeS, usd19))
}

// withFields adds fields (`"audience":…`, `"analysis":…`) to a create body.
func withFields(body, fields string) string { return strings.Replace(body, "{", "{"+fields+",", 1) }

// Scheduled adds a schedule to a create body.
func Scheduled(body string, start time.Time, end *time.Time) string {
	s := fmt.Sprintf(`"start_at":%q`, start.Format(time.RFC3339))
	if end != nil {
		s += fmt.Sprintf(`,"end_at":%q`, end.Format(time.RFC3339))
	}
	return withFields(body, `"schedule":{`+s+`}`)
}

// TypeBodies is one valid create body per creatable type.
func TypeBodies() map[experiment.Type]string {
	g := func(content string) string { return fmt.Sprintf(twoGroups, content) }
	return map[experiment.Type]string{
		experiment.TypePrice: PriceTest("price"),
		experiment.TypeShipping: fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q,%q]}},"test_groups":%s}`, Domestic, Intl,
			g(fmt.Sprintf(`{"rates":[{"zone_id":%q,"rate_id":%q,"name":"Standard","price":{"amount":"4.95","currency":"USD"}},{"zone_id":%q,"name":"Intl saver","price":{"amount":"12.00","currency":"USD"}}]}`, Domestic, Standard, Intl))),
		experiment.TypeTheme:        fmt.Sprintf(`{"type":"theme","name":"t","shared":{"theme":{"path_rules":[{"path":"/products","match_type":"prefix"}]}},"test_groups":%s}`, g(fmt.Sprintf(`{"theme_id":%q}`, Holiday))),
		experiment.TypeTemplate:     fmt.Sprintf(`{"type":"template","name":"t","shared":{"template":{"theme_id":%q}},"test_groups":%s}`, Dawn, g(`{"template":"product.alternate"}`)),
		experiment.TypeURLRedirect:  fmt.Sprintf(`{"type":"url_redirect","name":"r","shared":{"url_redirect":{"source_path":"/collections/all","match_type":"prefix"}},"test_groups":%s}`, g(`{"destination":"/collections/best-sellers"}`)),
		experiment.TypeOffer:        fmt.Sprintf(`{"type":"offer","name":"o","test_groups":%s}`, g(fmt.Sprintf(`{"offers":[{"key":"tops10","title":"10%% off tops","discount":{"type":"percentage","value":"10"},"conditions":{"min_quantity":2,"collection_ids":[%q]},"combines_with":["shipping"]}]}`, Tops))),
		experiment.TypeVisualEditor: fmt.Sprintf(`{"type":"visual_editor","name":"v","test_groups":%s}`, g(`{"custom_css":".hero{display:none}","custom_js":"document.title='B'"}`)),
		experiment.TypeCombined: fmt.Sprintf(`{"type":"combined","name":"c","shared":{"price":{"product_ids":[%q]},"url_redirect":{"source_path":"/"}},"test_groups":%s}`, Tee,
			g(fmt.Sprintf(`{"price":{"prices":[{"product_variant_id":%q,"price":%s}]},"url_redirect":{"destination":"/pages/sale"}}`, TeeS, usd19))),
	}
}

// Run runs every use case of experiment.Service against newBackend. Each
// group of cases gets its own backend.
func Run(t *testing.T, newBackend NewBackend) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, nb NewBackend)
	}{
		{"Create", testCreate},
		{"CreateRefused", testCreateRefused},
		{"CreateRules", testCreateRules},
		{"NameLength", testNameLength},
		{"Update", testUpdate},
		{"GetAndList", testGetAndList},
		{"Lifecycle", testLifecycle},
		{"Launch", testLaunch},
		{"Contested", testContested},
		{"Preview", testPreview},
		{"ChecksPending", testChecksPending},
		{"RunScheduled", testRunScheduled},
		{"RunChecks", testRunChecks},
		{"UnitOfWork", testUnitOfWork},
		{"Duplicate", testDuplicate},
		{"ResetAnalytics", testResetAnalytics},
		{"AdminPanel", testAdminPanel},
		{"RemoveProducts", testRemoveProducts},
		{"Analysis", testAnalysis},
		{"PauseForGuardrail", testPauseForGuardrail},
		{"ReleaseEnded", testReleaseEnded},
		{"QuoteRates", testQuoteRates},
		{"ZoneWarning", testZoneWarning},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newBackend)
		})
	}
}
