package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// seenPrices records, from before the page's first byte, every text the
// tee's price shows while visible ("(hidden)" while the anti-flicker
// snippet hides it): what the visitor could have seen, in order.
const seenPrices = `window.__seen = [];
new MutationObserver(function () {
  var el = document.querySelector('.price[data-variant="44001"]');
  if (!el) return;
  var v = getComputedStyle(el).visibility === 'hidden' ? '(hidden)' : el.textContent;
  if (window.__seen[window.__seen.length - 1] !== v) window.__seen.push(v);
}).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});`

// seenPages records in the tab's sessionStorage (__shown), across its
// pages, the path of every page whose content was rendered while not hidden
// by the anti-flicker snippet's whole-page class: the pages the visitor saw.
// Each entry is the path, then @ and the theme id when the page renders in
// a preview theme (Shopify.theme).
const seenPages = `new MutationObserver(function () {
  if (!document.querySelector('h1') || getComputedStyle(document.documentElement).opacity === '0') return;
  var p = location.pathname + (window.Shopify && Shopify.theme ? '@' + Shopify.theme.id : '');
  var v = JSON.parse(sessionStorage.getItem('__shown') || '[]');
  if (v.indexOf(p) < 0) { v.push(p); sessionStorage.setItem('__shown', JSON.stringify(v)); }
}).observe(document, {subtree: true, childList: true, attributes: true});`

// holdConfig makes every /api/storefront/config request of the visitor's tab
// wait d before it goes out, as on a slow network, and runs watch (what the
// visitor sees: seenPrices, seenPages) on every page it opens from now on.
func holdConfig(t *testing.T, ctx context.Context, d time.Duration, watch string) {
	t.Helper()
	onEveryPage(t, ctx, watch)
	hold(t, ctx, "*/api/storefront/config*", d, false)
}

