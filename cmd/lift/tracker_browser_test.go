package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// The tracker's answers to the second browser audit (B2-*), in chromium on
// the demo store, on a shop of its own: its extra tests (two redirects that
// point at each other, visual-editor scripts) would change the pages the
// other browser tests look at.
func TestBrowserTracker(t *testing.T) {
	browser := startBrowser(t)
	b := newBrowserShop(t)
	x := b.startTrackerTests(t)
	t.Run("track before ready is sent once the session is known", func(t *testing.T) { b.earlyTrack(t, browser) })
	t.Run("track before a failed ready is dropped with one warning", func(t *testing.T) { b.earlyTrackFails(t, browser) })
	t.Run("a redirect keeps the landing query and the fragment", func(t *testing.T) { b.redirectQuery(t, browser, x) })
	t.Run("two redirects pointing at each other send the visitor once", func(t *testing.T) { b.redirectLoop(t, browser, x) })
	t.Run("custom_js runs after the group, and a broken one breaks nothing", func(t *testing.T) { b.customJS(t, browser, x) })
	t.Run("a CUBOT phone is a mobile visitor, a crawler a bot", func(t *testing.T) { b.userAgents(t, browser) })
	t.Run("a second tab opened before the first has its session shares it", func(t *testing.T) { b.twoTabs(t, browser) })
	t.Run("a preview link shows its draft's group and records nothing", func(t *testing.T) { b.previewLink(t, browser) })
	t.Run("a visitor who declined analytics is neither stored nor tracked", func(t *testing.T) { b.declined(t, browser) })
	t.Run("a known visitor past the deadline sees its kept group", func(t *testing.T) { b.cachedGroup(t, browser) })
	t.Run("a known visitor late without a kept config is not counted on that page", func(t *testing.T) { b.lateKnown(t, browser) })
	t.Run("a route change to a redirect's source redirects", func(t *testing.T) { b.spaRedirect(t, browser, x) })
	t.Run("a route change is one page view", func(t *testing.T) { b.spaViews(t, browser) })
	t.Run("a route rendered after its pushState shows the visitor's prices", func(t *testing.T) { b.spaPrices(t, browser) })
	t.Run("a route runs custom_js once per view", func(t *testing.T) { b.spaScripts(t, browser, x) })
	t.Run("a QA view's routes show its forced groups and count none", func(t *testing.T) { b.spaQAView(t, browser, x) })
	t.Run("a declined visitor's routes stay as served", func(t *testing.T) { b.spaDeclined(t, browser, x) })
	t.Run("a late page's routes stay as served", func(t *testing.T) { b.spaLate(t, browser) })
	t.Run("a first page rendered after the tracker painted shows the visitor's prices", func(t *testing.T) { b.firstLoadPrices(t, browser) })
	t.Run("a tag without async counts the product page it runs on", func(t *testing.T) { b.syncTag(t, browser) })
}

