package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A visual edit's DOM changes (docs/dom-changes.md) in chromium on the demo
// store's tee page (web/demo/assets/product.html): group 1 of the test
// makes one change of each kind, and one whose selector does not parse.
const (
	teeTitle   = "Organic Cotton Tee"
	softTitle  = "The softest tee"
	freeReturn = ` <small class="lift-note">Free returns</small>`
	lateNote   = "Rendered late"
)

// domChanges are group 1's, in the admin panel's format. The broken
// selector (h1[) comes second: the changes after it still apply; so
// does every hiding rule after those of the selectors that would break
// the early style sheet (_lift_css).
var domChanges = []map[string]string{
	{"selector": ".product h1", "action": "set", "attribute": "html", "value": softTitle},
	{"selector": "h1[", "action": "set", "attribute": "html", "value": "broken"},
	// Selectors the page takes but a style sheet would not keep to one
	// rule: no rule in _lift_css hides them (both match nothing to change).
	{"selector": `[title="{"]`, "action": "remove", "attribute": "data-none"},
	{"selector": "main:not(.x", "action": "remove", "attribute": "data-none"},
	{"selector": "#add, .late-note", "action": "append", "attribute": "html", "value": freeReturn},
	{"selector": "#add, .late-note", "action": "append", "attribute": "class", "value": "btn--sale is-new"},
	{"selector": "header span", "action": "remove", "attribute": "class", "value": "shop"},
	{"selector": "#add", "action": "set", "attribute": "title", "value": "Ships today"},
	{"selector": ".product-image", "action": "append", "attribute": "alt", "value": " (front)"},
	{"selector": ".product-image", "action": "remove", "attribute": "sizes"},
	{"selector": ".prices", "action": "set", "attribute": "position", "parent_selector": "#add-form", "insert_before_selector": "label"},
}

// domPage is what the page shows of the elements the changes touch.
type domPage struct {
	Title     string `json:"title"`     // .product h1's html
	Add       string `json:"add"`       // #add's html
	AddClass  string `json:"addClass"`  // #add's class
	AddTitle  string `json:"addTitle"`  // #add's title attribute
	ShopClass string `json:"shopClass"` // header span's class
	Alt       string `json:"alt"`       // the tee picture's alt
	Sizes     bool   `json:"sizes"`     // the tee picture has its sizes
	First     string `json:"first"`     // the add form's first element: P (.prices, moved) or LABEL
	Notes     int    `json:"notes"`     // appended notes in the page
	Late      string `json:"late"`      // .late-note's html, once the page adds it
	LateClass string `json:"lateClass"` // its class
	Marks     int    `json:"marks"`     // elements marked data-lift-dom
}

// domSeen is the page and the tracker's warnings (watchTracker).
type domSeen struct {
	Page  domPage  `json:"page"`
	Warns []string `json:"warns"`
}

const readDOM = `(() => {
  const q = s => document.querySelector(s), add = q('#add'), img = q('.product-image'), late = q('.late-note');
  return {page: {title: q('.product h1').innerHTML, add: add.innerHTML, addClass: add.className, addTitle: add.getAttribute('title') || '',
    shopClass: q('header span').className, alt: img.getAttribute('alt'), sizes: img.hasAttribute('sizes'),
    first: q('#add-form').firstElementChild.tagName, notes: document.querySelectorAll('.lift-note').length,
    late: late ? late.innerHTML : '', lateClass: late ? late.className : '',
    marks: document.querySelectorAll('[data-lift-dom]').length}, warns: window.__warns || []};
})()`

// seenTitles records the tee page's title from its first parse, at every
// change and frame, in window.__titles (each change once): its text while
// visible, "(hidden)" while not.
const seenTitles = `window.__titles = [];
(function () {
  function look() {
    var el = document.querySelector('.product h1');
    if (!el) return;
    var v = getComputedStyle(el).visibility === 'hidden' ? '(hidden)' : el.textContent;
    if (window.__titles[window.__titles.length - 1] !== v) window.__titles.push(v);
  }
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  (function frame() { look(); requestAnimationFrame(frame); })();
})();`

