package storefront_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/liftab/lift/ingest"
)

// proxy is a TCP relay between the ingester and ClickHouse that the test can
// cut and restore. Cutting it drops every open connection and refuses new
// ones, which is what the ingester sees when ClickHouse stops: a faithful
// outage of the connection, without stopping the shared server other tests
// use.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

func TestClickHouseOutageUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("outage test skipped in -short")
	}
	t.Parallel()
	var px *proxy
	b := build(t, func(addr string) string { px = newProxy(t, addr); return px.addr() })

	var (
		mu       sync.Mutex
		acked    []string
		refused  atomic.Int64
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		snapshot = func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("o-%d-%d", w, i)
				r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, "text/plain", eventBody(id, "page_viewed", "101"))
				if r.status != http.StatusAccepted {
					refused.Add(1)
					continue
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		})
	}
	waitFor(t, func() bool { return snapshot() >= 500 }, "500 events before the outage")
	px.cut()
	before := b.in.Stats().FailedFlush
	cutAt := snapshot()
	// Keep loading through the outage until the flusher has failed a few
	// times and a good number of events were accepted meanwhile.
	waitFor(t, func() bool { return b.in.Stats().FailedFlush >= before+3 && snapshot() >= cutAt+2000 }, "failed flushes and 2000 events during the outage")
	duringOutage := snapshot() - cutAt
	px.restore()
	waitFor(t, func() bool { return snapshot() >= cutAt+duringOutage+500 }, "500 events after the restore")
	close(stop)
	wg.Wait()
	if n := refused.Load(); n != 0 {
		t.Fatalf("%d requests were not answered 202 during the outage", n)
	}

	mu.Lock()
	want := uint64(len(acked))
	mu.Unlock()
	b.count(t, want, "SELECT uniqExact(event_id) FROM events WHERE shop_id = ?", b.shop.ID)
	b.count(t, want, "SELECT count() FROM events FINAL WHERE shop_id = ?", b.shop.ID)
	var raw uint64
	if err := b.wh.Conn().QueryRow(context.Background(), "SELECT count() FROM events").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw < want {
		t.Fatalf("%d raw rows hold %d acknowledged events", raw, want)
	}
	t.Logf("acknowledged %d (%d during the outage), %d failed flushes, %d raw rows before dedupe",
		want, duringOutage, b.in.Stats().FailedFlush, raw)
}

// TestBacklogFullAnswers503: while ClickHouse is away the WAL keeps
// accepting up to its disk budget, then refuses with 503 and the envelope
// (nothing is half-written); once ClickHouse is back and the backlog has
// drained, tracking is accepted again and every acknowledged event landed.
func TestBacklogFullAnswers503(t *testing.T) {
	if testing.Short() {
		t.Skip("outage test skipped in -short")
	}
	t.Parallel()
	var px *proxy
	b := buildWith(t, func(addr string) string { px = newProxy(t, addr); return px.addr() },
		func(c *ingest.Config) { c.SegmentBytes, c.DiskBudget = 16<<10, 64<<10 })
	px.cut()
	var acked []string
	var full response
	for i := 0; i < 10_000; i++ {
		id := fmt.Sprintf("f-%d", i)
		r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, "text/plain", eventBody(id, "page_viewed", "101"))
		if r.status != http.StatusAccepted {
			full = r
			break
		}
		acked = append(acked, id)
	}
	if full.status != http.StatusServiceUnavailable || full.body["status"] != "error" || full.header.Get("Retry-After") == "" {
		t.Fatalf("after %d events: %d %s, want 503 with the error envelope and Retry-After", len(acked), full.status, full.raw)
	}
	px.restore()
	waitFor(t, func() bool {
		r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, "text/plain", eventBody("after", "page_viewed", "101"))
		return r.status == http.StatusAccepted
	}, "tracking accepted again after the drain")
	b.count(t, uint64(len(acked)+1), "SELECT uniqExact(event_id) FROM events")
	t.Logf("%d events accepted before the budget was reached", len(acked))
}
