package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/devstack"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// The storefront in a real browser: Debian's chromium, headless, drives the
// demo store served by the real router, loading the real /lift.js. One
// browser for the whole test; every visitor is a fresh incognito context
// (its own cookies and storage), so 200 visitors take about a minute on two
// cores, nearer 80 s while other packages' tests share them.

// chromeUA is a desktop Chrome's user agent. Headless Chrome says
// "HeadlessChrome", which Lift rightly counts as a bot.
const chromeUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"

// startBrowser starts one headless chromium for the test, or skips the test
// when there is none and LIFT_REQUIRE_BROWSER is unset (make test sets it
// and installs chromium through `lift stack up --browser`).
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path := devstack.ChromiumPath(os.Getenv("LIFT_CHROMIUM"))
	if path == "" {
		if os.Getenv("LIFT_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium not found and LIFT_REQUIRE_BROWSER is set: install Debian's chromium (lift stack up --browser)")
		}
		t.Skip("browser tests skipped: chromium not found (apt-get install chromium, or lift stack up --browser); " +
			"set LIFT_REQUIRE_BROWSER=1 to fail instead")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.UserAgent(chromeUA),
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // chromium refuses its sandbox as root
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return browser
}

// newVisitor is a fresh incognito browser context: a visitor Lift has never
// seen. Tabs opened from it (chromedp.NewContext(ctx)) share its cookies.
// Its tab is created here, on a context without a deadline: the context of a
// target's first Run bounds the target's whole life, and one visitor context
// serves a split worker's 50 visitors, which on a loaded CI box took more
// than the minute a deadline here once allowed. Each page load has its own
// deadline instead (open).
func newVisitor(t *testing.T, browser context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil {
		t.Errorf("new browser context: %v", err) // Errorf: split calls this from its workers
	}
	return ctx, cancel
}

// pageTimeout bounds one page load and its scripts, on a busy 2-core box.
const pageTimeout = 30 * time.Second

// liftState is what window.lift tells about the visitor.
type liftState struct {
	Visitor     string                `json:"visitor"`
	Session     string                `json:"session"`
	Assignments map[string]assignment `json:"assignments"`
}

// assignment is the visitor's group in one test, and why.
type assignment struct {
	Group  int    `json:"group"`
	Reason string `json:"reason"`
}

func (s liftState) groups() string {
	b, _ := json.Marshal(s.Assignments)
	return s.Visitor + " " + string(b)
}

// open loads a demo page and waits until lift.js and the page's own script
// are done, then reads window.lift.
func open(ctx context.Context, u string) (liftState, error) {
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		return liftState{}, fmt.Errorf("open %s: %w", u, err)
	}
	// A redirect by lift.js replaces the page under the poll: poll again.
	var err error
	for try := 0; try < 3; try++ {
		if err = chromedp.Do(ctx, waitReady()); err == nil {
			break
		}
	}
	if err != nil {
		return liftState{}, fmt.Errorf("open %s: %w", u, err)
	}
	return chromedp.Run(ctx, chromedp.Evaluate[liftState](`({visitor: lift.visitor, session: lift.session, assignments: lift.assignments})`))
}

