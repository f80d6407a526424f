package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The B2-3 answers: a visitor already in the price test's $24 group comes
// back to the tee's page while its config answers past the deadline.

// teeState is what a visitor's tee page shows and counts of the price test.
type teeState struct {
	Price string   `json:"price"` // the tee's price text
	Shown string   `json:"shown"` // lift.price of the tee, '' for the catalog's
	Late  bool     `json:"late"`
	IDs   []string `json:"ids"`  // lift.experimentIds()
	Cart  string   `json:"cart"` // lift.cartAttributes()._lift_assignments
	Known bool     `json:"known"`
}

func (b *browserShop) readTee(t *testing.T, ctx context.Context) teeState {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[teeState](`({price: document.querySelector('.price[data-variant="44001"]').textContent,
		shown: (lift.price('44001') || {}).amount || '', late: !!lift.assignments['`+b.price+`'].late,
		ids: lift.experimentIds(), cart: lift.cartAttributes()._lift_assignments,
		known: JSON.parse(localStorage.getItem('_lift_rec') || '{}')['`+b.price+`'] === 1})`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// knownVisitor is a tab of a visitor whom the split puts in the price test's
// $24 group and who has seen the tee's page once, on time: its assignment is
// recorded and the page's config kept. The tab has no HTTP cache, so every
// config request reaches the network, where holdConfig holds it.
func (b *browserShop) knownVisitor(t *testing.T, browser context.Context) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := newVisitor(t, browser)
	if _, err := open(ctx, b.url("/demo/")); err != nil {
		cancel()
		t.Fatal(err)
	}
	vid := b.visitorIn(t, ctx, b.price, 1)
	err := forget(ctx)
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
			return err
		}))
	}
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	setVisitor(t, ctx, b.s.url, vid)
	st, err := open(ctx, b.url("/demo/products/8101"))
	if err != nil || st.Visitor != vid || st.Assignments[b.price].Group != 1 {
		cancel()
		t.Fatalf("the known visitor's first page: %s (%v), want %s in group 1 of %s", st.groups(), err, vid, b.price)
	}
	return ctx, cancel
}

// withDeadline is b.url(path) with the anti-flicker deadline at ms.
func (b *browserShop) withDeadline(path string, ms int) string {
	return strings.Replace(b.url(path), "lift_timeout=30000", "lift_timeout="+strconv.Itoa(ms), 1)
}

// teeSeen opens the tee's page with its config held back by hold and a
// deadline of deadlineMS, and returns every state its price showed in
// (seenPrices: "(hidden)" or the text).
func (b *browserShop) teeSeen(t *testing.T, ctx context.Context, hold time.Duration, deadlineMS int) []string {
	t.Helper()
	holdConfig(t, ctx, hold, seenPrices)
	if _, err := open(ctx, b.withDeadline("/demo/products/8101", deadlineMS)); err != nil {
		t.Fatal(err)
	}
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__seen`))
	if err != nil {
		t.Fatal(err)
	}
	return seen
}

// settlesOn reports whether a price ended on want and never showed never.
func settlesOn(seen []string, want, never string) bool {
	return len(seen) > 0 && seen[len(seen)-1] == want && !slices.Contains(seen, never)
}

// cachedGroup: the known $24 visitor's next tee page, its config 5 s late
// and its deadline 3 s, shows $24 (the price was hidden, then $24, never
// $28): the page applied the config the last page kept, without waiting on
// the network, and counts the visitor in its group.
func (b *browserShop) cachedGroup(t *testing.T, browser context.Context) {
	ctx, cancel := b.knownVisitor(t, browser)
	defer cancel()
	if seen := b.teeSeen(t, ctx, 5*time.Second, 3000); !settlesOn(seen, "$24.00", "$28.00") {
		t.Errorf("with its config kept, the $24 visitor saw the price as %q, want hidden then $24.00 only", seen)
	}
	s := b.readTee(t, ctx)
	if s.Price != "$24.00" || s.Shown != "24.00" || s.Late || !slices.Contains(s.IDs, b.price) || !strings.Contains(s.Cart, b.price+":1") {
		t.Errorf("with its config kept, the $24 visitor's page is %+v; want $24.00 shown and test %s counted (%s:1)", s, b.price, b.price)
	}
}

// lateKnown: the known $24 visitor's next tee page, without the kept
// config, its config 2.5 s late and its deadline 1 s, shows the catalog's
// $28 as served, so it does not count the visitor in the $24 group: the
// test is out of its experiment ids and cart attributes, and the tee it
// adds to the cart there goes in at $28 in a cart that carries no group of
// the test, so the order is not revenue of the $24 group.
func (b *browserShop) lateKnown(t *testing.T, browser context.Context) {
	ctx, cancel := b.lateTeePage(t, browser)
	defer cancel()
	s := b.readTee(t, ctx)
	if !s.Known || s.Price != "$28.00" || s.Shown != "" || !s.Late || slices.Contains(s.IDs, b.price) || inCart(s.Cart, b.price) {
		t.Errorf("past the deadline the known visitor's page is %+v; want $28.00 and test %s late, in neither its ids nor its cart", s, b.price)
	}
	type cart struct {
		Items []struct {
			VariantID string  `json:"variant_id"`
			Price     float64 `json:"price"`
		} `json:"items"`
		Attributes map[string]string `json:"attributes"`
	}
	c, err := chromedp.Run(ctx, chromedp.Evaluate[cart](`document.getElementById('add').click(),
		new Promise(ok => (function poll() { document.getElementById('added').hidden ? setTimeout(poll, 10) : ok(); })())
		.then(() => fetch('/demo/cart.js' + location.search)).then(r => r.json())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != 1 || c.Items[0].VariantID != "44001" || c.Items[0].Price != 28 ||
		inCart(c.Attributes["_lift_assignments"], b.price) {
		t.Errorf("the tee added past the deadline: cart %+v; want it at 28 with no group of test %s", c, b.price)
	}
}

// lateTeePage opens the known $24 visitor's next tee page without the kept
// config, its config 2.5 s late and its deadline 1 s: the page must show
// the catalog's $28 as served (hidden until then), never $24.
func (b *browserShop) lateTeePage(t *testing.T, browser context.Context) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := b.knownVisitor(t, browser)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`localStorage.removeItem('_lift_cfg')`)); err != nil {
		cancel()
		t.Fatal(err)
	}
	if seen := b.teeSeen(t, ctx, 2500*time.Millisecond, 1000); !settlesOn(seen, "$28.00", "$24.00") {
		cancel()
		t.Fatalf("past the deadline the page showed the price as %q, want hidden then $28.00 (as served) only", seen)
	}
	return ctx, cancel
}

// inCart: the cart attribute _lift_assignments ("12:1,15:0") holds test
// id. A substring test would find 2 in "12:1": ids come from one sequence
// shared by every test of the run.
func inCart(assignments, id string) bool {
	for _, a := range strings.Split(assignments, ",") {
		if strings.HasPrefix(a, id+":") {
			return true
		}
	}
	return false
}
