package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// TestLoadgenLooksLikeAStore plays a paced population with webhook orders
// against the real program (api + ingest + worker) and checks what landed
// looks like a store's: sessions last as long as their pages were apart,
// and every order costs what its catalog lines cost, below its revenue.
func TestLoadgenLooksLikeAStore(t *testing.T) {
	t.Parallel()
	const secret = "loadgen-test-secret"
	s := roleServer(t, "all", func(c *config.Config) { c.Platform.WebhookSecret, c.SigningSecret = secret, secret })
	ctx := context.Background()
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	shop, _, err := seedShop(ctx, s.app.DB, demoDomain, f)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Minute)
	tt := lifttest.RunningTest(shop.ID, "paced", started)
	lifttest.PutTest(t, s.app.DB, tt)
	stopWorker, err := s.app.startWorker(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWorker()
	exp := strconv.FormatInt(tt.ID, 10)
	o := loadgen{target: s.url, shop: demoDomain, experiment: exp, visitors: 40, concurrency: 40, duration: time.Minute,
		dwell: time.Second, split: []float64{50, 50}, conversion: []float64{0.3, 0.4}, addToCart: []float64{0.5, 0.6},
		aov: []float64{60, 70}, seed: 5, webhookSecret: secret}
	res := runLoadgen(t, &o)
	var orders, revenue, cost int64
	for _, g := range res.groups {
		orders += g.orders.Load()
		revenue += g.revenueCents.Load()
		cost += g.costCents.Load()
	}
	if orders == 0 || cost <= 0 || cost >= revenue {
		t.Fatalf("loadgen sent %d orders, revenue %d, cost %d cents; want orders costing less than they sell for", orders, revenue, cost)
	}

	wh := s.app.Warehouse.Conn()
	deadline := time.Now().Add(60 * time.Second)
	var n uint64
	var rev, cst float64
	var costly uint64
	for {
		if err := wh.QueryRow(ctx, `SELECT count(), toFloat64(sum(revenue)), toFloat64(sum(cost)), countIf(cost > 0 AND cost < revenue)
			FROM (SELECT order_id, argMax(revenue, version) AS revenue, argMax(cost, version) AS cost
			      FROM orders WHERE experiment_id = ? GROUP BY order_id)`, exp).Scan(&n, &rev, &cst, &costly); err != nil {
			t.Fatal(err)
		}
		if int64(n) == orders || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if int64(n) != orders || costly != n || int64(rev*100+0.5) != revenue || int64(cst*100+0.5) != cost {
		t.Fatalf("warehouse: %d orders (%d costed below revenue), revenue %.2f, cost %.2f; loadgen sent %d, %d, %d cents",
			n, costly, rev, cst, orders, revenue, cost)
	}

	var sessions, bounced uint64
	var multiPageSeconds float64
	if err := wh.QueryRow(ctx, `SELECT count(), countIf(pages = 1), avgIf(dur, pages > 1) FROM (
			SELECT session_id, uniqExact(record_id) AS pages, toFloat64(max(seen_at) - min(seen_at)) AS dur
			FROM sessions WHERE experiment_id = ? AND is_bot = 0 GROUP BY session_id)`, exp).Scan(&sessions, &bounced, &multiPageSeconds); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sessions, %d bounced, %.1f s average for the others", sessions, bounced, multiPageSeconds)
	// Pages are a second apart on average and the others read four more
	// on average; seen_at has whole seconds.
	if sessions == 0 || bounced == 0 || bounced == sessions || multiPageSeconds < 1.5 {
		t.Fatalf("%d sessions, %d bounced, %.2f s average for the others; want some bounces and multi-page sessions lasting seconds",
			sessions, bounced, multiPageSeconds)
	}
}

// TestLoadgenOrderChargesShipping: every ORDERS_CREATE the loadgen sends
// has one shipping line in the platform's shape, Standard below the free
// shipping subtotal and free from it, and total_price is the lines and the
// shipping, the revenue its table counts (total), whose cost is the lines'.
func TestLoadgenOrderChargesShipping(t *testing.T) {
	t.Parallel()
	tee := lgVariant{product: "8101", variant: "44001", priceCents: 2400, costCents: 900}
	coat := lgVariant{product: "8103", variant: "44010", priceCents: 7500, costCents: 3000}
	o := &loadgen{experiment: "9"}
	for _, c := range []struct {
		name         string
		lines        []lgLine
		title, price string
		total, cost  string
	}{
		{"standard", []lgLine{{tee, 2}}, "Standard", "4.99", "52.99", "18.00"},
		{"just below free", []lgLine{{tee, 1}, {lgVariant{priceCents: 5099, costCents: 2000}, 1}}, "Standard", "4.99", "79.98", "29.00"},
		{"free from the subtotal", []lgLine{{coat, 1}}, "Free shipping", "0.00", "75.00", "30.00"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var order struct {
				TotalPrice    string `json:"total_price"`
				ShippingLines []struct {
					Title, Code, Source, Price string
					DiscountedPrice            string `json:"discounted_price"`
				} `json:"shipping_lines"`
				LineItems []struct {
					Quantity int64  `json:"quantity"`
					Price    string `json:"price"`
				} `json:"line_items"`
			}
			if err := json.Unmarshal(o.orderBody("5000001", "v", "s", 1, c.lines, time.Now()), &order); err != nil {
				t.Fatal(err)
			}
			if len(order.ShippingLines) != 1 {
				t.Fatalf("shipping_lines = %+v, want one", order.ShippingLines)
			}
			l := order.ShippingLines[0]
			if l.Title != c.title || l.Price != c.price || l.DiscountedPrice != c.price || l.Code == "" || l.Source == "" {
				t.Errorf("shipping line = %+v, want %s at %s", l, c.title, c.price)
			}
			if order.TotalPrice != c.total || cents(total(c.lines, false)) != c.total || len(order.LineItems) != len(c.lines) {
				t.Errorf("total_price %s, revenue counted %s; want %s (lines and shipping)", order.TotalPrice,
					cents(total(c.lines, false)), c.total)
			}
			if cost := cents(total(c.lines, true)); cost != c.cost {
				t.Errorf("cost = %s, want the lines' %s (shipping has none)", cost, c.cost)
			}
		})
	}
}