func waitReady() chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute('data-lift-ready') === '1' &&
		document.documentElement.getAttribute('data-demo-ready') === '1'`,
		// An interval, not animation frames: a background tab gets none.
		chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))
}

// screenshot saves the page under .lift/screenshots/ of the checkout.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	root, err := devstack.FindRoot(".")
	if err != nil {
		t.Logf("no screenshot %s: %v", name, err)
		return
	}
	dir := filepath.Join(root, ".lift", "screenshots")
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}

// browserShop is a server with the demo catalog's shop and four live
// tests: a price test on the tee (50/50, the variant at $24), a style test
// splitting 30/70 among the 80% of visitors it takes in, a redirect
// from the sweater's page to the bag's, and a test for mobile visitors only.
type browserShop struct {
	s                      *server
	domain                 string
	shopID                 int64
	price, style, redirect string
	mobileOnly             string // audience: mobile devices only
}

func newBrowserShop(t *testing.T) *browserShop {
	t.Helper()
	const secret = "browser-test-secret"
	s := newServer(t, func(c *config.Config) { c.Platform.WebhookSecret, c.SigningSecret = secret, secret })
	ctx := context.Background()
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	domain := lifttest.Name("browser-") + ".myshopify.com"
	shop, _, err := seedShop(ctx, s.app.DB, domain, f)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Hour)
	live := func(tt *experiment.Test) string {
		tt.ShopID, tt.Status, tt.AssignmentVersion = shop.ID, experiment.StatusActive, 1
		tt.CreatedAt, tt.UpdatedAt, tt.StartedAt = started, started, &started
		started = started.Add(time.Second)
		lifttest.PutTest(t, s.app.DB, tt)
		return strconv.FormatInt(tt.ID, 10)
	}
	var prices []string
	for _, v := range []string{"44001", "44002", "44003", "44004"} {
		prices = append(prices, `{"product_variant_id":"gid://shopify/ProductVariant/`+v+`","price":{"amount":"24.00","currency":"USD"}}`)
	}
	b := &browserShop{s: s, domain: domain, shopID: shop.ID}
	b.price = live(&experiment.Test{Type: experiment.TypePrice, Name: "Tee at $24", TrafficAllocation: 100,
		Shared: map[string]json.RawMessage{"price": json.RawMessage(`{"product_ids":["gid://shopify/Product/8101"]}`)},
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50},
			{Index: 1, Name: "$24", Split: 50, Content: json.RawMessage(`{"prices":[` + strings.Join(prices, ",") + `]}`)}}})
	b.style = live(&experiment.Test{Type: experiment.TypeVisualEditor, Name: "Green prices", TrafficAllocation: 80,
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 30},
			{Index: 1, Name: "Green", Split: 70, Content: json.RawMessage(`{"custom_css":".price{color:#0a7a3d}"}`)}}})
	b.redirect = live(&experiment.Test{Type: experiment.TypeURLRedirect, Name: "Sweater to bag", TrafficAllocation: 100,
		Shared: map[string]json.RawMessage{"url_redirect": json.RawMessage(`{"source_path":"/demo/products/8102"}`)},
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50},
			{Index: 1, Name: "Bag", Split: 50, Content: json.RawMessage(`{"destination":"/demo/products/8105"}`)}}})
	b.mobileOnly = live(&experiment.Test{Type: experiment.TypeVisualEditor, Name: "Mobile banner", TrafficAllocation: 100,
		Audience: json.RawMessage(`{"devices":["mobile","tablet"]}`),
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50},
			{Index: 1, Name: "Banner", Split: 50, Content: json.RawMessage(`{"custom_css":"header{background:#fde}"}`)}}})
	stop, err := s.app.startWorker(ctx, time.Second) // processes the order webhooks
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return b
}

// url is a demo page whose changes may apply up to 30 s after it opens (the
// anti-flicker deadline, 2 s by default): a loaded CI box is slow, and these
// tests are about groups, not deadlines (flicker tests those).
func (b *browserShop) url(path string) string {
	return b.s.url + path + "?" + url.Values{"shop": {b.domain}, "lift_timeout": {"30000"}}.Encode()
}

// chCount polls a ClickHouse count until it reaches want (rows arrive
// through the WAL's flusher and the webhook worker) or 30 s pass.
func (b *browserShop) chCount(t *testing.T, want uint64, query string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got uint64
	for {
		if err := b.s.app.Warehouse.Conn().QueryRow(context.Background(), query, args...).Scan(&got); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if got >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != want {
		t.Errorf("%s %v = %d, want %d", query, args, got, want)
	}
}

func TestBrowserDemoStore(t *testing.T) {
	browser := startBrowser(t)
	b := newBrowserShop(t)
	t.Run("config and tracker over the real router", func(t *testing.T) { b.endpoints(t) })
	t.Run("visitors browse, keep their group and order", func(t *testing.T) { b.journeys(t, browser) })
	t.Run("forced groups stick and redirects apply", func(t *testing.T) { b.forced(t, browser) })
	t.Run("200 visitors split as configured", func(t *testing.T) { b.split(t, browser) })
	t.Run("tests bucket independently", func(t *testing.T) { b.independent(t, browser) })
	t.Run("a slow config never flips a price", func(t *testing.T) { b.flicker(t, browser) })
	t.Run("a redirected visitor never sees the page it leaves", func(t *testing.T) { b.redirectFlicker(t, browser) })
	t.Run("template test links carry the view, and its pages never show without it", func(t *testing.T) { b.templateLinks(t, browser) })
	t.Run("a visual edit's CSS shows from the first frame", func(t *testing.T) { b.visualEditFlicker(t, browser) })
	// Last: its live theme test would send half of the visitors above
	// through a preview redirect.
	t.Run("a preview theme is kept for the session", func(t *testing.T) { b.previewTheme(t, browser) })
}

// previewTheme forces a visitor into a theme test's variant: the first page
// moves to ?preview_theme_id (the platform's way to show an unpublished
// theme), and the next pages, which the platform renders in that theme for
// the session (Shopify.theme.id), load once, without a second redirect.
func (b *browserShop) previewTheme(t *testing.T, browser context.Context) {
	tt := b.startLate(t, experiment.TypeTheme, "Holiday theme", `{"theme_id":"gid://shopify/OnlineStoreTheme/1202"}`)
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	search := func() string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := open(ctx, b.url("/demo/")+"&lift_force="+strconv.FormatInt(tt.ID, 10)+":1"); err != nil {
		t.Fatal(err)
	}
	if s := search(); !strings.Contains(s, "preview_theme_id=1202") {
		t.Fatalf("the variant's first page is at %q, want it moved to preview_theme_id=1202", s)
	}
	if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
		t.Fatal(err)
	}
	if s := search(); strings.Contains(s, "preview_theme_id") {
		t.Fatalf("a page in the preview theme already was moved again to %q: every page would load twice", s)
	}
	b.themeFlicker(t, ctx)
}

// independent asks the loaded tracker (lift.bucket) where 4,000 visitor ids
// fall in two 50/50 tests: under the current scheme a visitor's group in one
// says nothing of its group in the other (P(same group) ≈ ½, 5 standard
// errors allowed); scheme 1, kept for tests started before it, had test
// ids 1 and 3 split visitors in step (P ≈ 0.05), which is why it was left.
func (b *browserShop) independent(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	if _, err := open(ctx, b.url("/demo/")); err != nil {
		t.Fatal(err)
	}
	same := func(scheme int, x, y string) float64 {
		p, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fmt.Sprintf(`(() => {
  let same = 0;
  for (let i = 0; i < 4000; i++) {
    const v = 'visitor-' + i;
    same += (lift.bucket(v, {id: %q, bucketing: %d}).split < 5000) === (lift.bucket(v, {id: %q, bucketing: %d}).split < 5000);
  }
  return same / 4000;
})()`, x, scheme, y, scheme)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, pair := range [][2]string{{"1", "3"}, {"41", "50"}, {"31", "48"}, {b.price, b.price + "1"}} {
		if p := same(experiment.CurrentBucketing, pair[0], pair[1]); math.Abs(p-0.5) > 0.04 {
			t.Errorf("tests %s and %s: P(same group) = %.3f under scheme %d, want about 0.5", pair[0], pair[1], p, experiment.CurrentBucketing)
		}
	}
	if p := same(1, "1", "3"); p > 0.2 {
		t.Errorf("scheme 1, tests 1 and 3: P(same group) = %.3f; the check above would not see the fault it guards", p)
	}
}

// journey is one visitor's way through the store, as placed in ClickHouse.
type journey struct {
	visitor, order string
	group          int
}

// journeys sends visitors through the store until both price groups have
// ordered: product page, reload, a second tab, add to cart, checkout.
func (b *browserShop) journeys(t *testing.T, browser context.Context) {
	var done []journey
	seen := map[int]bool{}
	for i := 0; i < 16 && len(seen) < 2; i++ {
		j := b.journey(t, browser)
		if !seen[j.group] {
			seen[j.group] = true
			done = append(done, j)
		}
	}
	if len(seen) < 2 {
		t.Fatalf("16 visitors all landed in one price group: %v", seen)
	}
	for _, j := range done {
		// The tee at the group's price, and the US Standard rate the
		// checkout chose first ($6.95), recorded as the order's shipping.
		revenue := map[int]float64{0: 28 + 6.95, 1: 24 + 6.95}[j.group]
		b.chCount(t, 1, `SELECT count() FROM orders FINAL WHERE experiment_id = ? AND order_id = ? AND visitor_id = ?
			AND test_group = ? AND toFloat64(revenue) = ? AND toFloat64(shipping) = 6.95 AND shipping_recorded = 1`,
			b.price, j.order, j.visitor, j.group, revenue)
		// Recorded once, though the visitor loaded five pages in two tabs.
		b.chCount(t, 1, `SELECT count() FROM assignments WHERE experiment_id = ? AND visitor_id = ? AND test_group = ? AND is_bot = 0
			AND device = 'desktop' AND visitor_type = 'new' AND reason = 'random_split'`,
			b.price, j.visitor, j.group)
		b.chCount(t, 1, `SELECT count() FROM events WHERE experiment_id = ? AND visitor_id = ? AND event_type = 'checkout_completed'`,
			b.price, j.visitor)
		b.chCount(t, 1, `SELECT count() FROM events WHERE experiment_id = ? AND visitor_id = ? AND event_type = 'product_added_to_cart'`,
			b.price, j.visitor)
	}
}

// journey runs one visitor, with screenshots of its pages named by group.
func (b *browserShop) journey(t *testing.T, browser context.Context) journey {
	t.Helper()
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	first, err := open(ctx, b.url("/demo/products/8101"))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := first.Assignments[b.price]
	if !ok || first.Visitor == "" || a.Reason != "random_split" {
		t.Fatalf("lift state %s: no random assignment to the price test %s", first.groups(), b.price)
	}
	want := map[int]string{0: "$28.00", 1: "$24.00"}[a.Group]
	price, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.price[data-variant="44001"]`)))
	if err != nil || price != want {
		t.Fatalf("group %d sees the tee at %q (%v), want %s", a.Group, price, err, want)
	}
	screenshot(t, ctx, fmt.Sprintf("demo-product-group%d.png", a.Group))
	// The same visitor keeps its groups across a reload and in another tab.
	again, err := open(ctx, b.url("/demo/products/8101"))
	if err != nil || again.groups() != first.groups() {
		t.Fatalf("after a reload %s (%v), before %s", again.groups(), err, first.groups())
	}
	tab, closeTab := chromedp.NewContext(ctx)
	other, err := open(tab, b.url("/demo/"))
	closeTab()
	if err != nil || other.groups() != first.groups() {
		t.Fatalf("in a second tab %s (%v), first tab %s", other.groups(), err, first.groups())
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#add"), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.CSS("#added")))
	if err != nil {
		t.Fatalf("add to cart: %v", err)
	}
	if _, err := open(ctx, b.url("/demo/cart")); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, fmt.Sprintf("demo-cart-group%d.png", a.Group))
	if _, err := open(ctx, b.url("/demo/checkout")); err != nil {
		t.Fatal(err)
	}
	clickCtx, cancelClick := context.WithTimeout(ctx, 10*time.Second)
	defer cancelClick()
	// The order charges the rate chosen when it is placed: wait for the
	// rates, whose first is chosen.
	if err := chromedp.Do(clickCtx, chromedp.WaitVisible(chromedp.CSS(`#shipping-rates[data-state="shown"] input:checked`)),
		chromedp.Click(chromedp.CSS("#place-order"), chromedp.NodeVisible)); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerHTML`))
		t.Fatalf("place order: %v\n%s", err, html)
	}
	outcome, err := chromedp.Run(ctx, chromedp.Poll[string](`!document.getElementById('order-confirmation').hidden ? 'placed' :
			!document.getElementById('order-error').hidden && document.getElementById('order-error').textContent`,
		chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil || outcome != "placed" {
		t.Fatalf("checkout: %q %v", outcome, err)
	}
	order, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#order-id")))
	if err != nil || order == "" {
		t.Fatalf("no order id on the confirmation: %v", err)
	}
	screenshot(t, ctx, fmt.Sprintf("demo-order-group%d.png", a.Group))
	return journey{visitor: first.Visitor, order: order, group: a.Group}
}

// endpoints reads /api/storefront/config (the real service on Postgres)
// and /lift.js as a storefront does, and logs their headers.
func (b *browserShop) endpoints(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/api/storefront/config?shop=" + b.domain, "application/json; charset=utf-8"},
		{"/lift.js", "text/javascript; charset=utf-8"},
	} {
		req, _ := http.NewRequest("GET", b.s.url+c.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h := resp.Header
		t.Logf("GET %s: %d, %d bytes; Cache-Control: %s; ETag: %s; Content-Type: %s; Content-Encoding: %s; Access-Control-Allow-Origin: %s",
			c.path, resp.StatusCode, len(body), h.Get("Cache-Control"), h.Get("ETag"), h.Get("Content-Type"),
			h.Get("Content-Encoding"), h.Get("Access-Control-Allow-Origin"))
		if resp.StatusCode != 200 || h.Get("ETag") == "" || h.Get("Cache-Control") == "" || h.Get("Content-Type") != c.want {
			t.Errorf("GET %s = %d %v", c.path, resp.StatusCode, h)
		}
		req.Header.Set("If-None-Match", h.Get("ETag"))
		if again, err := http.DefaultTransport.RoundTrip(req); err != nil || again.StatusCode != 304 {
			t.Errorf("GET %s with If-None-Match: %v %v", c.path, again, err)
		} else {
			again.Body.Close()
		}
		if c.path == "/lift.js" {
			continue
		}
		var cfg experiment.StorefrontConfig
		if err := json.Unmarshal(body, &cfg); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tt := range cfg.Tests {
			ids = append(ids, tt.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint([]string{b.price, b.style, b.redirect, b.mobileOnly}) || strings.Contains(string(body), "Tee at $24") {
			t.Errorf("config = %s, want tests %s %s %s oldest first, without names", body, b.price, b.style, b.redirect)
		}
	}
}

// forced: ?lift_force is a QA view. The tab that opens it sees the forced
// group on its next pages too (the redirect test's variant sends it from the
// sweater to the bag), but nothing of it is recorded or counted: no
// assignment is sent for the forced test, which is left out of
// experimentIds() and the cart attributes (orders and events are not
// attributed to it), and another tab of the same visitor gets its own group.
func (b *browserShop) forced(t *testing.T, browser context.Context) {
	type view struct {
		Path    string   `json:"path"`
		IDs     []string `json:"ids"`
		Cart    string   `json:"cart"`
		Kept    string   `json:"kept"`
		Session string   `json:"session"`
	}
	read := func(ctx context.Context) view {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[view](`({path: location.pathname, ids: lift.experimentIds(),
			cart: lift.cartAttributes()._lift_assignments, kept: localStorage.getItem('_lift_force') || '',
			session: sessionStorage.getItem('_lift_force') || ''})`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		group    int
		wantPath string
	}{{1, "/demo/products/8105"}, {0, "/demo/products/8102"}} {
		ctx, cancel := newVisitor(t, browser)
		defer cancel()
		force := b.url("/demo/products/8102") + "&lift_force=" + b.redirect + ":" + strconv.Itoa(c.group)
		if _, err := open(ctx, force); err != nil {
			t.Fatal(err)
		}
		// Without the parameter the tab keeps the forced group.
		st, err := open(ctx, b.url("/demo/products/8102"))
		if err != nil {
			t.Fatal(err)
		}
		a, v := st.Assignments[b.redirect], read(ctx)
		if a.Group != c.group || a.Reason != "force_assign_group" || v.Path != c.wantPath {
			t.Errorf("forced into %d: group %d reason %q at %s, want %s", c.group, a.Group, a.Reason, v.Path, c.wantPath)
		}
		if slices.Contains(v.IDs, b.redirect) || strings.Contains(v.Cart, b.redirect+":") || v.Kept != "" ||
			!strings.Contains(v.Session, `"`+b.redirect+`"`) {
			t.Errorf("forced into %d: the QA view is counted or kept beyond the tab's session: %+v", c.group, v)
		}
		if !slices.Contains(v.IDs, b.price) {
			t.Errorf("forced into %d: the visitor's other tests are no longer counted: %+v", c.group, v)
		}
		// Another tab of the visitor: its own group, by the split.
		tab, closeTab := chromedp.NewContext(ctx)
		other, err := open(tab, b.url("/demo/"))
		closeTab()
		if o := other.Assignments[b.redirect]; err != nil || o.Reason != "random_split" {
			t.Errorf("forced into %d: another tab has %+v (%v), want its own random_split group", c.group, o, err)
		}
		// Its other tests are recorded (once); the forced one is not, though
		// the other tab then entered the visitor into it by the split.
		b.chCount(t, 1, `SELECT count() FROM assignments WHERE experiment_id = ? AND visitor_id = ?`, b.price, st.Visitor)
		b.chCount(t, 1, `SELECT count() FROM assignments WHERE experiment_id = ? AND visitor_id = ?`, b.mobileOnly, st.Visitor)
		b.chCount(t, 0, `SELECT count() FROM assignments WHERE experiment_id = ? AND visitor_id = ?
			AND reason LIKE 'force_assign%'`, b.redirect, st.Visitor)
	}
}

// split sends 200 fresh visitors to the home page and checks each test's
// split against its configuration within binomial 99.9% bounds, in the
// browser and in ClickHouse's recorded assignments.
func (b *browserShop) split(t *testing.T, browser context.Context) {
	visitors, workers := 200, 4
	if n, err := strconv.Atoi(os.Getenv("LIFT_BROWSER_VISITORS")); err == nil && n > 0 {
		visitors = n // a quicker look while working on the tracker
	}
	var mu sync.Mutex
	counts := map[string]map[int]int{b.price: {}, b.style: {}, b.mobileOnly: {}}
	var outOfAudience int
	visitorIDs := map[string]bool{}
	styleGroups := map[int][]string{} // the style test's visitors by group
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One incognito context per worker, emptied between visitors
			// (cookies, localStorage, sessionStorage): each visitor is new
			// to Lift, without paying for a new renderer process each.
			ctx, cancel := newVisitor(t, browser)
			defer cancel()
			for range jobs {
				st, err := open(ctx, b.url("/demo/"))
				if err == nil {
					err = forget(ctx)
				}
				if err != nil {
					t.Error(err)
					continue
				}
				mu.Lock()
				visitorIDs[st.Visitor] = true
				for id, c := range counts {
					c[st.Assignments[id].Group]++
				}
				if a := st.Assignments[b.mobileOnly]; a.Group == -1 && a.Reason == "audience_targeting_excluded" {
					outOfAudience++
				}
				g := st.Assignments[b.style].Group
				styleGroups[g] = append(styleGroups[g], st.Visitor)
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < visitors; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	t.Logf("%d browser visitors in %s: price %v, style %v", visitors, time.Since(start).Round(time.Millisecond),
		counts[b.price], counts[b.style])
	if len(visitorIDs) != visitors {
		t.Fatalf("%d distinct visitor ids over %d fresh browsers", len(visitorIDs), visitors)
	}
	if outOfAudience != visitors {
		t.Errorf("%d of %d desktop visitors kept out of the mobile-only test, want all", outOfAudience, visitors)
	}
	price, style := counts[b.price], counts[b.style]
	withinBinomial(t, "price test: group 1 of all", price[1], visitors, 0.5)
	withinBinomial(t, "style test: in the test (80% allocation)", style[0]+style[1], visitors, 0.8)
	withinBinomial(t, "style test: group 1 of those in it", style[1], style[0]+style[1], 0.7)
	// What the browsers decided is what Lift recorded, once per visitor.
	for _, g := range []int{-1, 0, 1} {
		ids := styleGroups[g]
		if len(ids) == 0 {
			continue // an empty array has no type for has() on 18.16
		}
		b.chCount(t, uint64(len(ids)), `SELECT count() FROM assignments WHERE experiment_id = ? AND test_group = ?
			AND has(?, visitor_id) AND is_bot = 0`, b.style, g, ids)
	}
}

// forget clears what the browser context keeps of the visitor: the next
// page load is a visitor Lift has never seen.
func forget(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`localStorage.clear(); sessionStorage.clear()`),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, network.ClearBrowserCookies, cdp.Empty{})
			return err
		}))
}

// withinBinomial checks k successes of n against probability p: |k - np| within
// 3.29 standard deviations (two-sided 99.9%).
func withinBinomial(t *testing.T, what string, k, n int, p float64) {
	t.Helper()
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	if math.Abs(float64(k)-mean) > 3.29*sd {
		t.Errorf("%s: %d of %d, want %.1f ± %.1f (99.9%%)", what, k, n, mean, 3.29*sd)
	}
}
