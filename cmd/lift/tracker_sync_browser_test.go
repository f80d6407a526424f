package main

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// syncTag: a theme that pastes the tracker's tag without async runs lift.js
// in <head>, before the body and its marks are parsed (a cached async
// script can run that early too). The page still counts as the product
// page it is, and shows the visitor's group's price: lift.js reads the page
// and applies its config once the document is parsed. Before, it read the
// <html> element's (absent) marks at its start and sent a page_viewed
// without the product.
func (b *browserShop) syncTag(t *testing.T, browser context.Context) {
	ctx, cancel := newVisitor(t, browser)
	defer cancel()
	onEveryPage(t, ctx, sentBodies)
	st, err := open(ctx, b.url("/demo/products/8101")+"&lift_sync=1")
	if err != nil {
		t.Fatal(err)
	}
	type page struct {
		Async bool     `json:"async"`
		Price string   `json:"price"`
		Views []string `json:"views"`
	}
	p, err := chromedp.Run(ctx, chromedp.Evaluate[page](`({
		async: document.querySelector('script[src*="lift.js"]').async,
		price: document.querySelector('.price[data-variant="44001"]').textContent,
		views: __sent.filter(e => /_viewed$/.test(e.eventType)).map(e => e.eventType + ' ' + ((e.payload || {}).productIds || []).join(','))})`))
	if err != nil {
		t.Fatal(err)
	}
	want := "$28.00"
	if st.Assignments[b.price].Group == 1 {
		want = "$24.00"
	}
	if p.Async || p.Price != want || len(p.Views) != 1 || p.Views[0] != "product_viewed 8101" {
		t.Errorf("tag without async: %+v (visitor %s); want the price %s and one product_viewed of 8101", p, st.groups(), want)
	}
}