func TestDOMChangesBrowser(t *testing.T) {
	browser := startBrowser(t)
	b := newBrowserShop(t)
	id := b.startDOMTest(t)
	t.Run("each group sees its page", func(t *testing.T) { b.domGroups(t, browser, id) })
	t.Run("a preview link shows its group's changes", func(t *testing.T) { b.domPreview(t, browser, id) })
}

// startDOMTest starts a 50/50 visual edit whose group 1 makes domChanges
// (without the domain's validation, so the bad selector gets through), and
// waits until the storefront config carries it.
func (b *browserShop) startDOMTest(t *testing.T) string {
	t.Helper()
	changes, err := json.Marshal(map[string]any{"dom_changes": domChanges})
	if err != nil {
		t.Fatal(err)
	}
	return b.startVisualTest(t, "Softer tee page", nil, changes, softTitle)
}

// readDOMPage reads what the page shows.
func readDOMPage(t *testing.T, ctx context.Context) domSeen {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	p, err := chromedp.Run(ctx, chromedp.Evaluate[domSeen](readDOM))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantChanged checks the page shows each of group 1's changes once (late:
// the element the page added after load has its appends too), and one
// warning for the selector that does not parse, whatever the observer ran.
func wantChanged(t *testing.T, what string, p domSeen, late bool) {
	t.Helper()
	want := domPage{Title: softTitle, Add: "Add to cart" + freeReturn, AddClass: "btn--sale is-new", AddTitle: "Ships today",
		Alt: teeTitle + " (front)", First: "P", Notes: 1, Marks: 2}
	if late {
		want.Late, want.LateClass, want.Notes, want.Marks = lateNote+freeReturn, "late-note btn--sale is-new", 2, 3
	}
	warns := 0
	for _, w := range p.Warns {
		if strings.Contains(w, "lift: DOM change 1 of test") && strings.Contains(w, "(h1[)") && strings.Contains(w, "SyntaxError") {
			warns++
		}
	}
	if p.Page != want || warns != 1 || len(p.Warns) != 1 {
		t.Errorf("%s: the page shows\n%+v\nwant\n%+v\nand one warning for h1[ (got %q)", what, p.Page, want, p.Warns)
	}
}

// wantUnchanged checks the page is as served.
func wantUnchanged(t *testing.T, what string, p domSeen, late bool) {
	t.Helper()
	want := domPage{Title: teeTitle, Add: "Add to cart", ShopClass: "shop", Alt: teeTitle, Sizes: true, First: "LABEL"}
	if late {
		want.Late, want.LateClass = lateNote, "late-note"
	}
	if p.Page != want || len(p.Warns) != 0 {
		t.Errorf("%s: the page shows\n%+v\nwant it as served\n%+v\n(warnings %q)", what, p.Page, want, p.Warns)
	}
}

// domGroups sends new visitors to the tee's page until both groups of the
// test are seen. Group 1 sees each change once, the broken one skipped
// with a warning; also on an element the page adds 300 ms after it is
// ready, and again on the title the page renders anew, each still once
// however often the observer runs. Group 0 sees the page as served. On
// its next page a group 1 visitor never sees the title as served: the
// snippet hides it (the rule lift.js kept in _lift_css) until changed.
func (b *browserShop) domGroups(t *testing.T, browser context.Context, id string) {
	watch := func(ctx context.Context) { watchTracker(t, ctx, seenTitles) }
	b.eachGroup(t, browser, id, watch, func(ctx context.Context, a assignment) {
		check := map[int]func(*testing.T, string, domSeen, bool){0: wantUnchanged, 1: wantChanged}[a.Group]
		what := fmt.Sprintf("group %d", a.Group)
		check(t, what, readDOMPage(t, ctx), false)
		screenshot(t, ctx, fmt.Sprintf("dom-changes-group%d.png", a.Group))
		b.domRendered(t, ctx, a.Group, check)

		css, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.parse(localStorage.getItem('_lift_css') || '{}').css || ''`))
		if err != nil {
			t.Fatal(err)
		}
		hides := []string{"html.lift-hide .product h1{visibility:hidden!important}",
			"html.lift-hide :is(#add, .late-note){visibility:hidden!important}",
			"html.lift-hide .prices{visibility:hidden!important}"}
		for _, h := range hides {
			if strings.Contains(css, h) != (a.Group == 1) {
				t.Errorf("%s: _lift_css is %q; want %q in it: %v", what, css, h, a.Group == 1)
			}
		}
		if strings.Contains(css, "h1[") || strings.Contains(css, "{\"]") || strings.Contains(css, "main:not") {
			t.Errorf("%s: _lift_css hides a selector that does not parse, or would not end its rule: %q", what, css)
		}

		if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
			t.Fatal(err)
		}
		check(t, what+", next page", readDOMPage(t, ctx), false)
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__titles`))
		if err != nil {
			t.Fatal(err)
		}
		visible := slices.DeleteFunc(slices.Clone(shown), func(s string) bool { return s == "(hidden)" })
		if a.Group == 1 && !slices.Equal(visible, []string{softTitle}) || a.Group == 0 && !slices.Equal(visible, []string{teeTitle}) {
			t.Errorf("%s's next page showed the title as %q; want it changed from the first frame in group 1, as served in group 0", what, shown)
		}
	})
}

// domRendered: 300 ms after the page is ready, its own script adds a note
// the changes' selectors match (.late-note), then renders the title anew
// as served and makes a few more changes the tracker's observer sees (the
// button's label changed in place and back, elements added). In
// group 1 the note gets its appends once and the title is changed again,
// every other change still made once; in group 0 all stays as served.
func (b *browserShop) domRendered(t *testing.T, ctx context.Context, group int, check func(*testing.T, string, domSeen, bool)) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	err := chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`new Promise(done => setTimeout(() => {
  const p = document.createElement('p');
  p.className = 'late-note'; p.textContent = '`+lateNote+`';
  document.getElementById('add-form').after(p);
  done();
}, 300))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	poll := func(cond string) {
		t.Helper()
		if group == 0 {
			time.Sleep(500 * time.Millisecond) // nothing may change meanwhile
			return
		}
		err := chromedp.Do(tctx, chromedp.Poll[chromedp.Void](cond,
			chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second)))
		if err != nil {
			t.Errorf("group %d: %s never held: %v", group, cond, err)
		}
	}
	poll(`document.querySelector('.late-note .lift-note') !== null`)
	check(t, fmt.Sprintf("group %d, a note rendered after load", group), readDOMPage(t, ctx), true)

	// The title rendered anew as served, then more of the page's own
	// changes, each a run of the observer: the button's label changed in
	// place and back (its appended note stays, and is not appended again),
	// and elements added elsewhere.
	err = chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`new Promise(done => {
  document.querySelector('.product h1').textContent = '`+teeTitle+`';
  const label = document.getElementById('add').firstChild;
  let n = 0;
  const more = () => {
    if (n === 1) label.data = 'Add to cart!';
    else if (n === 2) label.data = 'Add to cart';
    else document.body.appendChild(document.createElement('i'));
    if (++n < 6) setTimeout(more, 30); else setTimeout(done, 100);
  };
  setTimeout(more, 30);
})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	poll(`document.querySelector('.product h1').textContent === '` + softTitle + `'`)
	check(t, fmt.Sprintf("group %d, the title rendered anew", group), readDOMPage(t, ctx), true)

	// Last, with nothing else changing after it, the page resets the
	// button's class, an attribute a change writes: the observer watches
	// it, so group 1's classes come back.
	err = chromedp.Do(tctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('add').className = ''`))
	if err != nil {
		t.Fatal(err)
	}
	poll(`document.getElementById('add').className === 'btn--sale is-new'`)
	check(t, fmt.Sprintf("group %d, the button's class reset", group), readDOMPage(t, ctx), true)
}

// domPreview: a preview link of the test's group 1 shows its changes, in
// no counted test.
func (b *browserShop) domPreview(t *testing.T, browser context.Context, id string) {
	ctx := b.openPreview(t, browser, id, func(ctx context.Context) { watchTracker(t, ctx, "") })
	wantChanged(t, "a preview of group 1", readDOMPage(t, ctx), false)
	screenshot(t, ctx, "dom-changes-preview.png")
}
