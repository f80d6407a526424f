package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The tracker's answers to the second browser audit (B2-*), in chromium on
// the demo store, on a shop of its own: its extra tests (two redirects that
// point at each other, visual-editor scripts) would change the pages the
// other browser tests look at.
func TestBrowserTracker(t *testing.T) {
	browser := startBrowser(t)
	b := newBrowserShop(t)
	t.Run("track before ready is sent once the session is known", func(t *testing.T) { b.earlyTrack(t, browser) })
	t.Run("track before a failed ready is dropped with one warning", func(t *testing.T) { b.earlyTrackFails(t, browser) })
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
	if warns := s.Warns; len(warns) != 1 || !strings.Contains(warns[0], "2 tracked events dropped") {
		t.Errorf("console warnings %q, want one naming the 2 dropped events", s.Warns)
	}
	for _, u := range s.Beacons {
		if strings.Contains(u, "/api/track/event") {
			t.Errorf("an event was sent without a session: %q", s.Beacons)
		}
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
