package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// An image test in chromium on the demo store: a visual edit whose group 1
// shows another picture of the tee (tee-b.svg) in place of the tee's own,
// which the product page marks data-lift-product-image="8101" (with a
// srcset, as themes render it). docs/image-tests.md is the theme contract.
const (
	teeOwn   = "/demo/assets/organic-cotton-tee.svg"
	teeOther = "/demo/assets/tee-b.svg"
)

// heroImage is what the page shows of the tee's first marked picture.
type heroImage struct {
	Src        string `json:"src"`
	Srcset     bool   `json:"srcset"`
	Sizes      bool   `json:"sizes"`
	Applied    string `json:"applied"`
	Visibility string `json:"visibility"`
	Hidden     string `json:"hidden"` // <html>'s class: lift-hide while the snippet hides
	Loaded     string `json:"loaded"` // the picture the browser shows (currentSrc), once loaded
}

const readHero = `(() => {
  const el = document.querySelector('img[data-lift-product-image="8101"]');
  return {src: el.getAttribute('src'), srcset: el.hasAttribute('srcset'), sizes: el.hasAttribute('sizes'),
    applied: el.getAttribute('data-lift-image-applied') || '', visibility: getComputedStyle(el).visibility,
    hidden: document.documentElement.className, loaded: el.complete && el.naturalWidth > 0 ? el.currentSrc : ''};
})()`

// seenImages records the tee's first marked picture from its first parse,
// at every change and frame, in window.__imgs (each change once): its
// file name while visible, "(hidden)" while not.
const seenImages = `window.__imgs = [];
(function () {
  function look() {
    var el = document.querySelector('img[data-lift-product-image="8101"]');
    if (!el) return;
    var v = getComputedStyle(el).visibility === 'hidden' ? '(hidden)' : (el.getAttribute('src') || '').replace(/.*\//, '');
    if (window.__imgs[window.__imgs.length - 1] !== v) window.__imgs.push(v);
  }
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
  (function frame() { look(); requestAnimationFrame(frame); })();
})();`

func TestImageTestBrowser(t *testing.T) {
	browser := startBrowser(t)
	b := newBrowserShop(t)
	id := b.startImageTest(t)
	t.Run("each group sees its picture of the tee", func(t *testing.T) { b.imageGroups(t, browser, id) })
	t.Run("a preview link shows its group's picture", func(t *testing.T) { b.imagePreview(t, browser, id) })
	t.Run("product page views count the test's products only", func(t *testing.T) { b.imageViews(t, browser, id) })
}

// imageViews: a visitor opens another product's page, then the tee's. The
// tracker records a product page view for the test on the tee's only: the
// test names the tee, and its product analytics read the tee's views. The
// views reach ClickHouse in the order sent, so once the tee's is there the
// other's would be too.
func (b *browserShop) imageViews(t *testing.T, browser context.Context, id string) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	if _, err := open(ctx, b.url("/demo/products/8107")); err != nil {
		t.Fatal(err)
	}
	st, err := open(ctx, b.url("/demo/products/8101"))
	if err != nil {
		t.Fatal(err)
	}
	const views = `SELECT count() FROM page_views WHERE experiment_id = ? AND visitor_id = ? AND product_id = ?`
	b.chCount(t, 1, views, id, st.Visitor, "8101")
	b.chCount(t, 0, views, id, st.Visitor, "8107")
}

// startImageTest starts a 50/50 visual edit on the tee whose group 1 shows
// tee-b.svg, as the domain stores an image test, and waits until the
// storefront config carries it.
func (b *browserShop) startImageTest(t *testing.T) string {
	t.Helper()
	shared := map[string]json.RawMessage{"visual_editor": json.RawMessage(`{"product_ids":["gid://shopify/Product/8101"]}`)}
	content := json.RawMessage(`{"images":[{"product_id":"gid://shopify/Product/8101","urls":["` + teeOther + `"]}]}`)
	return b.startVisualTest(t, "Tee photo", shared, content, teeOther)
}

// startVisualTest starts a 50/50 visual edit whose group 1 shows content
// (inserted directly, as the other browser tests insert theirs) and waits
// until the storefront config, rendered anew every 5 s, carries it with
// marker.
func (b *browserShop) startVisualTest(t *testing.T, name string, shared map[string]json.RawMessage, content json.RawMessage, marker string) string {
	t.Helper()
	started := time.Now().UTC().Add(-time.Minute)
	tt := &experiment.Test{ShopID: b.shopID, Type: experiment.TypeVisualEditor, Status: experiment.StatusActive, Name: name,
		TrafficAllocation: 100, AssignmentVersion: 1, Bucketing: experiment.CurrentBucketing,
		CreatedAt: started, UpdatedAt: started, StartedAt: &started, Shared: shared,
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50, Content: content}}}
	lifttest.PutTest(t, b.s.app.DB, tt)
	id := strconv.FormatInt(tt.ID, 10)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(b.s.url + "/api/storefront/config?shop=" + url.QueryEscape(b.domain))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `"id":"`+id+`"`) && strings.Contains(string(body), marker) {
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("the storefront config has no test %s (%s) after 30 s: %s", id, name, body)
		}
	}
}

// hero waits until the tee's first picture has loaded, and reads it.
func hero(t *testing.T, ctx context.Context) heroImage {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`(() => { const el = document.querySelector('img[data-lift-product-image="8101"]');
		return el && el.complete && el.naturalWidth > 0; })()`,
		chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("the tee's picture never loaded: %v", err)
	}
	h, err := chromedp.Run(ctx, chromedp.Evaluate[heroImage](readHero))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// wantHero checks the tee's first picture is want (tee-b.svg, the group's,
// without the srcset and sizes, marked as test id's; or the tee's own, as
// served), shown and loaded.
func wantHero(t *testing.T, what string, h heroImage, want, id string) {
	t.Helper()
	other := want == teeOther
	if h.Src != want || h.Srcset == other || h.Sizes == other || (h.Applied == id) != other ||
		!strings.HasSuffix(h.Loaded, want) || h.Visibility != "visible" || strings.Contains(h.Hidden, "lift-hide") {
		t.Errorf("%s: the tee's picture is %+v; want %s shown and loaded, srcset %v, marked applied %v", what, h, want, !other, other)
	}
}

// imageGroups sends new visitors to the tee's page until both groups of
// the image test are seen: group 1 sees tee-b.svg in place of the tee's own
// picture (its srcset gone, so the browser shows it), shown once the page
// is ready, and again on a picture the page renders after load (within the
// tracker's observer window) or sets back to its own; a further picture of
// the tee keeps its own. Group 0 sees the tee's own throughout. On its next
// page a group 1 visitor never sees the tee's own picture (the snippet
// hides marked pictures until painted), and a group 0 visitor sees no
// picture but its own.
func (b *browserShop) imageGroups(t *testing.T, browser context.Context, id string) {
	watch := func(ctx context.Context) { onEveryPage(t, ctx, seenImages) }
	b.eachGroup(t, browser, id, watch, func(ctx context.Context, a assignment) {
		want := map[int]string{0: teeOwn, 1: teeOther}[a.Group]
		wantHero(t, fmt.Sprintf("group %d", a.Group), hero(t, ctx), want, id)
		// A new visitor's first page: the snippet hides the marked picture
		// until painted, so group 1 never sees the tee's own.
		first, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__imgs`))
		if err != nil || a.Group == 1 && slices.Contains(first, "organic-cotton-tee.svg") {
			t.Errorf("group %d's first page showed the tee's picture as %q (%v)", a.Group, first, err)
		}
		screenshot(t, ctx, fmt.Sprintf("image-test-group%d.png", a.Group))
		b.imageRendered(t, ctx, a.Group, want)

		if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
			t.Fatal(err)
		}
		wantHero(t, fmt.Sprintf("group %d, next page", a.Group), hero(t, ctx), want, id)
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__imgs`))
		if err != nil {
			t.Fatal(err)
		}
		file := want[strings.LastIndex(want, "/")+1:]
		visible := slices.DeleteFunc(slices.Clone(shown), func(s string) bool { return s == "(hidden)" })
		if a.Group == 1 && (slices.Contains(shown, "organic-cotton-tee.svg") || len(shown) == 0 || shown[len(shown)-1] != file) ||
			a.Group == 0 && !slices.Equal(visible, []string{file}) {
			t.Errorf("group %d's next page showed the tee's picture as %q, want %s only (hidden before it in group 1)", a.Group, shown, file)
		}
	})
}

