package main

import (
	"context"
	"slices"
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
	views, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`(async () => {
  const viewed = () => __sent.filter(e => e.eventType === 'page_viewed').map(e => e.pagePath);
  const until = (p, n) => new Promise(ok => (function poll() {
    viewed().filter(v => v === p).length >= n ? ok() : setTimeout(poll, 10);
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
  history.pushState({}, '', '/demo/spa-c' + location.search); // the last: all before it is sent
  await until('/demo/spa-c', 1);
  return viewed();
})()`, chromedp.EvalAwaitPromise))
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
