package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/liftab/lift/api/storefront"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/web/tracker"
)

// scrape reads /metrics and parses it as Prometheus text.
func scrape(t *testing.T, s *server) map[string]*dto.MetricFamily {
	t.Helper()
	r := s.do("GET", "/metrics", "", "")
	if r.status != 200 {
		t.Fatalf("/metrics = %d %s", r.status, r.raw)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(r.raw))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v\n%s", err, r.raw)
	}
	return families
}

// requests is lift_http_requests_total of one route, method and status.
func requests(families map[string]*dto.MetricFamily, route, method, status string) float64 {
	f := families["lift_http_requests_total"]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["route"] == route && labels["method"] == method && labels["status"] == status {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestMetrics: /metrics parses as Prometheus text, carries the runtime,
// queue and ingest families, and one request adds exactly one to its
// route's counter, labelled by the pattern, not the URL.
func TestMetrics(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, read, _ := s.shop(true)
	before := scrape(t, s)
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "lift_jobs_queue_up", "lift_ingest_wal_bytes", "lift_ingest_wal_segments"} {
		if before[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}
	route := "/v1/experiments/:id"
	was := requests(before, route, "GET", "404")
	wantError(t, s.do("GET", "/v1/experiments/00000000-0000-4000-8000-000000000000", read, ""), 404,
		"not_found_error", "experiment_not_found", nil)
	after := scrape(t, s)
	if got := requests(after, route, "GET", "404"); got != was+1 {
		t.Errorf("%s 404 counter went %v → %v, want +1", route, was, got)
	}
	for _, m := range after["lift_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" && strings.Contains(l.GetValue(), "00000000") {
				t.Errorf("a route label holds the raw URL: %q", l.GetValue())
			}
		}
	}
}

// TestAccessLog: a v1 request with a bearer token, and a session request,
// log one line with its route, status, request id and shop, and never the token or the query
// string; an accepted tracking call logs at debug level only (an ingest node
// takes tens of thousands a second), a refused one at info with its shop.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Postgres.URL = lifttest.PostgresURL(t)
	cfg.Redis.Addr, cfg.Redis.DB = lifttest.Redis(t)
	cfg.ClickHouse.Addr, cfg.ClickHouse.Database = lifttest.ClickHouse(t)
	cfg.DataDir = t.TempDir()
	cfg.Platform.APIKey, cfg.Platform.APISecret = "key", "secret" // what sessionToken signs with
	app, err := openApp(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	logs := &lifttest.Logs{}
	app.Log = slog.New(slog.NewJSONHandler(logs, nil)) // info: what production logs
	r, stop, err := app.router("all")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() { srv.Close(); stop(context.Background()) })
	s := &server{t: t, app: app, url: srv.URL, cfg: cfg}
	shop, read, _ := s.shop(true)
	if res := s.do("GET", "/v1/experiments?limit=5", read, "", "X-Correlation-Id", "corr-123"); res.status != 200 {
		t.Fatalf("GET /v1/experiments = %d %s", res.status, res.raw)
	}
	event := `{"sessionId":"6f1c2a8e-4b7d-4e21-9a0b-3c5d7e9f1a2b","visitorId":"v1","eventType":"page_viewed","source":"script","createdAt":"2026-11-21T12:00:00Z","experimentIds":[]}`
	if res := s.do("POST", "/api/track/event?shop="+shop.Domain, "", event, "Content-Type", "application/json"); res.status != 202 {
		t.Fatalf("POST /api/track/event = %d %s", res.status, res.raw)
	}
	line := func(route string) string {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"msg":"request"`) && strings.Contains(l, `"route":"`+route+`"`) {
				return l
			}
		}
		t.Fatalf("no access-log line for %s in:\n%s", route, logs.String())
		return ""
	}
	v1Line := line("/v1/experiments")
	for _, want := range []string{`"status":200`, `"request_id":"corr-123"`, `"method":"GET"`, `"shop":"` + shop.Domain + `"`, `"latency_ms":`} {
		if !strings.Contains(v1Line, want) {
			t.Errorf("access-log line lacks %s: %s", want, v1Line)
		}
	}
	// The admin panel's session requests name their shop too (docs audit D11).
	if res := s.do("GET", "/api/experiments", sessionToken(t, shop.Domain), ""); res.status != 200 {
		t.Fatalf("GET /api/experiments = %d %s", res.status, res.raw)
	}
	if l := line("/api/experiments"); !strings.Contains(l, `"shop":"`+shop.Domain+`"`) {
		t.Errorf("session access-log line lacks its shop: %s", l)
	}
	// Every call lift.js makes on a page, and the script itself, come as
	// often as page views: accepted, they log at debug.
	perPage := regexp.MustCompile(`'(/api/[a-z/-]+)`).FindAllSubmatch(tracker.Script().Raw, -1)
	if len(perPage) < 5 {
		t.Fatalf("found %d /api/ paths in lift.js", len(perPage))
	}
	for _, m := range perPage {
		if path := string(m[1]); !slices.Contains(storefront.PerPage, path) {
			t.Errorf("lift.js calls %s on every page, but storefront.PerPage lacks it", path)
		}
	}
	for _, path := range []string{"/api/public/get-country-code", "/api/storefront/config?shop=" + shop.Domain, tracker.Path} {
		if res := s.do("GET", path, "", ""); res.status != 200 {
			t.Fatalf("GET %s = %d %s", path, res.status, res.raw)
		}
	}
	for _, quiet := range []string{`"status":202`, "get-country-code", "/api/storefront/config", tracker.Path} {
		if strings.Contains(logs.String(), quiet) {
			t.Errorf("an accepted per-page call (%s) was logged at info level:\n%s", quiet, logs.String())
		}
	}
	if res := s.do("POST", "/api/track/event?shop="+shop.Domain, "", `{"visitorId":"v1"}`, "Content-Type", "application/json"); res.status != 400 {
		t.Fatalf("POST /api/track/event without a session = %d %s", res.status, res.raw)
	}
	if trackLine := line("/api/track/event"); !strings.Contains(trackLine, `"status":400`) || !strings.Contains(trackLine, `"shop":"`+shop.Domain+`"`) {
		t.Errorf("refused tracking line lacks its status or shop: %s", trackLine)
	}
	if strings.Contains(logs.String(), read) || strings.Contains(logs.String(), "limit=5") {
		t.Errorf("the log holds the token or a query string:\n%s", logs.String())
	}
}

// workerApp is the App a worker's metrics server needs: the default
// configuration on a Redis database of the test's own, its queues watched.
func workerApp(t *testing.T) *App {
	t.Helper()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Redis.Addr, cfg.Redis.DB = lifttest.Redis(t)
	a := &App{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	a.watchQueues()
	t.Cleanup(func() { a.inspector.Close() })
	return a
}

// TestWorkerMetrics: a worker serves /metrics on its own port, with the
// queue depths read from Redis at the scrape.
func TestWorkerMetrics(t *testing.T) {
	t.Parallel()
	a := workerApp(t)
	cfg := a.Config
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := a.serveWorkerMetrics(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	jc := jobs.NewClient(jobs.Redis{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB})
	t.Cleanup(func() { jc.Close() })
	if err := jc.Enqueue(ctx, jobs.Job{Type: "test:nothing", Payload: struct{}{}, Queue: jobs.QueueLow}); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, url: "http://" + addr}
	f := scrape(t, s)
	var low float64
	for _, m := range f["lift_jobs_queue_depth"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["queue"] == jobs.QueueLow && l["state"] == "pending" {
			low = m.GetGauge().GetValue()
		}
	}
	if low != 1 {
		t.Errorf("pending tasks of queue low = %v, want 1", low)
	}
	if up := f["lift_jobs_queue_up"]; up == nil || up.GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Fatalf("lift_jobs_queue_up = %v, want 1", up)
	}
	if len(f["lift_jobs_queue_depth"].GetMetric()) != 15 { // 3 queues × 5 states
		t.Errorf("queue depth series = %d, want 15", len(f["lift_jobs_queue_depth"].GetMetric()))
	}
}

// The worker's metrics server carries its probes: ready while Postgres and
// Redis answer, ClickHouse only degrading it.
func TestWorkerProbes(t *testing.T) {
	s := newServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := s.app.serveWorkerMetrics(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &server{t: t, url: "http://" + addr}
	if r := w.do("GET", "/healthz", "", ""); r.status != 200 {
		t.Fatalf("worker healthz = %d %s", r.status, r.raw)
	}
	r := w.do("GET", "/readyz", "", "")
	checks, _ := r.body["checks"].(map[string]any)
	if r.status != 200 || r.body["status"] != "ready" || checks["postgres"] != "ok" || checks["redis"] != "ok" || checks["clickhouse"] != "ok" {
		t.Fatalf("worker readyz = %d %s", r.status, r.raw)
	}
}

// The worker's HTTP server writes nothing of gin's own to the standard
// streams, whose every line must be JSON (ops audit O2-10: its stderr began
// with gin's debug banner and route list). Not parallel: it swaps gin's
// writers, which are global.
func TestWorkerWritesNoGinDebug(t *testing.T) {
	var buf bytes.Buffer
	out, errOut := gin.DefaultWriter, gin.DefaultErrorWriter
	gin.DefaultWriter, gin.DefaultErrorWriter = &buf, &buf
	defer func() { gin.DefaultWriter, gin.DefaultErrorWriter = out, errOut }()
	a := workerApp(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := a.serveWorkerMetrics(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if gin.Mode() != gin.ReleaseMode || buf.Len() > 0 {
		t.Errorf("gin mode %s, wrote %q; want release mode and nothing", gin.Mode(), buf.String())
	}
}

// TestLogDurations: durations read with their unit in both formats, not as
// JSON's bare nanoseconds (ops audit O2-11).
func TestLogDurations(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		cfg := &config.Config{}
		cfg.Log.Level, cfg.Log.Format = "info", format
		newLogger(cfg, &buf).Info("x", "retry_in", 1600*time.Millisecond)
		if !strings.Contains(buf.String(), "1.6s") || strings.Contains(buf.String(), "1600000000") {
			t.Errorf("%s: %s, want retry_in as 1.6s", format, buf.String())
		}
	}
}
