package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/ingest"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// awaySink is a ClickHouse that is not there: every insert fails, so what
// an ingester acknowledges stays in its WAL.
type awaySink struct{}

func (awaySink) Insert(context.Context, *ingest.Batch) error { return errors.New("clickhouse is away") }

// relay forwards TCP connections to target while up; while down it
// refuses them (closes them at once), as a stopped server would, without
// stopping the Postgres other tests share.
type relay struct {
	ln     net.Listener
	target string
	up     atomic.Bool
}

func newRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !r.up.Load() {
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return r
}

// TestIngestStartsWithoutPostgres: an ingest node restarted while Postgres
// is down starts (ops audit O2-3: it exited, and the rows its WAL held,
// already answered 202, waited for Postgres), reports /readyz 200 degraded
// naming postgres, answers tracking for a shop it cannot look up with the
// storefront's 503, and drains its WAL to ClickHouse, which needs no
// Postgres: every acknowledged row is there once it has shut down. When
// Postgres answers again it is ready and tracks the shop it could not look
// up, without a restart.
func TestIngestStartsWithoutPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Role = "ingest"
	pgURL, err := url.Parse(lifttest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	shop := newShopAt(t, pgURL.String())
	pg := newRelay(t, pgURL.Host) // down until the test brings it up
	pgURL.Host = pg.ln.Addr().String()
	cfg.Postgres.URL = pgURL.String()
	cfg.Redis.Addr, cfg.Redis.DB = lifttest.Redis(t)
	cfg.ClickHouse.Addr, cfg.ClickHouse.Database = lifttest.ClickHouse(t)
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.Ingest.FlushInterval = 50 * time.Millisecond

	// An earlier run acknowledged these while ClickHouse was away, then
	// stopped: they are in the WAL only.
	const shopID, events = 4242, 25
	prior, err := ingest.New(ingest.Config{Dir: filepath.Join(cfg.DataDir, "wal"), DiskBudget: cfg.Ingest.DiskBudget,
		FlushInterval: cfg.Ingest.FlushInterval}, awaySink{})
	if err != nil {
		t.Fatal(err)
	}
	if err := prior.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range events {
		req := ingest.EventRequest{EventID: fmt.Sprintf("acked-%d", i), SessionID: "00000000-0000-4000-8000-000000000001",
			VisitorID: "v-1", EventType: "product_added_to_cart", Source: "webpixel", CreatedAt: json.RawMessage(`"2026-06-01T10:00:00Z"`),
			ExperimentIDs: []string{"101"}, Payload: json.RawMessage(`{"productIds":["7"],"quantity":1}`)}
		if err := prior.TrackEvent(ctx, shopID, &req, ingest.Meta{ReceivedAt: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	gone, cancel := context.WithCancel(ctx)
	cancel() // stop without waiting for a drain that cannot happen
	if err := prior.Close(gone); err == nil {
		t.Fatal("the WAL drained into a ClickHouse that is away")
	}

	a, err := openServer(ctx, cfg)
	if err != nil {
		t.Fatalf("an ingest node did not start without Postgres: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	running, stop := context.WithCancel(ctx)
	defer stop()
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- a.serve(running, ready) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("serve stopped at start: %v", err)
	}

	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var readyz struct {
		Status   string
		Degraded []string
		Checks   map[string]string
	}
	json.NewDecoder(res.Body).Decode(&readyz)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || readyz.Status != "degraded" || !slices.Equal(readyz.Degraded, []string{"postgres"}) ||
		readyz.Checks["wal"] != "ok" {
		t.Fatalf("/readyz = %d %+v, want 200 degraded naming postgres, wal ok", res.StatusCode, readyz)
	}

	track := func() (int, map[string]any) {
		t.Helper()
		res, err := http.Post(base+"/api/track/event?shop="+shop.Domain, "application/json",
			strings.NewReader(`{"sessionId":"00000000-0000-4000-8000-000000000002","visitorId":"v-2","eventType":"page_viewed","source":"webpixel","createdAt":"2026-06-01T10:00:00Z","experimentIds":["101"]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	if status, body := track(); status != http.StatusServiceUnavailable || body["status"] != "error" || body["message"] == "" {
		t.Fatalf("tracking for a shop it cannot look up = %d %v, want the storefront's 503", status, body)
	}

	// Postgres is back: the same node, not restarted, connects.
	pg.up.Store(true)
	res, err = http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	readyz.Degraded = nil
	json.NewDecoder(res.Body).Decode(&readyz)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || readyz.Status != "ready" || readyz.Checks["postgres"] != "ok" {
		t.Fatalf("/readyz with Postgres back = %d %+v, want 200 ready", res.StatusCode, readyz)
	}
	if status, body := track(); status != http.StatusAccepted {
		t.Fatalf("tracking with Postgres back = %d %v, want 202", status, body)
	}

	// Shutdown drains the WAL into ClickHouse, and says so if it could not.
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: cfg.ClickHouse.Addr, Database: cfg.ClickHouse.Database})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	for id, want := range map[int64]uint64{shopID: events, shop.ID: 1} {
		var n uint64
		if err := wh.Conn().QueryRow(ctx, fmt.Sprintf("SELECT count() FROM %s.events WHERE shop_id = ?", wh.Database()), id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("ClickHouse holds %d of shop %d's %d acknowledged events", n, id, want)
		}
	}
}

// newShopAt installs a shop in the database at dsn.
func newShopAt(t *testing.T, dsn string) *experiment.Shop {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{URL: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	shop, err := db.CreateShop(context.Background(), experiment.Shop{Domain: lifttest.Name("ingest-") + ".myshopify.com", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	return shop
}