// declined (B2-9): a visitor whose browser sends Global Privacy Control, or
// whom the platform's customer privacy API says no for, sees the store as
// it is; the tracker stores nothing (no identifier, no config kept) and
// sends nothing, and the shop's own lift.track calls do nothing.
func (b *browserShop) declined(t *testing.T, browser context.Context) {
	for name, says := range map[string]string{
		"gpc":     `Object.defineProperty(navigator, 'globalPrivacyControl', {get: function () { return true; }});`,
		"privacy": `window.Shopify = {customerPrivacy: {analyticsProcessingAllowed: function () { return false; }}};`,
	} {
		ctx, cancel := newVisitor(t, browser)
		watchTracker(t, ctx, says)
		type seen struct {
			Price   string `json:"price"`
			Cookies string `json:"cookies"`
			Stored  bool   `json:"stored"`
			Beacons int    `json:"beacons"`
		}
		err := chromedp.Do(ctx, chromedp.Navigate(b.url("/demo/products/8101")))
		if err == nil {
			err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute('data-lift-ready') === 'declined'`,
				chromedp.WithPollingTimeout(pageTimeout)))
		}
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", name, err)
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[seen](`lift.track('product_added_to_cart', {}); ({price: document.querySelector('.price[data-variant="44001"]').textContent,
				cookies: document.cookie, beacons: window.__beacons.length,
				stored: [localStorage, sessionStorage].some(s => Object.keys(s).some(k => k.indexOf('_lift_') === 0))})`))
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(s.Cookies, "_lift_") || s.Stored || s.Beacons != 0 || s.Price != "$28.00" {
			t.Errorf("%s: a declined visitor got %+v; want the catalog price, no _lift_ cookie or storage, nothing sent", name, s)
		}
	}
}

// previewLink (B2-1): a preview link of a draft price test shows its group's
// price on that page and the tab's next ones; the previewer is in no
// running test and nothing is recorded for the draft.
func (b *browserShop) previewLink(t *testing.T, browser context.Context) {
	now := time.Now().UTC()
	tt := &experiment.Test{ShopID: b.shopID, Type: experiment.TypePrice, Status: experiment.StatusDraft, Name: "preview me",
		TrafficAllocation: 100, AssignmentVersion: 1, Bucketing: experiment.CurrentBucketing, CreatedAt: now, UpdatedAt: now,
		Shared: map[string]json.RawMessage{"price": json.RawMessage(`{"product_ids":["gid://shopify/Product/8101"]}`)},
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Cheaper", Split: 50,
			Content: json.RawMessage(`{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/44001","price":{"amount":"11.00","currency":"USD"}}]}`)}}}
	lifttest.PutTest(t, b.s.app.DB, tt)
	token := experiment.SignPreview(b.s.app.SigningSecret, tt.ID, 1, now.Add(time.Hour))
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	for i, u := range []string{b.url("/demo/products/8101") + "&lift_preview=" + url.QueryEscape(token), b.url("/demo/products/8101")} {
		st, err := open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		type seen struct {
			Price string   `json:"price"`
			IDs   []string `json:"ids"`
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[seen](`({price: document.querySelector('.price[data-variant="44001"]').textContent,
			ids: lift.experimentIds()})`))
		if err != nil {
			t.Fatal(err)
		}
		if s.Price != "$11.00" || len(s.IDs) != 0 || st.Assignments[strconv.FormatInt(tt.ID, 10)].Reason != "preview" {
			t.Fatalf("page %d of the preview shows %+v, assignments %s; want $11.00 in no counted test", i, s, st.groups())
		}
	}
	time.Sleep(2 * time.Second) // what the pages sent has reached the WAL's flusher by now
	b.chCount(t, 0, "SELECT count() FROM assignments WHERE experiment_id = ?", strconv.FormatInt(tt.ID, 10))
}

// trackerTests are the tests startTrackerTests adds to the shop.
type trackerTests struct {
	toBag, back    string // 8104 → 8103?ref=lift&utm_source=lift, and 8103 → 8104
	broken, syntax string // visual edits whose custom_js throws, or does not parse
	script         string // a visual edit with custom_css and custom_js (which lists the paths it ran on in __runs)
}

func (b *browserShop) startTrackerTests(t *testing.T) trackerTests {
	t.Helper()
	started := time.Now().UTC().Add(-time.Minute)
	put := func(typ experiment.Type, shared map[string]json.RawMessage, content string) string {
		tt := &experiment.Test{ShopID: b.shopID, Type: typ, Status: experiment.StatusActive, Name: "tracker " + string(typ),
			TrafficAllocation: 100, AssignmentVersion: 1, Bucketing: experiment.CurrentBucketing, Shared: shared,
			CreatedAt: started, UpdatedAt: started, StartedAt: &started,
			Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50},
				{Index: 1, Name: "Variant", Split: 50, Content: json.RawMessage(content)}}}
		started = started.Add(time.Second)
		lifttest.PutTest(t, b.s.app.DB, tt)
		return strconv.FormatInt(tt.ID, 10)
	}
	source := func(p string) map[string]json.RawMessage {
		return map[string]json.RawMessage{"url_redirect": json.RawMessage(`{"source_path":"` + p + `"}`)}
	}
	var x trackerTests
	x.toBag = put(experiment.TypeURLRedirect, source("/demo/products/8104"), `{"destination":"/demo/products/8103?ref=lift&utm_source=lift"}`)
	x.back = put(experiment.TypeURLRedirect, source("/demo/products/8103"), `{"destination":"/demo/products/8104"}`)
	// The broken scripts run before the good one (tests go oldest first).
	x.broken = put(experiment.TypeVisualEditor, nil, `{"custom_js":"throw new Error('merchant bug')"}`)
	x.syntax = put(experiment.TypeVisualEditor, nil, `{"custom_js":"this is not javascript ("}`)
	// The script records what it found: the group's CSS already applied,
	// and the path of each page or route it ran on.
	x.script = put(experiment.TypeVisualEditor, nil, `{"custom_css":"body{outline:3px solid rgb(1, 2, 3)}",
		"custom_js":"window.__ve = (window.__ve || []).concat([getComputedStyle(document.body).outlineColor]); document.body.setAttribute('data-ve', 'ran'); window.__runs = (window.__runs || []).concat([location.pathname]);"}`)
	time.Sleep(6 * time.Second) // the storefront config is rendered anew every 5 s
	return x
}

// watchTracker wraps console.warn and navigator.sendBeacon on every page the
// tab opens from now on, to list the warnings (__warns) and the beacons'
// addresses (__beacons), and runs more (a script of the shop) after them.
func watchTracker(t *testing.T, ctx context.Context, more string) {
	t.Helper()
	src := `window.__warns = []; window.__beacons = [];
(function () {
  var warn = console.warn, beacon = navigator.sendBeacon.bind(navigator);
  console.warn = function () { window.__warns.push([].map.call(arguments, String).join(' ')); return warn.apply(console, arguments); };
  navigator.sendBeacon = function (u, body) { window.__beacons.push(String(u)); return beacon(u, body); };
})();` + more
	onEveryPage(t, ctx, src)
}

// onEveryPage runs src in every page the tab opens from now on, before
// the page's own scripts.
func onEveryPage(t *testing.T, ctx context.Context, src string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
}

// hold pauses the tab's requests to pattern (the DevTools Fetch domain) and
// lets each go on after d, or fails it as a network error when fail is set.
func hold(t *testing.T, ctx context.Context, pattern string, d time.Duration, fail bool) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev, err := range chromedp.Events(ctx, fetch.RequestPaused) {
			if err != nil {
				return
			}
			go func() {
				time.Sleep(d)
				chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					if fail {
						_, err := cdp.Call(ctx, tg, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonFailed})
						return err
					}
					_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
					return err
				}))
			}()
		}
	}()
}

