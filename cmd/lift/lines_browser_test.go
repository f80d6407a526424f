package main

import (
	"bytes"
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

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

// A shipping test's rates are quoted at checkout from the platform's rate
// request, which carries the cart's lines and their properties, not the
// cart's attributes: while a visitor is counted in such a test, lift.js
// puts its assignments on each line it adds (_lift_assignments), through
// lift.lineProperties() (the demo's add by JSON) and a hidden input in
// the theme's add-to-cart forms. In chromium on the demo store, on a shop
// of its own (its shipping test is in every visitor's cart attributes).
func TestLinesCarryAssignments(t *testing.T) {
	browser := startBrowser(t)
	b := newBrowserShop(t)
	t.Run("without a shipping test lines carry nothing", func(t *testing.T) { b.linesWithoutShipping(t, browser) })
	ship := b.startShipping(t)
	t.Run("a visitor who declined analytics carries nothing", func(t *testing.T) { b.linesDeclined(t, browser) })
	// One visitor for both: it comes back after the test ended.
	visitor, cancel := newVisitor(t, browser)
	defer cancel()
	if t.Run("a shipping test's visitor adds lines that name its group", func(t *testing.T) { b.linesInShipping(t, visitor, ship) }) {
		t.Run("a test ended since the kept config takes its input away", func(t *testing.T) { b.linesAfterShipping(t, visitor, ship) })
	}
}

// startShipping creates and starts a 50/50 shipping test over the v1 API
// (the cheaper group's Standard rate, 5011, at $1.00 instead of $6.95 in
// the demo's domestic zone) and waits until the storefront config carries
// it with line_assignments.
func (b *browserShop) startShipping(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	on := true // seedShop's plan has carrier_service: shipping tests need it
	if _, err := b.s.app.DB.UpdateShop(ctx, b.shopID, store.ShopUpdate{APIEnabled: &on, SubscriptionActive: &on}); err != nil {
		t.Fatal(err)
	}
	write, err := b.writeToken(t)
	if err != nil {
		t.Fatal(err)
	}
	const zone = "gid://shopify/DeliveryZone/501" // Domestic, USD (experiment/catalogdata/demo.json)
	body := `{"type":"shipping","name":"Ship","shared":{"shipping":{"zone_ids":["` + zone + `"]}},
		"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Cheaper","split":50,
		"content":{"rates":[{"zone_id":"` + zone + `","rate_id":"gid://shopify/DeliveryMethodDefinition/5011","name":"Standard","price":{"amount":"1.00","currency":"USD"}}]}}]}`
	r := b.s.do("POST", "/v1/experiments", write, body)
	id, _ := r.body["id"].(string)
	if r.status != 201 || id == "" {
		t.Fatalf("create the shipping test = %d %s", r.status, r.raw)
	}
	if r := b.s.do("POST", "/v1/experiments/"+id+"/start", write, ""); r.status != 200 || r.body["status"] != "active" {
		t.Fatalf("start the shipping test = %d %s", r.status, r.raw)
	}
	t.Cleanup(func() { b.s.do("POST", "/v1/experiments/"+id+"/end", write, "") })
	b.awaitConfig(t, func(tests map[string]json.RawMessage) bool {
		return tests[id] != nil && strings.Contains(string(tests[id]), `"line_assignments":true`)
	})
	return id
}

// awaitConfig reads the shop's storefront config until done says it is
// what the test needs (it is rendered anew every 5 s), or fails after 30 s.
func (b *browserShop) awaitConfig(t *testing.T, done func(tests map[string]json.RawMessage) bool) {
	t.Helper()
	var last []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(b.s.url + "/api/storefront/config?shop=" + url.QueryEscape(b.domain))
		if err != nil {
			t.Fatal(err)
		}
		last, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		var cfg struct {
			Tests []json.RawMessage `json:"tests"`
		}
		if json.Unmarshal(last, &cfg) != nil {
			continue
		}
		tests := map[string]json.RawMessage{}
		for _, raw := range cfg.Tests {
			var x struct {
				ID string `json:"id"`
			}
			json.Unmarshal(raw, &x)
			tests[x.ID] = raw
		}
		if done(tests) {
			return
		}
	}
	t.Fatalf("the storefront config never became what the test waits for: %s", last)
}

// themeForm puts a theme's add-to-cart form (the platform's native
// /cart/add: id, quantity) in every page the tab opens as soon as the
// parser reaches <body>, as a theme's own markup is there before lift.js
// applies the groups, and logs in __lineInputs each
// properties[_lift_assignments] input added to or removed from it. (Added
// at DOMContentLoaded instead, it could come after lift.js had applied a
// kept config: an async script may run once parsing is over and before
// that event, and then finds no form; a form drawn that late gets its
// input as it submits.)
func themeForm(t *testing.T, ctx context.Context, shop string) {
	t.Helper()
	onEveryPage(t, ctx, `window.__lineInputs = [];
new MutationObserver(function (records, o) {
  if (!document.body) return;
  o.disconnect();
  var f = document.createElement('form');
  f.id = 'theme-form'; f.method = 'post'; f.action = '/demo/cart/add?shop=`+url.QueryEscape(shop)+`';
  f.innerHTML = '<input type="hidden" name="id" value="44002"><input type="hidden" name="quantity" value="1">';
  new MutationObserver(function (records) {
    records.forEach(function (r) {
      [].forEach.call(r.addedNodes, function (n) { if (n.name === 'properties[_lift_assignments]') window.__lineInputs.push('added ' + n.value); });
      [].forEach.call(r.removedNodes, function (n) { if (n.name === 'properties[_lift_assignments]') window.__lineInputs.push('removed'); });
    });
  }).observe(f, {childList: true});
  document.body.appendChild(f);
}).observe(document, {childList: true, subtree: true});`)
}

// lineView is what a product page tells of the visitor's lines.
type lineView struct {
	Cart   string            `json:"cart"`   // lift.cartAttributes()._lift_assignments
	Props  map[string]string `json:"props"`  // lift.lineProperties()
	Inputs []string          `json:"inputs"` // the values of the theme form's properties[_lift_assignments] inputs
	Log    []string          `json:"log"`    // __lineInputs
}

const readLines = `({cart: lift.cartAttributes()._lift_assignments, props: lift.lineProperties(),
	inputs: [].map.call(document.querySelectorAll('#theme-form input[name="properties[_lift_assignments]"]'), i => i.value),
	log: window.__lineInputs})`

// cartLine is one line of the demo cart (/demo/cart.js).
type cartLine struct {
	VariantID  string            `json:"variant_id"`
	Quantity   int               `json:"quantity"`
	Properties map[string]string `json:"properties"`
}

