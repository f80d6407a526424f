package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/store"
)

// lgVariant is a variant visitors can view and buy: numeric ids as the
// storefront sends them, price and unit cost in cents.
type lgVariant struct {
	product, variant      string
	priceCents, costCents int64
}

// demoCatalog is what loadgen's visitors browse: the demo catalog `lift dev`
// seeds, so product views name real products and orders cost what the
// catalog says. A variant without a cost is left out (it would sell at no
// cost and make profit equal revenue).
func demoCatalog() ([]lgVariant, error) {
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		return nil, err
	}
	var out []lgVariant
	for _, p := range f.Products {
		for _, v := range p.Variants {
			price, err1 := strconv.ParseFloat(v.Price, 64)
			cost, err2 := strconv.ParseFloat(v.Cost, 64)
			if err1 != nil || err2 != nil || price <= 0 || cost <= 0 || cost >= price {
				continue
			}
			out = append(out, lgVariant{product: numericID(p.ID), variant: numericID(v.ID),
				priceCents: int64(math.Round(price * 100)), costCents: int64(math.Round(cost * 100))})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("loadgen: the demo catalog has no variant with a price above its cost")
	}
	return out, nil
}

func numericID(gid string) string { return gid[strings.LastIndexByte(gid, '/')+1:] }

// pagesInSession is how many pages a visitor loads: about a third leave
// after the first (a bounce), the others read on, four more on average.
func pagesInSession(rng *rand.Rand) int {
	if rng.Float64() < 0.35 {
		return 1
	}
	n := 2
	for n < 15 && rng.Float64() > 0.25 {
		n++
	}
	return n
}

// pause waits the time a visitor reads a page before the next: log-normal
// around --dwell (most pauses short, a few long), never past the run's
// deadline, so the warehouse sees sessions that last minutes.
func (o *loadgen) pause(rng *rand.Rand) {
	if o.dwell <= 0 {
		return
	}
	const sigma = 0.8
	d := time.Duration(float64(o.dwell) * math.Exp(sigma*rng.NormFloat64()-sigma*sigma/2))
	d = min(d, 10*o.dwell, time.Until(o.deadline))
	if d > 0 {
		time.Sleep(d)
	}
}

// basket fills a cart worth about target (log-normal around the group's
// AOV) from the catalog, starting with the product the visitor added. The
// worth is the order's, shipping included: Lift's revenue is total_price,
// so the group's AOV is what results report.
func basket(rng *rand.Rand, catalog []lgVariant, first lgVariant, target float64) (lines []lgLine) {
	add := func(v lgVariant) {
		qty := int64(1)
		if rng.Float64() < 0.2 {
			qty = 2
		}
		lines = append(lines, lgLine{v: v, qty: qty})
	}
	add(first)
	// Up to 10 picks: an item that would overshoot the target by more than
	// a quarter is put back.
	for range 10 {
		sum := float64(total(lines, false)) / 100
		if sum >= 0.75*target || len(lines) == 6 {
			break
		}
		if v := catalog[rng.IntN(len(catalog))]; sum+float64(v.priceCents)/100 <= 1.25*target {
			add(v)
		}
	}
	return lines
}

type lgLine struct {
	v   lgVariant
	qty int64
}

// total is the cents the order sells for, its lines and their shipping
// (its total_price: the revenue Lift counts, and the loadgen's table), or,
// with cost, what its lines cost (shipping has no catalog cost).
func total(lines []lgLine, cost bool) int64 {
	var t int64
	for _, l := range lines {
		unit := l.v.priceCents
		if cost {
			unit = l.v.costCents
		}
		t += unit * l.qty
	}
	if !cost {
		t += shippingFor(lines).cents
	}
	return t
}

// lgShipping is an order's one shipping line.
type lgShipping struct {
	title, code string
	cents       int64
}

// Shipping as many shops charge it: a flat Standard rate, free from a
// subtotal. It depends on the lines only (no draw from the visit's RNG),
// so a seed replays the same population.
const (
	standardShippingCents = 499
	freeShippingFromCents = 7500
)

// shippingFor is what the order charges for shipping the lines.
func shippingFor(lines []lgLine) lgShipping {
	var subtotal int64
	for _, l := range lines {
		subtotal += l.v.priceCents * l.qty
	}
	if subtotal >= freeShippingFromCents {
		return lgShipping{"Free shipping", "FREE", 0}
	}
	return lgShipping{"Standard", "STANDARD", standardShippingCents}
}

// sendOrderWebhook delivers the order as the platform does (ORDERS_CREATE,
// signed with --webhook-secret), with the cart attributes the storefront
// script sets, so the worker attributes it and prices its cost from the
// catalog.
func (o *loadgen) sendOrderWebhook(res *loadgenResult, n int, orderID, visitor, session string, group int, lines []lgLine) bool {
	body := o.orderBody(orderID, visitor, session, group, lines, time.Now().UTC())
	req, _ := http.NewRequest("POST", o.target+"/api/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	webhooks.SetDeliveryHeaders(req.Header, []byte(o.webhookSecret), experiment.TopicOrdersCreate, o.shop,
		fmt.Sprintf("lg-%s-order-%d", o.run_, n), body)
	return o.do(res, req, browserUA, nil)
}

// orderBody is the ORDERS_CREATE payload: the lines, their shipping as the
// platform lists it (shipping_lines), total_price the two, and the cart
// attributes.
func (o *loadgen) orderBody(orderID, visitor, session string, group int, lines []lgLine, now time.Time) []byte {
	type item struct {
		ProductID string `json:"product_id"`
		VariantID string `json:"variant_id"`
		Quantity  int64  `json:"quantity"`
		Price     string `json:"price"`
	}
	items := make([]item, 0, len(lines))
	for _, l := range lines {
		items = append(items, item{l.v.product, l.v.variant, l.qty, cents(l.v.priceCents)})
	}
	ship := shippingFor(lines)
	// Source shopify: the shop's own rate, not one its carrier service quoted.
	shipping := []map[string]string{{"title": ship.title, "code": ship.code, "source": "shopify",
		"price": cents(ship.cents), "discounted_price": cents(ship.cents)}}
	// No currency: the prices are the catalog's, in the shop's currency,
	// which the loadgen does not know (an order in another is not counted).
	body, _ := json.Marshal(map[string]any{
		"id": orderID, "created_at": now, "updated_at": now, "total_price": cents(total(lines, false)),
		"line_items": items, "shipping_lines": shipping,
		"note_attributes": []map[string]string{{"name": experiment.AttrVisitorID, "value": visitor},
			{"name": experiment.AttrSessionID, "value": session},
			{"name": experiment.AttrAssignments, "value": o.experiment + ":" + strconv.Itoa(group)}},
	})
	return body
}

func cents(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }
