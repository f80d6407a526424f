package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
)

func init() { rootCmd.AddCommand(newBenchCmd()) }

func newBenchCmd() *cobra.Command {
	cmd := commandGroup("bench", "Benchmarks of ingest throughput, API latency and results computation against their targets")
	var o ingestBench
	ing := &cobra.Command{
		Use:   "ingest",
		Args:  cobra.NoArgs,
		Short: "Storefront ingest against a bare 202 handler: events/s, p50/p99, memory over time",
		Long: `Starts, in this process, the real ingest server (storefront handlers, WAL with fsync,
flusher into ClickHouse in a fresh database) and a bare Go handler that only answers 202, both on
loopback. Drives both with the same closed-loop load (single events per request) at each
--workers concurrency (the bare handler for half its phase before the ingest phase and half
after, so a change in the machine's other load weighs on both alike) and prints events/s and p50/p99 for each and the ratios,
with the WAL's group commits of each ingest phase (fsyncs, rows each, fsync p50/p99), then the ratio of the peaks; then holds the ingest server at half its peak rate
(open loop) and prints p50/p99 and RSS/heap every second to show memory stays flat, and sends
the bare handler the same rate for a few seconds (the p99 the machine itself gives). Finally it
drains the WAL, checks that ClickHouse holds every acknowledged event once and prints each target
of issue 14 (ratio ≥ 0.70, no non-2xx answer, p99 < 20 ms at half rate) with ok or MISSED.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	ing.Flags().DurationVar(&o.duration, "duration", 5*time.Second, "length of each closed-loop phase")
	ing.Flags().DurationVar(&o.sustain, "sustain", 20*time.Second, "length of the half-rate phase")
	ing.Flags().IntSliceVar(&o.workers, "workers", []int{64, 256, 512}, "concurrent connections of the closed-loop load, one phase pair per value")
	ing.Flags().Int64Var(&o.maxEvents, "max-events", 5_000_000, "stop a phase after this many requests")
	ing.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the last --workers ingest phase to this file, and of the bare handler's second half at that concurrency to this file + .bare")
	config.BindFlags(ing.Flags())
	cmd.AddCommand(ing)
	for _, sub := range benchSubcommands {
		cmd.AddCommand(sub())
	}
	return cmd
}

// benchSubcommands are the other `lift bench` targets. Files add theirs with
// a package-level `var _ = registerBench(newXBenchCmd)`, which runs before
// any init function, so the order of files does not matter.
var benchSubcommands []func() *cobra.Command

func registerBench(f func() *cobra.Command) bool {
	benchSubcommands = append(benchSubcommands, f)
	return true
}

type ingestBench struct {
	duration, sustain time.Duration
	workers           []int
	maxEvents         int64
	cpuProfile        string
}

const benchShopDomain = "bench-shop.myshopify.com"

func (o *ingestBench) run(cmd *cobra.Command) error {
	if len(o.workers) == 0 || slices.Min(o.workers) < 1 || o.duration <= 0 || o.sustain <= 0 {
		return fmt.Errorf("bench: --workers needs positive values, --duration and --sustain positive durations")
	}
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	rig, err := newIngestRig(cmd)
	if err != nil {
		return err
	}
	defer rig.close(ctx)
	fmt.Fprintf(out, "lift bench ingest: %d CPUs, GOMAXPROCS %d, %s per phase, single events per request, WAL fsync on, load average %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), o.duration, loadAverage())

	// Warm both up so connection setup and first allocations are not measured.
	closedLoop(nil, rig.bareURL, rig.bodies, o.workers[0], time.Second, o.maxEvents)
	warm := closedLoop(nil, rig.realURL, rig.bodies, o.workers[0], time.Second, o.maxEvents)
	runs := []loadResult{warm}

	peak, peakRatio, err := o.peaks(out, rig, &runs)
	if err != nil {
		return err
	}
	half := peak.rate() / 2
	if half < 1 {
		return fmt.Errorf("bench: the ingest server accepted nothing")
	}
	openRes := o.halfRate(out, rig, half)
	runs = append(runs, openRes)
	if err := rig.drain(ctx, out, runs); err != nil {
		return err
	}
	var failed int64
	for _, r := range runs {
		failed += r.failed
	}
	slices.Sort(openRes.lat)
	p99 := time.Duration(pct(openRes.lat, 0.99) * float64(time.Millisecond))
	fmt.Fprintf(out, "targets: ratio %.2f ≥ %.2f %s; non-2xx or failed %d %s; p99 @50%% %s < %s %s; loss 0 ok (load average %s)\n",
		peakRatio, targetRatio, verdict(peakRatio >= targetRatio), failed, verdict(failed == 0),
		p99.Round(10*time.Microsecond), targetP99, verdict(p99 < targetP99), loadAverage())
	return nil
}

// peaks runs the same closed-loop load on both servers at each
// concurrency, prints each pair and the ratio of the best rates, and
// returns the ingest server's best run (its runs are added to runs).
// Storefront traffic is many independent browsers, and the WAL's group
// commit turns concurrency into throughput, so one level alone would say
// little.
func (o *ingestBench) peaks(out io.Writer, rig *ingestRig, runs *[]loadResult) (loadResult, float64, error) {
	var bestBare, bestReal loadResult
	for _, workers := range o.workers {
		// The bare handler runs half its time before the ingest phase and
		// half after, so load from other processes that rises or falls
		// during the run weighs on both sides alike (back to back, the
		// ratio swung from 0.4 to 1.1 on a shared box).
		profiled := o.cpuProfile != "" && workers == o.workers[len(o.workers)-1]
		bareRes := closedLoop(out, rig.bareURL, rig.bodies, workers, o.duration/2, o.maxEvents/2)
		stop, err := startProfile(profiled, o.cpuProfile)
		if err != nil {
			return loadResult{}, 0, err
		}
		fs := readWALFsyncs(rig.app.Metrics)
		realRes := closedLoop(out, rig.realURL, rig.bodies, workers, o.duration, o.maxEvents)
		stop()
		walLine := readWALFsyncs(rig.app.Metrics).since(fs, realRes.ok)
		*runs = append(*runs, realRes)
		if stop, err = startProfile(profiled, o.cpuProfile+".bare"); err != nil {
			return loadResult{}, 0, err
		}
		bareRes = bareRes.add(closedLoop(out, rig.bareURL, rig.bodies, workers, o.duration-o.duration/2, o.maxEvents-o.maxEvents/2))
		stop()
		fmt.Fprintf(out, "%4d conns  bare 202 handler  %s\n", workers, bareRes)
		fmt.Fprintf(out, "%4d conns  lift ingest       %s  ratio %.2f\n", workers, realRes, realRes.rate()/bareRes.rate())
		fmt.Fprintf(out, "            %s\n", walLine)
		if bareRes.rate() > bestBare.rate() {
			bestBare = bareRes
		}
		if realRes.rate() > bestReal.rate() {
			bestReal = realRes
		}
	}
	ratio := bestReal.rate() / bestBare.rate()
	fmt.Fprintf(out, "peak: bare %.0f events/s, lift ingest %.0f events/s, ratio %.2f (target ≥ %.2f); load average %s\n",
		bestBare.rate(), bestReal.rate(), ratio, targetRatio, loadAverage())
	return bestReal, ratio, nil
}

// startProfile starts a CPU profile into path when on, and returns what
// stops it. The bare phase gets one too, so the two can be diffed per
// request (go tool pprof -diff_base counts samples, so mind the phases'
// lengths and request counts).
func startProfile(on bool, path string) (stop func(), err error) {
	if !on {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// halfRate holds the ingest server at rate (open loop) for --sustain and
// prints its latency and memory every second, then sends the bare handler
// the same rate for a few seconds: the p99 the machine itself gives (a
// busy box's scheduling shows there too).
func (o *ingestBench) halfRate(out io.Writer, rig *ingestRig, rate float64) loadResult {
	fmt.Fprintf(out, "half-rate phase: %.0f events/s open loop for %s (memory sampled every second)\n", rate, o.sustain)
	fs := readWALFsyncs(rig.app.Metrics)
	res, samples := openLoop(out, rig.realURL, rig.bodies, rate, o.sustain, o.maxEvents)
	walLine := readWALFsyncs(rig.app.Metrics).since(fs, res.ok)
	for _, s := range samples {
		fmt.Fprintf(out, "  t=%3.0fs  rss %6.1f MiB  live heap %6.1f MiB  goroutines %d\n", s.at.Seconds(), s.rssMiB, s.heapMiB, s.goroutines)
	}
	fmt.Fprintf(out, "lift ingest @50%%   %s (target p99 < %s)\n", res, targetP99)
	fmt.Fprintf(out, "                   %s\n", walLine)
	bareOpen, _ := openLoop(nil, rig.bareURL, rig.bodies, rate, min(o.sustain, 5*time.Second), o.maxEvents)
	fmt.Fprintf(out, "bare 202 @same rate %s\n", bareOpen)
	if len(samples) >= 4 {
		first, last := samples[1], samples[len(samples)-1]
		fmt.Fprintf(out, "memory: live heap %.1f → %.1f MiB, rss %.1f → %.1f MiB from t=%.0fs to t=%.0fs (load generator included)\n",
			first.heapMiB, last.heapMiB, first.rssMiB, last.rssMiB, first.at.Seconds(), last.at.Seconds())
	}
	return res
}

// The targets of issue 14: ingest at 0.7× or more of a bare 202 handler's
// requests/second on the same box, p99 under 20 ms at half its peak rate.
const (
	targetRatio = 0.70
	targetP99   = 20 * time.Millisecond
)

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// benchLogHandler shows errors and the ingester's closing summary (commits,
// fsync time), not per-request noise. It is enabled from info up, as a
// server at the default log.level is: enabled at debug, the access log
// built a line for every accepted tracking call (a minted request id, its
// attributes, a slog record) that a server never builds, and the bench
// charged that to the ingest side only.
type benchLogHandler struct{ slog.Handler }

func (h benchLogHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h benchLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError || r.Message == "ingest: closed" {
		return h.Handler.Handle(ctx, r)
	}
	return nil
}

type loopbackServer struct {
	Addr string
	srv  *http.Server
	once sync.Once
}

func serveLoopback(h http.Handler) (*loopbackServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &loopbackServer{Addr: ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *loopbackServer) Close() {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.srv.Shutdown(ctx)
	})
}

// bareAccept is the yardstick: read the body, answer 202, nothing else.
func bareAccept(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	w.Write([]byte(`{"accepted":true}`))
}

// benchBodies are realistic single-event bodies (~450 bytes) across many
// visitors, sessions and event types; the server assigns the event ids.
func benchBodies(n int) [][]byte {
	types := []string{"page_viewed", "product_viewed", "product_viewed", "product_added_to_cart", "checkout_started"}
	out := make([][]byte, n)
	for i := range out {
		session := experiment.NewID("")
		out[i] = fmt.Appendf(nil, `{"sessionId":%q,"visitorId":"visitor-%d","eventType":%q,"source":"webpixel",`+
			`"createdAt":%d,"experimentIds":["%d"],"pagePath":"/products/item-%d",`+
			`"payload":{"pageType":"product","productIds":["gid://shopify/Product/%d"],"variantIds":["%d"],"quantity":1}}`,
			session, i, types[i%len(types)], time.Now().UnixMilli(), 100+i%3, i%50, 7000+i%50, 9000+i%50)
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

type loadResult struct {
	ok, failed int64
	elapsed    time.Duration
	lat        []time.Duration
	cpu        time.Duration // the process's user+system CPU during the run (both servers and the load generator)
}

// add sums two runs of the same load: requests, time and latencies.
func (r loadResult) add(o loadResult) loadResult {
	return loadResult{ok: r.ok + o.ok, failed: r.failed + o.failed, elapsed: r.elapsed + o.elapsed, lat: slices.Concat(r.lat, o.lat),
		cpu: r.cpu + o.cpu}
}

func (r loadResult) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok) / r.elapsed.Seconds()
}

func (r loadResult) String() string {
	slices.Sort(r.lat)
	return fmt.Sprintf("%8.0f events/s  p50 %6.2f ms  p95 %6.2f ms  p99 %6.2f ms  cpu %5.1f µs/req  (%d ok, %d failed, %s)",
		r.rate(), pct(r.lat, 0.50), pct(r.lat, 0.95), pct(r.lat, 0.99), r.cpuPerRequest(), r.ok, r.failed, r.elapsed.Round(time.Millisecond))
}

// cpuPerRequest is the process's CPU per answered request in µs. Unlike the
// rate it hardly moves with other load on the machine, so it shows what a
// change saved even on a busy box (the rate ratio is still the target).
func (r loadResult) cpuPerRequest() float64 {
	if r.ok+r.failed == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.ok+r.failed)
}

func pct(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(p*float64(len(sorted)-1))].Microseconds()) / 1000
}

func benchClient(conns int) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true,
	}}
}

// post sends one body and reports whether it was accepted.
func post(c *http.Client, url string, body []byte) bool {
	resp, err := c.Post(url, "text/plain;charset=UTF-8", bytes.NewReader(body))
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusAccepted
}

// closedLoop runs workers that each send the next request as soon as the
// previous one is answered: the peak rate the server sustains. A terminal
// out gets a progress line.
func closedLoop(out io.Writer, url string, bodies [][]byte, workers int, d time.Duration, maxEvents int64) loadResult {
	c := benchClient(workers)
	defer c.CloseIdleConnections()
	var ok, failed, sent atomic.Int64
	lats := make([][]time.Duration, workers)
	cpu0 := processCPU()
	start := time.Now()
	deadline := start.Add(d)
	stop := startProgress(out, "closed loop", "requests", 0, deadline, func() int64 { return ok.Load() + failed.Load() })
	defer stop()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 1<<10)
			for i := w; time.Now().Before(deadline) && sent.Add(1) <= maxEvents; i += workers {
				t0 := time.Now()
				if post(c, url, bodies[i%len(bodies)]) {
					ok.Add(1)
					lat = append(lat, time.Since(t0))
				} else {
					failed.Add(1)
				}
			}
			lats[w] = lat
		})
	}
	wg.Wait()
	return loadResult{ok: ok.Load(), failed: failed.Load(), elapsed: time.Since(start), lat: slices.Concat(lats...), cpu: processCPU() - cpu0}
}

type memSample struct {
	at              time.Duration
	rssMiB, heapMiB float64
	goroutines      int
}

// openLoop sends requests at a fixed rate whatever the answers' latency, and
// measures each from its scheduled start (no coordinated omission). It
// samples memory every second. A terminal out gets a progress line.
func openLoop(out io.Writer, url string, bodies [][]byte, rate float64, d time.Duration, maxEvents int64) (loadResult, []memSample) {
	const conns = 256
	c := benchClient(conns)
	defer c.CloseIdleConnections()
	interval := time.Duration(float64(time.Second) / rate)
	jobs := make(chan time.Time, conns)
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			local := make([]time.Duration, 0, 1<<8)
			i := w
			for due := range jobs {
				if post(c, url, bodies[i%len(bodies)]) {
					ok.Add(1)
					local = append(local, time.Since(due))
				} else {
					failed.Add(1)
				}
				i += conns
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		})
	}
	var samples []memSample
	cpu0 := processCPU()
	start := time.Now()
	stop := startProgress(out, "open loop", "requests", 0, start.Add(d), func() int64 { return ok.Load() + failed.Load() })
	defer stop()
	nextSample := start
	var n int64
	for due := start; due.Sub(start) < d && n < maxEvents; due = due.Add(interval) {
		if now := time.Now(); now.After(nextSample) {
			samples = append(samples, sampleMemory(now.Sub(start)))
			nextSample = nextSample.Add(time.Second)
		}
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		jobs <- due
		n++
	}
	close(jobs)
	wg.Wait()
	samples = append(samples, sampleMemory(time.Since(start)))
	return loadResult{ok: ok.Load(), failed: failed.Load(), elapsed: time.Since(start), lat: lat, cpu: processCPU() - cpu0}, samples
}

// sampleMemory reads the live heap (what the last GC kept: a leak shows
// as growth here, unlike the sawtooth of the allocated heap) and the RSS.
func sampleMemory(at time.Duration) memSample {
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	live := 0.0
	if m[0].Value.Kind() == metrics.KindUint64 {
		live = float64(m[0].Value.Uint64()) / (1 << 20)
	}
	return memSample{at: at, rssMiB: rssMiB(), heapMiB: live, goroutines: runtime.NumGoroutine()}
}

// rssMiB reads the resident set size from /proc (Linux).
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return float64(pages*int64(os.Getpagesize())) / (1 << 20)
}

// processCPU is the user+system CPU this process has used (getrusage).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