// addToCart clicks the product page's add-to-cart button (demo.js posts
// the line by JSON with lift.lineProperties()) and reads the cart.
func addToCart(t *testing.T, ctx context.Context) []cartLine {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	c, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Items []cartLine `json:"items"`
	}](`document.getElementById('add').click(),
		new Promise(ok => (function poll() { document.getElementById('added').hidden ? setTimeout(poll, 10) : ok(); })())
		.then(() => fetch('/demo/cart.js' + location.search)).then(r => r.json())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("add to cart: %v", err)
	}
	return c.Items
}

// linesWithoutShipping: a visitor counted in the shop's other tests (the
// price test among them), with no shipping test running, gets no line
// property: the theme's form has no hidden input, and the line it adds
// carries no _lift_assignments.
func (b *browserShop) linesWithoutShipping(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	themeForm(t, ctx, b.domain)
	if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
		t.Fatal(err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[lineView](readLines))
	if err != nil {
		t.Fatal(err)
	}
	if !inCart(v.Cart, b.price) || len(v.Props) != 0 || len(v.Inputs) != 0 || len(v.Log) != 0 {
		t.Errorf("without a shipping test the page is %+v; want the price test in the cart attributes, and no line property or input", v)
	}
	lines := addToCart(t, ctx)
	if len(lines) != 1 || lines[0].VariantID != "44001" || len(lines[0].Properties) != 0 {
		t.Errorf("without a shipping test the cart is %+v; want the tee on a line without properties", lines)
	}
}

// linesDeclined: a visitor whose browser sends Global Privacy Control is
// in no test, the shipping test neither: no line property, no input.
func (b *browserShop) linesDeclined(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	onEveryPage(t, ctx, `Object.defineProperty(navigator, 'globalPrivacyControl', {get: function () { return true; }});`)
	themeForm(t, ctx, b.domain)
	err := chromedp.Do(ctx, chromedp.Navigate(b.url("/demo/products/8101")), chromedp.Poll[chromedp.Void](
		`document.documentElement.getAttribute('data-lift-ready') === 'declined' && document.getElementById('theme-form')`,
		chromedp.WithPollingTimeout(pageTimeout)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[lineView](readLines))
	if err != nil {
		t.Fatal(err)
	}
	if v.Cart != "" || len(v.Props) != 0 || len(v.Inputs) != 0 || len(v.Log) != 0 {
		t.Errorf("a declined visitor's page is %+v; want no assignments, no line property, no input", v)
	}
}

// linesInShipping: a visitor the split puts in the shipping test has its
// assignments (the cart attributes' own string, the shipping test's group
// in it) in lift.lineProperties(), in one hidden input of the theme's form
// however often it submits, in a form drawn after the page was ready once
// that form submits natively, and on the lines added both ways.
func (b *browserShop) linesInShipping(t *testing.T, ctx context.Context, ship string) {
	themeForm(t, ctx, b.domain)
	st, err := open(ctx, b.url("/demo/products/8101"))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := st.Assignments[ship]
	if !ok || a.Reason != "random_split" || a.Group < 0 {
		t.Fatalf("lift state %s: the visitor is not in the shipping test %s by the split", st.groups(), ship)
	}
	mine := ship + ":" + strconv.Itoa(a.Group)
	v, err := chromedp.Run(ctx, chromedp.Evaluate[lineView](readLines))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(v.Cart, ","), mine) || v.Props["_lift_assignments"] != v.Cart || len(v.Props) != 1 ||
		!slices.Equal(v.Inputs, []string{v.Cart}) || !slices.Equal(v.Log, []string{"added " + v.Cart}) {
		t.Fatalf("in group %d of the shipping test the page is %+v; want %s in the cart attributes, lineProperties() and one input", a.Group, v, mine)
	}
	// The theme's handler runs after lift.js's capture listener: submits
	// (here without sending) find the one input, not another.
	again, err := chromedp.Run(ctx, chromedp.Evaluate[lineView](`(() => {
  const f = document.getElementById('theme-form');
  for (let i = 0; i < 2; i++) f.dispatchEvent(new Event('submit', {bubbles: true, cancelable: true}));
  return `+readLines+`;
})()`))
	if err != nil || !slices.Equal(again.Inputs, v.Inputs) || !slices.Equal(again.Log, v.Log) {
		t.Errorf("after two submits the theme form's inputs are %+v (%v), want %q alone", again, err, v.Inputs)
	}

	// A quick-add form drawn after lift.ready gets the input as it submits,
	// and the platform's /cart/add keeps it on the line. It posts into a
	// frame, so this page stays to read the cart.
	type drawer struct {
		Before int        `json:"before"`
		Lines  []cartLine `json:"lines"`
	}
	dctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	d, err := chromedp.Run(dctx, chromedp.Evaluate[drawer](`(() => {
  const sink = document.createElement('iframe');
  sink.name = 'sink';
  document.body.appendChild(sink);
  const f = document.createElement('form');
  f.method = 'post'; f.target = 'sink'; f.action = '/demo/cart/add' + location.search;
  f.innerHTML = '<input type="hidden" name="id" value="44003"><input type="hidden" name="quantity" value="2">';
  document.body.appendChild(f);
  const before = f.querySelectorAll('input[name="properties[_lift_assignments]"]').length;
  const loaded = new Promise(ok => sink.addEventListener('load', () => { if (sink.contentWindow.location.pathname === '/demo/cart') ok(); }));
  f.requestSubmit();
  return loaded.then(() => fetch('/demo/cart.js' + location.search)).then(r => r.json())
    .then(c => ({before: before, lines: c.items}));
})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("submit a form drawn after lift.ready: %v", err)
	}
	if d.Before != 0 || len(d.Lines) != 1 || d.Lines[0].VariantID != "44003" || d.Lines[0].Quantity != 2 ||
		d.Lines[0].Properties["_lift_assignments"] != v.Cart {
		t.Errorf("a form drawn after lift.ready: %d inputs before its submit, cart %+v; want none, then the line with _lift_assignments %q",
			d.Before, d.Lines, v.Cart)
	}

	lines := addToCart(t, ctx)
	i := slices.IndexFunc(lines, func(l cartLine) bool { return l.VariantID == "44001" })
	if len(lines) != 2 || i < 0 || lines[i].Properties["_lift_assignments"] != v.Cart || !inCart(lines[i].Properties["_lift_assignments"], ship) {
		t.Errorf("the tee added by the product page's script: cart %+v; want its line with _lift_assignments %q", lines, v.Cart)
	}

	// At checkout the platform asks Lift's carrier service for the rates of
	// these lines: the visitor's group's Standard rate, $1.00 in the
	// cheaper group, the zone's own $6.95 in the control.
	want := map[int]string{0: "695", 1: "100"}[a.Group]
	if got := b.quoteStandard(t, lines[i].Properties); got != want {
		t.Errorf("the carrier service quotes Standard at %s cents for the cart's line in group %d, want %s", got, a.Group, want)
	}
	if got := b.quoteStandard(t, nil); got != "695" {
		t.Errorf("a line without assignments is quoted Standard at %s cents, want the zone's own 695", got)
	}
	// The demo's checkout asks it the same way and shows what it answers.
	if _, err := open(ctx, b.url("/demo/checkout")); err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
  const l = document.getElementById('shipping-rates');
  const s = l && l.getAttribute('data-state') === 'shown' && l.querySelector('li[data-code="gid://shopify/DeliveryMethodDefinition/5011"]');
  return s ? s.getAttribute('data-total') + ' ' + s.textContent : null;
})()`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil || shown != want+" Standard — "+map[int]string{0: "$6.95", 1: "$1.00"}[a.Group] {
		t.Errorf("the checkout shows Standard as %q (%v), want %s cents for group %d", shown, err, want, a.Group)
	}
}

// quoteStandard asks POST /api/carrier/rates, signed as the platform signs,
// for a domestic checkout of one line with props, and returns the
// Standard rate's total_price.
func (b *browserShop) quoteStandard(t *testing.T, props map[string]string) string {
	t.Helper()
	line, _ := json.Marshal(map[string]any{"name": "Tee", "quantity": 1, "price": 2400, "variant_id": 44001, "properties": props})
	body := []byte(`{"rate":{"origin":{"country":"US"},"destination":{"country":"US","postal_code":"94103"},"items":[` +
		string(line) + `],"currency":"USD","locale":"en"}}`)
	req, _ := http.NewRequest("POST", b.s.url+webhooks.RatesPath, bytes.NewReader(body))
	req.Header.Set(webhooks.HeaderShop, b.domain)
	req.Header.Set(webhooks.HeaderSignature, webhooks.Sign([]byte("browser-test-secret"), body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Rates []struct {
			Name  string `json:"service_name"`
			Total string `json:"total_price"`
		} `json:"rates"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		t.Fatalf("rates = %d (%v)", res.StatusCode, err)
	}
	for _, r := range out.Rates {
		if r.Name == "Standard" {
			return r.Total
		}
	}
	return ""
}

