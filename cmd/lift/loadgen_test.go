package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/warehouse"
)

// TestLoadgenAgainstIngest drives the real ingest surface with a small
// population and checks that what loadgen says it sent is what landed.
func TestLoadgenAgainstIngest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testDB(t)
	if _, err := db.CreateShop(ctx, experiment.Shop{Domain: demoDomain, Name: "Demo", Timezone: "UTC", Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	addr, chDB := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: addr, Database: chDB})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	cfg := &config.Config{DataDir: t.TempDir()}
	app := &App{Config: cfg, DB: db, Warehouse: wh, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	engine, stopIngest, err := app.router("ingest")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serveLoopback(engine)
	if err != nil {
		t.Fatal(err)
	}
	o := loadgen{target: "http://" + srv.Addr, shop: demoDomain, experiment: "77", visitors: 60, concurrency: 4,
		duration: time.Minute, split: []float64{50, 50}, conversion: []float64{0.3, 0.5}, addToCart: []float64{0.6, 0.8},
		aov: []float64{50, 60}, botShare: 0.1, seed: 7}
	res := runLoadgen(t, &o)
	srv.Close()
	if err := stopIngest(ctx); err != nil { // drains the WAL into ClickHouse
		t.Fatal(err)
	}
	var visitors, orders, bots int64
	for _, g := range res.groups {
		visitors += g.visitors.Load()
		orders += g.orders.Load()
		bots += g.bots.Load()
	}
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"SELECT count() FROM assignments FINAL WHERE experiment_id = '77'", visitors},
		{"SELECT count() FROM assignments FINAL WHERE experiment_id = '77' AND is_bot = 1", bots},
		{"SELECT count() FROM orders FINAL WHERE experiment_id = '77'", orders},
		// Crawlers never buy, so every order is one the results count.
		{`SELECT count() FROM orders FINAL WHERE experiment_id = '77' AND visitor_id IN
			(SELECT visitor_id FROM assignments FINAL WHERE experiment_id = '77' AND is_bot = 1)`, 0},
		{"SELECT uniqExact(visitor_id) FROM events WHERE experiment_id = '77' AND event_type = 'checkout_completed'", orders},
	} {
		var got uint64
		if err := wh.Conn().QueryRow(ctx, c.query).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if int64(got) != c.want {
			t.Errorf("%s = %d, want %d", c.query, got, c.want)
		}
	}
}

func TestLoadgenRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"http://10.0.0.5:8080", "http://example.com", "http://192.168.1.1"} {
		o := loadgen{target: target, visitors: 1, concurrency: 1, duration: time.Second, split: []float64{50, 50},
			conversion: []float64{0.1, 0.1}, addToCart: []float64{0.2, 0.2}, aov: []float64{1, 1}}
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: err = %v, want a loopback refusal", target, err)
		}
	}
}

// runLoadgen plays o, logs what it sent, and fails the test if any request
// failed.
func runLoadgen(t *testing.T, o *loadgen) *loadgenResult {
	t.Helper()
	res, err := o.run()
	if err != nil {
		t.Fatal(err)
	}
	var sent strings.Builder
	res.print(&sent)
	t.Log("\n" + sent.String())
	if res.failures.Load() != 0 {
		t.Fatalf("%d loadgen requests failed: %v", res.failures.Load(), res.firstErr.Load())
	}
	return res
}
