package main

import (
	"context"
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