// earlyTracks is a shop's code that calls lift.track as soon as window.lift
// exists, before lift.ready (__early: the session lift knew then).
const earlyTracks = `(function poll() {
  if (!window.lift || !window.lift.track) return setTimeout(poll, 5);
  window.__early = lift.session;
  lift.track('product_added_to_cart', {productIds: ['8101'], variantIds: ['44001']});
  lift.track('newsletter_signup');
})();`

// earlyTrack (B2-8): a shop calls lift.track twice while get-session is
// 1.5 s late; both events reach ClickHouse with the visitor's test, once.
func (b *browserShop) earlyTrack(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	watchTracker(t, ctx, earlyTracks)
	hold(t, ctx, "*/api/get-session*", 1500*time.Millisecond, false)
	st, err := open(ctx, b.url("/demo/products/8101"))
	if err != nil {
		t.Fatal(err)
	}
	early, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.__early`))
	if err != nil || early != "" {
		t.Fatalf("the shop's calls came with session %q (%v): not before lift.ready, the test shows nothing", early, err)
	}
	if st.Assignments[b.price].Group < 0 {
		t.Fatalf("the visitor is not in the price test: %s", st.groups())
	}
	b.chCount(t, 1, `SELECT count() FROM events WHERE experiment_id = ? AND visitor_id = ? AND event_type = 'product_added_to_cart'`,
		b.price, st.Visitor)
	b.chCount(t, 1, `SELECT count() FROM events WHERE experiment_id = ? AND visitor_id = ? AND custom_name = 'newsletter_signup'`,
		b.price, st.Visitor)
}

// earlyTrackFails (B2-8): when get-session fails, lift.ready settles in
// error; the calls queued before it are dropped, no event is sent, and the
// console says so once.
func (b *browserShop) earlyTrackFails(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	watchTracker(t, ctx, earlyTracks)
	hold(t, ctx, "*/api/get-session*", 500*time.Millisecond, true)
	tctx, tcancel := context.WithTimeout(ctx, pageTimeout)
	defer tcancel()
	err := chromedp.Do(tctx, chromedp.Navigate(b.url("/demo/products/8101")),
		chromedp.Poll[chromedp.Void](`document.documentElement.getAttribute('data-lift-ready') === 'error'`,
			chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		Early   *string  `json:"early"`
		Warns   []string `json:"warns"`
		Beacons []string `json:"beacons"`
	}
	// A call after the failure is dropped too, without a second warning.
	s, err := chromedp.Run(ctx, chromedp.Evaluate[seen](`lift.track('product_added_to_cart'),
		({early: window.__early, warns: window.__warns, beacons: window.__beacons})`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Early == nil || *s.Early != "" {
		t.Fatalf("the shop's calls were not made before lift.ready: %+v", s)
	}
	// The shop's broken visual-edit scripts (customJS) warn on their own.
	warns := slices.DeleteFunc(slices.Clone(s.Warns), func(w string) bool { return strings.Contains(w, "custom_js of test") })
	if len(warns) != 1 || !strings.Contains(warns[0], "2 tracked events dropped") {
		t.Errorf("console warnings %q, want one naming the 2 dropped events", s.Warns)
	}
	for _, u := range s.Beacons {
		if strings.Contains(u, "/api/track/event") {
			t.Errorf("an event was sent without a session: %q", s.Beacons)
		}
	}
}

// finalURL waits until the tab's page is ready at a path other than from,
// and a second more (a redirect loop would go on), and gives its address
// and how many documents the tab loaded (seen by the loads script).
func finalURL(t *testing.T, ctx context.Context, u string) (*url.URL, int) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	var err error
	for try := 0; try < 5; try++ { // a redirect replaces the page under the poll
		if err = chromedp.Do(tctx, waitReady()); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	type state struct {
		Href  string   `json:"href"`
		Loads []string `json:"loads"`
	}
	s, err := chromedp.Run(tctx, chromedp.Evaluate[state](`({href: location.href, loads: JSON.parse(sessionStorage.getItem('__loads') || '[]')})`))
	if err != nil {
		t.Fatal(err)
	}
	final, err := url.Parse(s.Href)
	if err != nil {
		t.Fatal(err)
	}
	return final, len(s.Loads)
}

// forcedTab is a new visitor's tab in the QA view of tests' variants
// (lift_force on the home page), recording the documents it loads (__loads).
func (b *browserShop) forcedTab(t *testing.T, browser context.Context, tests ...string) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := newVisitor(t, browser)
	var force []string
	for _, id := range tests {
		force = append(force, id+":1")
	}
	if _, err := open(ctx, b.url("/demo/")+"&lift_force="+strings.Join(force, ",")); err != nil {
		cancel()
		t.Fatal(err)
	}
	onEveryPage(t, ctx, loads)
	return ctx, cancel
}

// redirectQuery (B2-6): a visitor landing from a campaign keeps its query
// (utm_source, gclid, the shop parameter) and its #fragment when sent to a
// redirect's destination; the destination's own parameters win a clash.
func (b *browserShop) redirectQuery(t *testing.T, browser context.Context, x trackerTests) {
	campaign := "&utm_source=news&gclid=abc#reviews"
	for _, c := range []struct {
		test, from, to string
		want           url.Values
	}{
		{b.redirect, "/demo/products/8102", "/demo/products/8105", url.Values{"utm_source": {"news"}, "gclid": {"abc"}, "shop": {b.domain}}},
		{x.toBag, "/demo/products/8104", "/demo/products/8103",
			url.Values{"utm_source": {"lift"}, "ref": {"lift"}, "gclid": {"abc"}, "shop": {b.domain}}},
	} {
		ctx, cancel := b.forcedTab(t, browser, c.test)
		final, _ := finalURL(t, ctx, b.url(c.from)+campaign)
		cancel()
		q := final.Query()
		for k, v := range c.want {
			if !slices.Equal(q[k], v) {
				t.Errorf("test %s: %s sent the visitor to %s: %s = %q, want %q", c.test, c.from, final, k, q[k], v)
			}
		}
		if final.Path != c.to || final.Fragment != "reviews" {
			t.Errorf("test %s: %s sent the visitor to %s, want %s#reviews", c.test, c.from, final, c.to)
		}
	}
}

// redirectLoop (B2-5): tests sending 8104 to 8103 and 8103 to 8104; a
// visitor in both variants who opens 8104 lands on 8103 in two loads and
// stays there, the page shown. Opening 8103 itself then still redirects:
// only a page reached by a Lift redirect is left alone.
func (b *browserShop) redirectLoop(t *testing.T, browser context.Context, x trackerTests) {
	ctx, cancel := b.forcedTab(t, browser, x.toBag, x.back)
	defer cancel()
	final, n := finalURL(t, ctx, b.url("/demo/products/8104"))
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.className`))
	if final.Path != "/demo/products/8103" || n != 2 || err != nil || strings.Contains(hidden, "lift-hide") {
		t.Errorf("opening 8104: at %s after %d loads, <html class=%q> (%v); want 8103 after 2 loads, shown", final, n, hidden, err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`sessionStorage.removeItem('__loads')`)); err != nil {
		t.Fatal(err)
	}
	if final, n := finalURL(t, ctx, b.url("/demo/products/8103")); final.Path != "/demo/products/8104" || n != 2 {
		t.Errorf("opening 8103 afresh: at %s after %d loads, want 8104 after 2", final, n)
	}
}

// customJS (B2-4): a variant visitor's page runs its visual edit's
// custom_js once, after the group's CSS applies, though two other tests'
// scripts throw and fail to parse before it; the tracker still gets ready
// and warns once per broken script. A control visitor runs none.
func (b *browserShop) customJS(t *testing.T, browser context.Context, x trackerTests) {
	for _, group := range []int{1, 0} {
		ctx, cancel := newVisitor(t, browser)
		watchTracker(t, ctx, "")
		force := fmt.Sprintf("&lift_force=%s:%d,%s:%d,%s:%d", x.broken, group, x.syntax, group, x.script, group)
		if _, err := open(ctx, b.url("/demo/")+force); err != nil { // open waits for data-lift-ready="1"
			cancel()
			t.Fatal(err)
		}
		type seen struct {
			VE    []string `json:"ve"`
			Ran   string   `json:"ran"`
			Warns []string `json:"warns"`
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[seen](`({ve: window.__ve || [], ran: document.body.getAttribute('data-ve') || '',
			warns: window.__warns})`))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if group == 0 {
			if len(s.VE) != 0 || s.Ran != "" || len(s.Warns) != 0 {
				t.Errorf("a control visitor ran a variant's script: %+v", s)
			}
			continue
		}
		if !slices.Equal(s.VE, []string{"rgb(1, 2, 3)"}) || s.Ran != "ran" {
			t.Errorf("the variant's custom_js ran as %+v, want once, after its CSS (outline rgb(1, 2, 3))", s)
		}
		var broken int
		for _, w := range s.Warns {
			if strings.Contains(w, "custom_js of test "+x.broken) && strings.Contains(w, "merchant bug") ||
				strings.Contains(w, "custom_js of test "+x.syntax) && strings.Contains(w, "SyntaxError") {
				broken++
			}
		}
		if broken != 2 {
			t.Errorf("warnings %q, want one for each broken script (tests %s, %s)", s.Warns, x.broken, x.syntax)
		}
	}
}