// flicker: the demo store carries the anti-flicker snippet. A visitor forced
// into the $24 group of the price test, whose config arrives 1.5 s late,
// never sees the $28 control price: the price is hidden until lift.js has
// applied the group. With a 1 s deadline and the config 2.5 s late, a new
// visitor whom the split puts in the $24 group (a forced QA view is never
// counted, so it could not tell) sees the page as served at the deadline,
// the $24 price never appears, and it is not entered into the test on that
// page; the next page, on time, enters it.
func (b *browserShop) flicker(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	seen := func() []string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__seen`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	product := b.url("/demo/products/8101") + "&lift_force=" + b.price + ":1"

	holdConfig(t, ctx, 1500*time.Millisecond, seenPrices)
	if _, err := open(ctx, product); err != nil {
		t.Fatal(err)
	}
	if s := seen(); !settlesOn(s, "$24.00", "$28.00") {
		t.Errorf("on time, the $24 visitor saw the price as %q, want only hidden then $24.00", s)
	}

	// A new visitor of the $24 group (the one above is in the test's QA
	// view), 1 s deadline.
	vid := b.visitorIn(t, ctx, b.price, 1)
	other, cancelOther := newVisitor(t, browser)
	defer cancelOther()
	ctx = other // seen and read look at this visitor from here on
	setVisitor(t, ctx, b.s.url, vid)
	holdConfig(t, ctx, 2500*time.Millisecond, seenPrices)
	product = b.url("/demo/products/8101")
	st, err := open(ctx, strings.Replace(product, "lift_timeout=30000", "lift_timeout=1000", 1))
	if err != nil {
		t.Fatal(err)
	}
	if s := seen(); !settlesOn(s, "$28.00", "$24.00") {
		t.Errorf("past the deadline, the page showed the price as %q, want hidden then $28.00 (as served) only", s)
	}
	type state struct {
		Late     bool     `json:"late"`
		IDs      []string `json:"ids"`
		Cart     string   `json:"cart"`
		Recorded string   `json:"recorded"`
	}
	read := func() state {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[state](`({late: !!lift.assignments[`+"'"+b.price+"'"+`].late,
			ids: lift.experimentIds(), cart: lift.cartAttributes()._lift_assignments,
			recorded: localStorage.getItem('_lift_rec') || ''})`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := read(); !s.Late || slices.Contains(s.IDs, b.price) || strings.Contains(s.Cart, b.price+":") ||
		strings.Contains(s.Recorded, `"`+b.price+`"`) {
		t.Errorf("past the deadline the visitor was entered into test %s: %+v", b.price, s)
	}
	if _, err := open(ctx, product); err != nil {
		t.Fatal(err)
	}
	if s := read(); s.Late || !slices.Contains(s.IDs, b.price) || !strings.Contains(s.Cart, b.price+":1") {
		t.Errorf("on the next page, on time, test %s is missing: %+v", b.price, s)
	}
	if st.Visitor != vid {
		t.Errorf("the visitor is %s, want %s (its _lift_vid cookie)", st.Visitor, vid)
	}
	b.chCount(t, 1, `SELECT count() FROM assignments WHERE experiment_id = ? AND visitor_id = ? AND test_group = 1
		AND reason = 'random_split'`, b.price, st.Visitor)
}

// redirectFlicker: a visitor the redirect test sends from the sweater to the
// bag never sees the sweater's page once Lift knows its group, though the
// config that decides the redirect arrives 1.5 s late: the snippet hides the
// whole page there (lift.js keeps the pages its redirects leave). A control
// visitor sees the sweater at once: only pages a visitor leaves are hidden.
func (b *browserShop) redirectFlicker(t *testing.T, browser context.Context) {
	for _, c := range []struct {
		group     int
		want, not string
	}{{1, "/demo/products/8105", "/demo/products/8102"}, {0, "/demo/products/8102", "/demo/products/8105"}} {
		shown, err := b.shownOpening(t, browser, b.redirect, c.group, seenPages, "/demo/products/8102")
		if err != nil || !slices.Contains(shown, c.want) || slices.Contains(shown, c.not) {
			t.Errorf("group %d opening the sweater saw pages %q (%v), want %s and never %s", c.group, shown, err, c.want, c.not)
		}
	}
}

// shownOpening is what a new visitor forced into group of test saw
// (watch: seenPages, seenViews) on opening path after the home page, whose
// visit told lift.js its groups, while the config is held 1.5 s.
func (b *browserShop) shownOpening(t *testing.T, browser context.Context, test string, group int, watch, path string) ([]string, error) {
	t.Helper()
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	if _, err := open(ctx, b.url("/demo/")+"&lift_force="+test+":"+strconv.Itoa(group)); err != nil {
		t.Fatal(err)
	}
	holdConfig(t, ctx, 1500*time.Millisecond, watch)
	if _, err := open(ctx, b.url(path)); err != nil {
		t.Fatal(err)
	}
	return chromedp.Run(ctx, chromedp.Evaluate[[]string](`JSON.parse(sessionStorage.getItem('__shown') || '[]')`))
}

// themeFlicker: on a later session's first page, a visitor in a theme
// test's variant is moved to the preview theme again, and the page in the
// published theme never shows, though the config arrives 1.5 s late.
func (b *browserShop) themeFlicker(t *testing.T, ctx context.Context) {
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, name := range []string{"_lift_sid", "preview_theme"} { // the visitor and its localStorage stay
			if _, err := cdp.Call(ctx, tg, network.DeleteCookies, network.DeleteCookiesParams{Name: name, URL: b.s.url + "/demo/"}); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	holdConfig(t, ctx, 1500*time.Millisecond, seenPages)
	if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`JSON.parse(sessionStorage.getItem('__shown') || '[]')`))
	if err != nil || !slices.Contains(shown, "/demo/products/8101@1202") || slices.Contains(shown, "/demo/products/8101") {
		t.Errorf("a new session's first page showed %q (%v), want it in the preview theme (@1202) only", shown, err)
	}
}

// loads records in the tab's sessionStorage (__loads) the path and query
// of every document the tab loads from now on.
const loads = `(function () {
  var v = JSON.parse(sessionStorage.getItem('__loads') || '[]');
  v.push(location.pathname + location.search);
  sessionStorage.setItem('__loads', JSON.stringify(v));
})();`

// templateLinks: a visitor in a product template test's variant who clicks
// a product link lands on the product page in its view in one load: the
// link carries ?view=alt, so the page is not loaded in the default template
// and then moved (which happened on every product page). A control
// visitor's link is left as it is.
func (b *browserShop) templateLinks(t *testing.T, browser context.Context) {
	tt := b.startLate(t, experiment.TypeTemplate, "Alt product page", `{"template":"product.alt"}`)
	defer func() { // the tests after this one browse product pages
		tt.Status = experiment.StatusEnded
		lifttest.PutTest(t, b.s.app.DB, tt)
		time.Sleep(6 * time.Second)
	}()
	for _, c := range []struct {
		group int
		view  string
	}{{1, "view=alt"}, {0, ""}} {
		ctx, cancel := newVisitor(t, browser)
		if _, err := open(ctx, b.url("/demo/")+"&lift_force="+strconv.FormatInt(tt.ID, 10)+":"+strconv.Itoa(c.group)); err != nil {
			cancel()
			t.Fatal(err)
		}
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: loads})
			return err
		}), chromedp.Click(chromedp.CSS(`a[href*="/products/"]`), chromedp.NodeVisible))
		// The click replaces the page under the poll: poll again.
		for try := 0; err == nil && try < 5; try++ {
			if err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`location.pathname.indexOf('/products/') >= 0 &&
				document.documentElement.getAttribute('data-lift-ready') === '1'`,
				chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil && try < 4 {
				err = nil
				continue
			}
			break
		}
		var got []string
		if err == nil {
			got, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`JSON.parse(sessionStorage.getItem('__loads') || '[]')`))
		}
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !strings.Contains(got[0], "/products/") || strings.Contains(got[0], "view=") != (c.view != "") ||
			!strings.Contains(got[0], c.view) {
			t.Errorf("group %d clicking a product link loaded %q, want one product page load with %q", c.group, got, c.view)
		}
	}
	b.templateLanding(t, browser, tt.ID)
}

// seenViews is seenPages with each page's template view (?view=) in place
// of its theme: "/demo/products/8103?view=alt", "/demo/products/8103?view=".
const seenViews = `new MutationObserver(function () {
  if (!document.querySelector('h1') || getComputedStyle(document.documentElement).opacity === '0') return;
  var p = location.pathname + '?view=' + (new URLSearchParams(location.search).get('view') || '');
  var v = JSON.parse(sessionStorage.getItem('__shown') || '[]');
  if (v.indexOf(p) < 0) { v.push(p); sessionStorage.setItem('__shown', JSON.stringify(v)); }
}).observe(document, {subtree: true, childList: true, attributes: true});`

// templateLanding: a variant visitor of template test id who opens a
// product page without the view (from a search result, say) never sees it
// in the default template, though the config that moves it to ?view=alt
// arrives 1.5 s late: the snippet hides the whole page until lift.js has
// moved it. A control visitor sees the page at once, as served.
func (b *browserShop) templateLanding(t *testing.T, browser context.Context, id int64) {
	for _, c := range []struct {
		group     int
		want, not string
	}{{1, "/demo/products/8103?view=alt", "/demo/products/8103?view="}, {0, "/demo/products/8103?view=", "/demo/products/8103?view=alt"}} {
		shown, err := b.shownOpening(t, browser, strconv.FormatInt(id, 10), c.group, seenViews, "/demo/products/8103")
		if err != nil || !slices.Contains(shown, c.want) || slices.Contains(shown, c.not) {
			t.Errorf("group %d opening a product page without the view saw %q (%v), want %s and never %s", c.group, shown, err, c.want, c.not)
		}
	}
}

// startLate starts a 50/50 test of typ after the shop's first tests, its
// variant showing content, and waits until the storefront config carries
// it (rendered anew every 5 s).
func (b *browserShop) startLate(t *testing.T, typ experiment.Type, name, content string) *experiment.Test {
	started := time.Now().UTC().Add(-time.Minute)
	tt := &experiment.Test{ShopID: b.shopID, Type: typ, Status: experiment.StatusActive, Name: name,
		TrafficAllocation: 100, AssignmentVersion: 1, Bucketing: experiment.CurrentBucketing,
		CreatedAt: started, UpdatedAt: started, StartedAt: &started,
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50},
			{Index: 1, Name: "Variant", Split: 50, Content: json.RawMessage(content)}}}
	lifttest.PutTest(t, b.s.app.DB, tt)
	time.Sleep(6 * time.Second)
	return tt
}

// seenColors records the headline's colour from its first parse, at every
// frame, in window.__colors (each change once): what the visitor saw.
const seenColors = `window.__colors = [];
(function () {
  function look() {
    var el = document.querySelector('h1');
    if (!el) return;
    var c = getComputedStyle(el).color;
    if (window.__colors[window.__colors.length - 1] !== c) window.__colors.push(c);
  }
  new MutationObserver(look).observe(document, {subtree: true, childList: true});
  (function frame() { look(); requestAnimationFrame(frame); })();
})();`

// visualEditFlicker: a visitor in a visual edit's variant, whose lift.js
// arrives 1.5 s after the page, sees the variant's headline colour from the
// first frame of the next page: the snippet has put the group's CSS in
// <head> (browser audit B2-7 saw the control's for 0.9 s).
func (b *browserShop) visualEditFlicker(t *testing.T, browser context.Context) {
	const red = "rgb(200, 0, 0)"
	tt := b.startLate(t, experiment.TypeVisualEditor, "Red headlines", `{"custom_css":"h1{color:`+red+`!important}"}`)
	defer func() {
		ended := time.Now().UTC()
		tt.Status, tt.EndedAt = experiment.StatusEnded, &ended
		lifttest.PutTest(t, b.s.app.DB, tt)
	}()
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	if _, err := open(ctx, b.url("/demo/")+"&lift_force="+strconv.FormatInt(tt.ID, 10)+":1"); err != nil {
		t.Fatal(err)
	}
	onEveryPage(t, ctx, seenColors)
	hold(t, ctx, "*/lift.js*", 1500*time.Millisecond, false)
	if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
		t.Fatal(err)
	}
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__colors`))
	if err != nil || len(seen) == 0 || slices.ContainsFunc(seen, func(c string) bool { return c != red }) {
		t.Errorf("the variant's visitor saw the headline in %q (%v), want %s from the first frame", seen, err, red)
	}
	early, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById('lift-css-early')`))
	if err != nil || early {
		t.Errorf("the early copy of the group's CSS is still there once lift.js ran (%v)", err)
	}
}
