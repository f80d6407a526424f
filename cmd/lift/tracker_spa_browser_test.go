package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The B2-12 answers: a storefront that routes in the browser (a headless
// one) changes its address with history.pushState and the back button; the
// tests play its router on the demo's home page.

// spaRedirect: a visitor in the variants of both redirects (8104 to 8103,
// and 8103 back to 8104) on the home page, whose router pushes 8104, is
// sent to 8103 with its query, in one document load, and stays there: the
// redirect leaves the loop stop for the page it opens, as on a page load.
func (b *browserShop) spaRedirect(t *testing.T, browser context.Context, x trackerTests) {
	ctx, cancel := b.forcedTab(t, browser, x.toBag, x.back)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`history.pushState({}, '', '/demo/products/8104' + location.search)`))
	for try := 0; err == nil && try < 5; try++ { // the redirect replaces the page under the poll
		if err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`location.pathname === '/demo/products/8103' &&
			document.documentElement.getAttribute('data-lift-ready') === '1'`,
			chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err == nil {
			break
		}
		if try < 4 {
			err = nil
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a loop would have moved on by now, as finalURL allows
	type state struct {
		Path  string   `json:"path"`
		Ref   string   `json:"ref"`
		Shop  string   `json:"shop"`
		Loads []string `json:"loads"`
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[state](`(q => ({path: location.pathname, ref: q.get('ref'), shop: q.get('shop'),
		loads: JSON.parse(sessionStorage.getItem('__loads') || '[]')}))(new URLSearchParams(location.search))`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Path != "/demo/products/8103" || s.Ref != "lift" || s.Shop != b.domain || len(s.Loads) != 1 {
		t.Errorf("pushState to 8104: %+v; want 8103?ref=lift with shop=%s, after one document load", s, b.domain)
	}
}

// sentBodies records in __sent the body of every beacon a page sends.
const sentBodies = `window.__sent = [];
(function () {
  var beacon = navigator.sendBeacon.bind(navigator);
  navigator.sendBeacon = function (u, body) {
    if (body && body.text) body.text().then(function (t) { window.__sent.push(JSON.parse(t)); });
    return beacon(u, body);
  };
})();`

// spaViews: each route change is one page view at its new path, whoever
// reports it: the pushState hook and then the router's lift.page(), or
// lift.page() first; a replaceState of the query alone is no new page;
// the back button is. The server gets one page_viewed and one
// observe/session per view.
func (b *browserShop) spaViews(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	onEveryPage(t, ctx, sentBodies)
	st, err := open(ctx, b.url("/demo/"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Assignments[b.price].Group < 0 {
		t.Fatalf("the visitor is not in the price test: %s", st.groups())
	}
	tctx, tcancel := context.WithTimeout(ctx, pageTimeout) // a view never sent fails, not hangs
	defer tcancel()
	views, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](
		routeTour(`__sent.filter(e => e.eventType === 'page_viewed').map(e => e.pagePath)`), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/demo/", "/demo/spa-a", "/demo/spa-b", "/demo/spa-a", "/demo/spa-c"}; !slices.Equal(views, want) {
		t.Errorf("page_viewed sent for %q, want %q", views, want)
	}
	for path, n := range map[string]uint64{"/demo/spa-a": 2, "/demo/spa-b": 1, "/demo/spa-c": 1} {
		b.chCount(t, n, `SELECT count() FROM events WHERE experiment_id = ? AND visitor_id = ? AND event_type = 'page_viewed'
			AND page_path = ?`, b.price, st.Visitor, path)
		b.chCount(t, n, `SELECT count() FROM sessions WHERE experiment_id = ? AND visitor_id = ? AND page_path = ?`,
			b.price, st.Visitor, path)
	}
}

// routeTour walks the visitor through client-side routes, each reported
// more than one way: /demo/spa-a by the pushState hook and then the
// router's lift.page(), a replaceState of its query alone, /demo/spa-b by
// lift.page() first, back to spa-a and lift.page() once more, then
// /demo/spa-c, the last, so a second view or run of any before it shows.
// It waits for each route's page_viewed in __sent (sentBodies) and then
// evaluates result: five views in all, /demo/ included.
func routeTour(result string) string {
	return `(async () => {
  const until = (p, n) => new Promise(ok => (function poll() {
    __sent.filter(e => e.eventType === 'page_viewed' && e.pagePath === p).length >= n ? ok() : setTimeout(poll, 10);
  })());
  history.pushState({}, '', '/demo/spa-a' + location.search);
  await until('/demo/spa-a', 1);
  await lift.page();
  history.replaceState({}, '', '/demo/spa-a?tab=2');
  history.pushState({}, '', '/demo/spa-b' + location.search);
  await lift.page();
  await until('/demo/spa-b', 1);
  history.back();
  await until('/demo/spa-a', 2);
  await lift.page();
  history.pushState({}, '', '/demo/spa-c' + location.search);
  await until('/demo/spa-c', 1);
  return ` + result + `;
})()`
}

// spaRouter plays a router that renders a route once its data has come:
// __router(path, state) pushes path (the query kept) and writes the route's
// page marks on <body> at once, and renders <main> 50 ms later: state.html
// anew, or, as a framework that reuses the route's elements does, the price
// element kept with its variant (state.variant) and its text node
// (state.text) changed in place. The back button renders the route it
// returns to from its state. __rendered counts the renders.
const spaRouter = `window.__router = window.__router || (function () {
  function render(s) {
    document.body.setAttribute('data-lift-page-type', s.type);
    document.body.setAttribute('data-lift-product-id', s.product || '');
    setTimeout(function () {
      var el = document.querySelector('main [data-lift-variant-id]');
      if (s.html === undefined) { el.setAttribute('data-lift-variant-id', s.variant); el.firstChild.data = s.text; }
      else document.querySelector('main').innerHTML = s.html;
      window.__rendered = (window.__rendered || 0) + 1;
    }, 50);
  }
  addEventListener('popstate', function (e) { if (e.state) render(e.state); });
  return function (path, s) { history.pushState(s, '', path + location.search); render(s); };
})();`

// teeRoute is a step of routes: the tee's route at path, its price
// rendered as the catalog's ($28) for size S.
func teeRoute(path string) string {
	return `['` + path + `', {type: 'product', product: '8101', html: '<h1>Organic Cotton Tee</h1><p class="prices">' +
		'<span class="price" data-variant="44001" data-lift-price data-lift-variant-id="44001">$28.00</span></p>'}]`
}

// routes drives spaRouter through steps (a JavaScript list of [path,
// state], or ['back'] for the back button) and gives, once each route is
// rendered, its path and the text of its price.
func routes(t *testing.T, ctx context.Context, steps ...string) []string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	got, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](spaRouter+`(async () => {
  const out = [];
  for (const [path, s] of [`+strings.Join(steps, ", ")+`]) {
    const n = window.__rendered || 0;
    if (path === 'back') history.back(); else __router(path, s);
    await new Promise(ok => (function poll() { (window.__rendered || 0) > n ? ok() : setTimeout(poll, 10); })());
    out.push(location.pathname + ' ' + document.querySelector('main [data-lift-variant-id]').textContent);
  }
  return out;
})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// spaPrices: a visitor whom the split puts in the $24 group of the price
// test goes from the home page to the tee's route, whose price the router
// renders as the catalog's $28 50 ms after the pushState: the visitor sees
// $24, the price lift.price gives the cart, whose attributes carry the
// group. A route that reuses the element for another product (its variant
// and text changed in place) shows that product's catalog price; back to
// the tee, and to its M size in place, $24 again. The group is the one
// the document drew.
func (b *browserShop) spaPrices(t *testing.T, browser context.Context) {
	ctx, cancel, vid := b.drawnInto(t, browser, b.price, 1)
	defer cancel()
	st, err := open(ctx, b.url("/demo/"))
	if err != nil || st.Visitor != vid || st.Assignments[b.price].Group != 1 {
		t.Fatalf("the home page: %s (%v), want %s in group 1 of %s", st.groups(), err, vid, b.price)
	}
	got := routes(t, ctx, teeRoute("/demo/products/8101"),
		`['/demo/products/8106', {type: 'product', product: '8106', variant: '44016', text: '$32.00'}]`, `['back']`,
		`['/demo/spa-tee-m', {type: 'product', product: '8101', variant: '44002', text: '$28.00'}]`)
	want := []string{"/demo/products/8101 $24.00", "/demo/products/8106 $32.00", "/demo/products/8101 $24.00", "/demo/spa-tee-m $24.00"}
	if !slices.Equal(got, want) {
		t.Errorf("the $24 visitor's routes showed %q, want %q", got, want)
	}
	type seen struct {
		Shown  string   `json:"shown"`
		Group  int      `json:"group"`
		Reason string   `json:"reason"`
		IDs    []string `json:"ids"`
		Cart   string   `json:"cart"`
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[seen](`({shown: (lift.price('44002') || {}).amount || '',
		group: lift.assignments['`+b.price+`'].group, reason: lift.assignments['`+b.price+`'].reason,
		ids: lift.experimentIds(), cart: lift.cartAttributes()._lift_assignments})`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Shown != "24.00" || s.Group != 1 || s.Reason != "random_split" || !slices.Contains(s.IDs, b.price) ||
		!strings.Contains(s.Cart, b.price+":1") {
		t.Errorf("after the routes: %+v; want lift.price 24.00 and group 1 of %s as drawn, counted (%s:1)", s, b.price, b.price)
	}
}

// spaScripts: the visual edit's custom_js runs once per page view, route
// changes included: the pushState hook and the router's lift.page() that
// report one route run it once, a change of the query alone not at all,
// the back button again. A control visitor's routes run none.
func (b *browserShop) spaScripts(t *testing.T, browser context.Context, x trackerTests) {
	for group, want := range map[int][]string{1: {"/demo/", "/demo/spa-a", "/demo/spa-b", "/demo/spa-a", "/demo/spa-c"}, 0: {}} {
		ctx, cancel := newVisitor(t, browser)
		onEveryPage(t, ctx, sentBodies)
		if _, err := open(ctx, b.url("/demo/")+fmt.Sprintf("&lift_force=%s:%d", x.script, group)); err != nil {
			cancel()
			t.Fatal(err)
		}
		tctx, tcancel := context.WithTimeout(ctx, pageTimeout)
		runs, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](routeTour(`window.__runs || []`), chromedp.EvalAwaitPromise))
		tcancel()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(runs, want) {
			t.Errorf("group %d of the visual edit: custom_js ran on %q, want %q", group, runs, want)
		}
	}
}

// spaQAView: a QA view (lift_force) shows its forced groups on its routes
// as on its pages: forced into the price test's $24 group and the visual
// edit's, the tee's route shows $24 and runs the edit's custom_js; forced
// out of both, $28 and no script. Neither is counted: both tests stay out
// of the experiment ids, the cart attributes and the route's
// product_viewed.
func (b *browserShop) spaQAView(t *testing.T, browser context.Context, x trackerTests) {
	for _, c := range []struct {
		group int
		price string
		runs  []string
	}{{1, "$24.00", []string{"/demo/", "/demo/products/8101"}}, {-1, "$28.00", []string{}}} {
		ctx, cancel := newVisitor(t, browser)
		onEveryPage(t, ctx, sentBodies)
		force := fmt.Sprintf("&lift_force=%s:%d,%s:%d", b.price, c.group, x.script, c.group)
		if _, err := open(ctx, b.url("/demo/")+force); err != nil {
			cancel()
			t.Fatal(err)
		}
		got := routes(t, ctx, teeRoute("/demo/products/8101"))
		type seen struct {
			Runs   []string `json:"runs"`
			IDs    []string `json:"ids"`
			Cart   string   `json:"cart"`
			Viewed []string `json:"viewed"`
		}
		tctx, tcancel := context.WithTimeout(ctx, pageTimeout)
		s, err := chromedp.Run(tctx, chromedp.Evaluate[seen](`new Promise(ok => (function poll() {
  const v = __sent.find(e => e.eventType === 'product_viewed' && e.pagePath === '/demo/products/8101');
  v ? ok({runs: window.__runs || [], ids: lift.experimentIds(), cart: lift.cartAttributes()._lift_assignments,
    viewed: v.experimentIds}) : setTimeout(poll, 10);
})())`, chromedp.EvalAwaitPromise))
		tcancel()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"/demo/products/8101 " + c.price}; !slices.Equal(got, want) || !slices.Equal(s.Runs, c.runs) {
			t.Errorf("forced to group %d: the route showed %q and custom_js ran on %q; want %q and %q", c.group, got, s.Runs, want, c.runs)
		}
		for _, id := range []string{b.price, x.script} {
			if slices.Contains(s.IDs, id) || slices.Contains(s.Viewed, id) || inCart(s.Cart, id) {
				t.Errorf("forced to group %d: test %s is counted: %+v", c.group, id, s)
			}
		}
	}
}

// spaDeclined: a visitor who declined analytics (Global Privacy Control)
// gets the store as it is on its routes too, a QA link notwithstanding:
// the tee's route keeps the catalog's $28, no custom_js runs and nothing
// is sent.
func (b *browserShop) spaDeclined(t *testing.T, browser context.Context, x trackerTests) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	watchTracker(t, ctx, `Object.defineProperty(navigator, 'globalPrivacyControl', {get: function () { return true; }});`)
	tctx, tcancel := context.WithTimeout(ctx, pageTimeout)
	defer tcancel()
	err := chromedp.Do(tctx, chromedp.Navigate(b.url("/demo/")+fmt.Sprintf("&lift_force=%s:1,%s:1", b.price, x.script)),
		chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute('data-lift-ready') === 'declined'`,
			chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	got := routes(t, ctx, teeRoute("/demo/products/8101"))
	type seen struct {
		Runs    []string `json:"runs"`
		Beacons int      `json:"beacons"`
	}
	s, err := chromedp.Run(tctx, chromedp.Evaluate[seen](`lift.page().then(() => ({runs: window.__runs || [], beacons: __beacons.length}))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/demo/products/8101 $28.00"}; !slices.Equal(got, want) || len(s.Runs) != 0 || s.Beacons != 0 {
		t.Errorf("a declined visitor's route showed %q, %+v; want %q, no custom_js run, nothing sent", got, s, want)
	}
}

// spaLate: the known $24 visitor's tee page past its deadline (lateKnown)
// counts it in no group of the price test, and so do its routes: the page
// hydrated after the tracker ran (hydrate) and the tee's route keep the
// catalog's $28 as rendered, lift.price gives the catalog's, and the test
// stays late, out of the experiment ids and the cart. No test ran
// custom_js: all were late on the page.
func (b *browserShop) spaLate(t *testing.T, browser context.Context) {
	ctx, cancel := b.lateTeePage(t, browser)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](hydrate)); err != nil {
		t.Fatal(err)
	}
	want := []string{"$28.00 $28.00", "$28.00 $28.00"}
	if s := b.readFirstLoad(t, ctx); !slices.Equal(s.Hydrated, want) || s.Shown != "" || slices.Contains(s.IDs, b.price) || s.Cart != "" {
		t.Errorf("the late page hydrated: %+v; want prices %q and test %s in neither its ids nor its cart", s, want, b.price)
	}
	if got, want := routes(t, ctx, teeRoute("/demo/spa-tee")), []string{"/demo/spa-tee $28.00"}; !slices.Equal(got, want) {
		t.Errorf("the late page's route showed %q, want %q", got, want)
	}
	s := b.readTee(t, ctx)
	if s.Price != "$28.00" || s.Shown != "" || !s.Late || slices.Contains(s.IDs, b.price) || inCart(s.Cart, b.price) {
		t.Errorf("the late page's route: %+v; want $28.00 and test %s late, in neither its ids nor its cart", s, b.price)
	}
	runs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__runs || []`))
	if err != nil || len(runs) != 0 {
		t.Errorf("custom_js ran on %q (%v), want nowhere: every test was late on the page", runs, err)
	}
}

// hydrate plays a storefront that hydrates its page after the tracker has
// painted it (data-lift-ready on <html> comes after the paint): 50 ms
// later it renders the tee's prices anew at the catalog's $28 and adds a
// sticky bar with the tee's price, also $28; 30 ms after that it writes $28
// into both elements' text nodes in place, as a re-render does.
// __hydrated holds, a task after each render, the two prices' texts: what
// the visitor is left with.
const hydrate = `(function poll() {
  var html = document.documentElement; // none yet before the page's first byte
  if (!html || !html.hasAttribute('data-lift-ready') || !document.querySelector('.prices')) return setTimeout(poll, 5);
  var tee = '<span class="price" data-variant="44001" data-lift-price data-lift-variant-id="44001">$28.00</span>';
  var els = function () { return [document.querySelector('.prices .price[data-variant="44001"]'), document.getElementById('sticky-price')]; };
  var seen = function () { setTimeout(function () {
    window.__hydrated = (window.__hydrated || []).concat([els().map(function (el) { return el.textContent; }).join(' ')]);
  }, 0); };
  setTimeout(function () {
    document.querySelector('.prices').innerHTML = tee;
    var bar = document.createElement('div');
    bar.innerHTML = tee.replace('class="price"', 'id="sticky-price"');
    document.body.appendChild(bar);
    seen();
    setTimeout(function () { els().forEach(function (el) { el.firstChild.data = '$28.00'; }); seen(); }, 30);
  }, 50);
})();`

// firstLoad is what the tee's page showed and sent once hydrate rendered
// its prices twice: the prices' texts after each render, lift.price of the
// tee, the price test's assignment, the experiment ids, the price test's
// group in the cart attributes (empty for none), and what the page sent
// (sentBodies): "a" per assignment of the price test recorded, and per
// product_viewed "viewed in" or "viewed out" of the price test.
type firstLoad struct {
	Hydrated []string `json:"hydrated"`
	Shown    string   `json:"shown"`
	Group    int      `json:"group"`
	Reason   string   `json:"reason"`
	IDs      []string `json:"ids"`
	Cart     string   `json:"cart"`
	Sent     []string `json:"sent"`
}

func (b *browserShop) readFirstLoad(t *testing.T, ctx context.Context) firstLoad {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	s, err := chromedp.Run(tctx, chromedp.Evaluate[firstLoad](`new Promise(ok => (function poll() {
  if ((window.__hydrated || []).length < 2) return setTimeout(poll, 10);
  setTimeout(() => {
    const a = (lift.assignments || {})['`+b.price+`'] || {group: -1, reason: ''};
    ok({hydrated: __hydrated, shown: (lift.price('44001') || {}).amount || '', group: a.group, reason: a.reason,
      ids: lift.experimentIds(), cart: (lift.cartAttributes()._lift_assignments || '').split(',')
        .filter(x => x.split(':')[0] === '`+b.price+`').map(x => x.split(':')[1]).join(),
      sent: (window.__sent || []).filter(e => e.eventType === 'product_viewed' || e.experimentId === '`+b.price+`')
        .map(e => e.eventType !== 'product_viewed' ? 'a' : e.experimentIds.indexOf('`+b.price+`') >= 0 ? 'viewed in' : 'viewed out')});
  }, 500); // the beacons' bodies are read asynchronously
})())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// firstLoadPrices: a storefront that renders its price elements anew, or
// again in place, after the tracker painted the first page (a hydrating
// Hydrogen or Next.js page) shows the visitor's group price, as a route
// does: the $24 visitor the split drew sees $24 on the tee's re-rendered
// and added elements, is counted once (one assignment recorded, one
// product_viewed) in the group it was drawn in; a QA view forced into the
// $24 group sees $24 and is counted nowhere; a visitor who declined
// analytics keeps the catalog's $28 and sends nothing.
func (b *browserShop) firstLoadPrices(t *testing.T, browser context.Context) {
	ctx, cancel, _ := b.drawnInto(t, browser, b.price, 1)
	defer cancel()
	onEveryPage(t, ctx, sentBodies+hydrate)
	if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
		t.Fatal(err)
	}
	want := []string{"$24.00 $24.00", "$24.00 $24.00"}
	s := b.readFirstLoad(t, ctx)
	if !slices.Equal(s.Hydrated, want) || s.Shown != "24.00" || s.Group != 1 || s.Reason != "random_split" ||
		!slices.Contains(s.IDs, b.price) || s.Cart != "1" || !slices.Equal(s.Sent, []string{"a", "viewed in"}) {
		t.Errorf("the $24 visitor's hydrated tee page: %+v; want prices %q, group 1 of %s as drawn, one assignment and one product_viewed",
			s, want, b.price)
	}

	qa, qaCancel := newVisitor(t, browser)
	defer qaCancel()
	onEveryPage(t, qa, sentBodies+hydrate)
	if _, err := open(qa, b.url("/demo/products/8101")+"&lift_force="+b.price+":1"); err != nil {
		t.Fatal(err)
	}
	s = b.readFirstLoad(t, qa)
	if !slices.Equal(s.Hydrated, want) || s.Group != 1 || s.Reason != "force_assign_group" || slices.Contains(s.IDs, b.price) ||
		s.Cart != "" || !slices.Equal(s.Sent, []string{"viewed out"}) {
		t.Errorf("a QA view's hydrated tee page: %+v; want prices %q, test %s counted nowhere", s, want, b.price)
	}

	no, noCancel := newVisitor(t, browser)
	defer noCancel()
	watchTracker(t, no, `Object.defineProperty(navigator, 'globalPrivacyControl', {get: function () { return true; }});`+hydrate)
	tctx, tcancel := context.WithTimeout(no, pageTimeout)
	defer tcancel()
	err := chromedp.Do(tctx, chromedp.Navigate(b.url("/demo/products/8101")+"&lift_force="+b.price+":1"),
		chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute('data-lift-ready') === 'declined'`,
			chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	s = b.readFirstLoad(t, no)
	beacons, err := chromedp.Run(tctx, chromedp.Evaluate[int](`__beacons.length`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"$28.00 $28.00", "$28.00 $28.00"}; !slices.Equal(s.Hydrated, want) || s.Shown != "" || beacons != 0 {
		t.Errorf("a declined visitor's hydrated tee page: %+v, %d beacons; want prices %q, nothing sent", s, beacons, want)
	}
}

// drawnInto is a new visitor whom the split puts in group of test, its
// tab forgotten (no tracker state, no cookie) but for the visitor id: it
// is counted in the group as any visitor drawn into it, unlike a forced one.
func (b *browserShop) drawnInto(t *testing.T, browser context.Context, test string, group int) (context.Context, context.CancelFunc, string) {
	t.Helper()
	ctx, cancel := newVisitor(t, browser)
	if _, err := open(ctx, b.url("/demo/")); err != nil {
		cancel()
		t.Fatal(err)
	}
	vid := b.visitorIn(t, ctx, test, group)
	if err := forget(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	setVisitor(t, ctx, b.s.url, vid)
	return ctx, cancel, vid
}