// eachGroup sends new visitors (watch set up on each first) to the tee's
// page until it has seen both groups of test id, and runs check with the
// first visitor of each, on its first page.
func (b *browserShop) eachGroup(t *testing.T, browser context.Context, id string, watch func(context.Context), check func(context.Context, assignment)) {
	t.Helper()
	seen := map[int]bool{}
	for i := 0; i < 16 && len(seen) < 2; i++ {
		func() {
			ctx, cancel := newVisitor(t, browser)
			defer cancel()
			watch(ctx)
			st, err := open(ctx, b.url("/demo/products/8101"))
			if err != nil {
				t.Fatal(err)
			}
			a, ok := st.Assignments[id]
			if !ok || a.Reason != "random_split" || a.Group < 0 {
				t.Fatalf("lift state %s: no random assignment to test %s", st.groups(), id)
			}
			if !seen[a.Group] {
				seen[a.Group] = true
				check(ctx, a)
			}
		}()
	}
	if len(seen) < 2 {
		t.Fatalf("16 visitors all landed in one group of test %s: %v", id, seen)
	}
}

// imageRendered: the page replaces the tee's picture 300 ms after it is
// ready with a new element showing the tee's own (a gallery rendered
// again), adds a second picture of the tee after it, then sets the first
// back to the tee's own (a framework hydrating it). The first shows want
// (the group's picture, or the tee's own in the control), the second its
// own (tee-c.svg: beyond the group's one picture).
func (b *browserShop) imageRendered(t *testing.T, ctx context.Context, group int, want string) {
	t.Helper()
	type rendered struct {
		First   string `json:"first"`
		Srcset  bool   `json:"srcset"`
		Second  string `json:"second"`
		Applied string `json:"applied"`
	}
	const read = `({first: document.getElementById('again').getAttribute('src'), srcset: document.getElementById('again').hasAttribute('srcset'),
		second: document.getElementById('second').getAttribute('src'), applied: document.getElementById('second').getAttribute('data-lift-image-applied') || ''})`
	tctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	// The page's own script: none of it waits for lift.js.
	err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`new Promise(done => setTimeout(() => {
  const old = document.querySelector('img[data-lift-product-image="8101"]'), img = document.createElement('img');
  img.id = 'again'; img.className = old.className; img.alt = old.alt;
  img.setAttribute('data-lift-product-image', '8101');
  img.setAttribute('srcset', '`+teeOwn+` 320w');
  img.setAttribute('src', '`+teeOwn+`');
  old.replaceWith(img);
  const second = document.createElement('img');
  second.id = 'second'; second.setAttribute('data-lift-product-image', '8101'); second.setAttribute('src', '/demo/assets/tee-c.svg');
  img.after(second);
  done();
}, 300))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	poll := func(what string) {
		t.Helper()
		err := chromedp.Do(tctx, chromedp.Poll[chromedp.Void](`document.getElementById('again').getAttribute('src') === '`+want+`'`,
			chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second)))
		if group == 0 {
			time.Sleep(500 * time.Millisecond) // the control's picture must not change meanwhile
		}
		r, rerr := chromedp.Run(tctx, chromedp.Evaluate[rendered](read))
		if err != nil || rerr != nil || r.First != want || r.Srcset != (group == 0) || r.Second != "/demo/assets/tee-c.svg" || r.Applied != "" {
			t.Errorf("group %d, %s: the pictures are %+v (%v %v); want the first %s, srcset %v, the second tee-c.svg as served",
				group, what, r, err, rerr, want, group == 0)
		}
	}
	poll("a picture rendered after load")
	if err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('again').setAttribute('src', '`+teeOwn+`')`)); err != nil {
		t.Fatal(err)
	}
	poll("a picture set back to the tee's own")
}

// imagePreview: a preview link of the image test's group 1 shows its
// picture of the tee, in no counted test.
func (b *browserShop) imagePreview(t *testing.T, browser context.Context, id string) {
	ctx := b.openPreview(t, browser, id, func(context.Context) {})
	wantHero(t, "a preview of group 1", hero(t, ctx), teeOther, id)
	screenshot(t, ctx, "image-test-preview.png")
}

// openPreview opens the tee's page by a preview link of group 1 of test
// id, in a new visitor (watch set up first), and checks the preview alone
// assigned it; the visitor's context ends with t.
func (b *browserShop) openPreview(t *testing.T, browser context.Context, id string, watch func(context.Context)) context.Context {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	token := experiment.SignPreview(b.s.app.SigningSecret, n, 1, time.Now().Add(time.Hour))
	ctx, cancel := newVisitor(t, browser)
	t.Cleanup(cancel)
	watch(ctx)
	st, err := open(ctx, b.url("/demo/products/8101")+"&lift_preview="+url.QueryEscape(token))
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Assignments[id]; a.Group != 1 || a.Reason != "preview" || len(st.Assignments) != 1 {
		t.Fatalf("the preview link's assignments %s; want group 1 of %s by preview alone", st.groups(), id)
	}
	return ctx
}
