package storefront_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api/storefront"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/ingest"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// The crash test runs the real server in a child process (this test binary
// re-executed into TestCrashChild), kills it with SIGKILL under load,
// restarts it on the same WAL and checks that every event answered 202 is in
// ClickHouse exactly once.

const (
	envChild    = "LIFT_STOREFRONT_CRASH_CHILD"
	envPostgres = "LIFT_CHILD_POSTGRES_URL"
	envCHAddr   = "LIFT_CHILD_CH_ADDR"
	envCHDB     = "LIFT_CHILD_CH_DB"
	envWAL      = "LIFT_CHILD_WAL"
)

// TestCrashChild is the server process of TestCrashUnderLoad; it does
// nothing in a normal run.
func TestCrashChild(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		t.Skip("only runs as the child of TestCrashUnderLoad")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: os.Getenv(envPostgres)})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: os.Getenv(envCHAddr), Database: os.Getenv(envCHDB)})
	if err != nil {
		t.Fatal(err)
	}
	in, err := ingest.New(ingest.Config{Dir: os.Getenv(envWAL), FlushInterval: 100 * time.Millisecond, SegmentBytes: 256 << 10}, wh)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(); err != nil {
		t.Fatal(err)
	}
	h, err := storefront.New(storefront.Config{Ingester: in, Shops: db})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	h.Mount(r)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r}
	go srv.Serve(ln)
	fmt.Printf("LISTENING %s\n", ln.Addr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	srv.Shutdown(ctx)
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := in.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
}

type child struct {
	cmd  *exec.Cmd
	addr string
}

func startChild(t *testing.T, env []string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	cmd.Env = append(append(os.Environ(), envChild+"=1"), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	addr := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if a, ok := strings.CutPrefix(lines.Text(), "LISTENING "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return &child{cmd: cmd, addr: a}
	case <-time.After(60 * time.Second):
		t.Fatal("child server did not start")
		return nil
	}
}

// load posts events with unique client ids from several workers until stop
// is closed, and records the ids that got a 202.
type load struct {
	mu    sync.Mutex
	acked []string
	sent  atomic.Int64
	fails atomic.Int64
}

func (l *load) run(addr, prefix string, workers int, stop <-chan struct{}) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("%s-%d-%d", prefix, w, i)
				l.sent.Add(1)
				resp, err := client.Post("http://"+addr+"/api/track/event?shop="+shopDomain, "text/plain",
					strings.NewReader(eventBody(id, "page_viewed", "101")))
				if err != nil {
					l.fails.Add(1)
					if errors := l.fails.Load(); errors%1000 == 0 {
						time.Sleep(time.Millisecond) // the server is gone; do not spin
					}
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusAccepted {
					l.mu.Lock()
					l.acked = append(l.acked, id)
					l.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}

func TestCrashUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short")
	}
	t.Parallel()
	ctx := context.Background()
	pgURL := lifttest.PostgresURL(t)
	db, err := store.Open(ctx, store.Config{URL: pgURL})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateShop(ctx, experiment.Shop{Domain: shopDomain, Name: "Demo", Timezone: "UTC", Currency: "EUR", Plan: "pro"}); err != nil {
		t.Fatal(err)
	}
	chAddr, chDB := lifttest.ClickHouse(t)
	env := []string{envPostgres + "=" + pgURL, envCHAddr + "=" + chAddr, envCHDB + "=" + chDB,
		envWAL + "=" + filepath.Join(t.TempDir(), "wal")}

	var l load
	// Run 1: load for a while, then SIGKILL mid-stream.
	c1 := startChild(t, env)
	stop1 := make(chan struct{})
	done1 := make(chan struct{})
	go func() { l.run(c1.addr, "a", 8, stop1); close(done1) }()
	waitFor(t, func() bool { return len(l.snapshot()) >= 3000 }, "3000 acknowledged events before the kill")
	if err := c1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c1.cmd.Wait()
	close(stop1)
	<-done1
	killedAt := len(l.snapshot())

	// Run 2: restart on the same WAL, more load, then a clean stop (drain).
	c2 := startChild(t, env)
	stop2 := make(chan struct{})
	done2 := make(chan struct{})
	go func() { l.run(c2.addr, "b", 8, stop2); close(done2) }()
	waitFor(t, func() bool { return len(l.snapshot()) >= killedAt+1000 }, "1000 more events after the restart")
	close(stop2)
	<-done2
	c2.cmd.Process.Signal(syscall.SIGTERM)
	if err := c2.cmd.Wait(); err != nil {
		t.Fatalf("child did not drain cleanly: %v", err)
	}

	acked := l.snapshot()
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: chAddr, Database: chDB})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	landed := map[string]uint64{}
	rows, err := wh.Conn().Query(ctx, "SELECT event_id, count() FROM events FINAL GROUP BY event_id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n uint64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		landed[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var raw uint64
	if err := wh.Conn().QueryRow(ctx, "SELECT count() FROM events").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw < uint64(len(landed)) {
		t.Fatalf("%d raw rows hold %d distinct ids", raw, len(landed))
	}
	missing, doubled := 0, 0
	for _, id := range acked {
		switch landed[id] {
		case 0:
			missing++
		case 1:
		default:
			doubled++
		}
	}
	t.Logf("acknowledged %d (killed after %d), %d distinct ids landed, %d raw rows before dedupe, %d requests failed while down",
		len(acked), killedAt, len(landed), raw, l.fails.Load())
	if missing != 0 || doubled != 0 {
		t.Fatalf("%d acknowledged events missing, %d counted twice", missing, doubled)
	}
}

func (l *load) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

// waitFor polls cond (it reads in-memory state) until true, failing after a
// deadline.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