// userAgents (B2-13): a CUBOT phone (its maker's name ends in "bot") is a
// mobile visitor, as the server's ingest counts it, and its assignments
// are not sent as a bot's; a crawler's agent still makes a bot.
func (b *browserShop) userAgents(t *testing.T, browser context.Context) {
	for _, c := range []struct{ ua, want string }{
		{"Mozilla/5.0 (Linux; Android 12; CUBOT KINGKONG 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", "mobile"},
		{"Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", "mobile"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "bot"},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bot"},
		{chromeUA, "desktop"},
	} {
		ctx, cancel := newVisitor(t, browser)
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: c.ua})
			return err
		}))
		var device string
		if err == nil {
			_, err = open(ctx, b.url("/demo/"))
		}
		if err == nil {
			device, err = chromedp.Run(ctx, chromedp.Evaluate[string](`lift.device`))
		}
		cancel()
		if err != nil || device != c.want {
			t.Errorf("%s: device %q (%v), want %s", c.ua, device, err, c.want)
		}
	}
}

// twoTabs (B2-13): a new visitor's second tab, opened while the first one
// waits for its session, gets the same session as the first: get-session
// answers the first tab after 300 ms and the second after 1.5 s, and the
// second keeps the session the first wrote to the cookie meanwhile. (The
// second tab opens once the first has its visitor id: two tabs whose
// scripts start in the same instant would still make two visitors.)
func (b *browserShop) twoTabs(t *testing.T, browser context.Context) {
	first, cancel := newVisitor(t, browser)
	defer cancel()
	hold(t, first, "*/api/get-session*", 300*time.Millisecond, false)
	second, closeSecond := chromedp.NewContext(first)
	defer closeSecond()
	if err := chromedp.Do(second); err != nil {
		t.Fatal(err)
	}
	hold(t, second, "*/api/get-session*", 1500*time.Millisecond, false)
	tctx, tcancel := context.WithTimeout(first, pageTimeout)
	defer tcancel()
	err := chromedp.Do(tctx, chromedp.Navigate(b.url("/demo/products/8101")),
		chromedp.Poll[chromedp.Void](`!!(window.lift && lift.visitor) && !lift.session`,
			chromedp.WithPollingInterval(5*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	two, err := open(second, b.url("/demo/products/8102"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, waitReady()); err != nil {
		t.Fatal(err)
	}
	one, err := chromedp.Run(tctx, chromedp.Evaluate[liftState](`({visitor: lift.visitor, session: lift.session, assignments: lift.assignments})`))
	if err != nil {
		t.Fatal(err)
	}
	if one.Session == "" || one.Session != two.Session || one.Visitor != two.Visitor {
		t.Errorf("two tabs of one new visitor: visitors %q %q, sessions %q %q; want one of each",
			one.Visitor, two.Visitor, one.Session, two.Session)
	}
}

// visitorIn finds, with the tracker loaded in ctx, a visitor id the split
// puts in group of test: a visitor the test counts, unlike a forced one.
func (b *browserShop) visitorIn(t *testing.T, ctx context.Context, test string, group int) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`fetch('/api/storefront/config?shop=%s').then(r => r.json()).then(cfg => {
  const t = cfg.tests.find(x => x.id === %q);
  for (let i = 0; i < 10000; i++) {
    const v = 'picked-' + Date.now() + '-' + i, at = lift.bucket(v, t);
    if (at.traffic >= t.traffic_allocation) continue;
    let sum = 0;
    for (const g of t.groups) {
      sum += g.weight * 100;
      if (at.split < sum) { if (g.index === %d) return v; break; }
    }
  }
  return '';
})`, url.QueryEscape(b.domain), test, group), chromedp.EvalAwaitPromise))
	if err != nil || v == "" {
		t.Fatalf("no visitor in group %d of test %s: %v", group, test, err)
	}
	return v
}

// setVisitor gives the visitor context ctx the visitor id (cookie _lift_vid)
// before it opens a page of base.
func setVisitor(t *testing.T, ctx context.Context, base, id string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: "_lift_vid", Value: id, URL: base + "/"})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
}