// linesAfterShipping: the shipping test ends. The visitor's next page
// applies the config it kept (the test in it) as soon as it is parsed,
// then the network's, without it: the input lift.js put in the theme's
// form goes, and lineProperties() is empty.
func (b *browserShop) linesAfterShipping(t *testing.T, ctx context.Context, ship string) {
	write, err := b.writeToken(t)
	if err != nil {
		t.Fatal(err)
	}
	if r := b.s.do("POST", "/v1/experiments/"+ship+"/end", write, ""); r.status != 200 || r.body["status"] != "ended" {
		t.Fatalf("end the shipping test = %d %s", r.status, r.raw)
	}
	b.awaitConfig(t, func(tests map[string]json.RawMessage) bool { return tests[ship] == nil })
	// The config is cached for a minute (max-age=60): the browser forgets
	// its copy, as one does once that minute is over.
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCache, cdp.Empty{})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(ctx, b.url("/demo/products/8101")); err != nil {
		t.Fatal(err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[lineView](readLines))
	if err != nil {
		t.Fatal(err)
	}
	if inCart(v.Cart, ship) || len(v.Props) != 0 || len(v.Inputs) != 0 || len(v.Log) != 2 ||
		!strings.HasPrefix(v.Log[0], "added ") || v.Log[1] != "removed" {
		t.Errorf("after the shipping test ended the page is %+v; want the kept config's input added, then removed, and no line property", v)
	}
}

// writeToken is a new write token of the shop.
func (b *browserShop) writeToken(t *testing.T) (string, error) {
	t.Helper()
	_, write, err := b.s.app.DB.CreateToken(context.Background(), b.shopID, experiment.ScopeWrite)
	if err != nil {
		return "", fmt.Errorf("write token: %w", err)
	}
	return write, nil
}
