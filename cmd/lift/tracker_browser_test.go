package main

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

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
