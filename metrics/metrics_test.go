package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape serves m's handler once and parses the Prometheus text.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	f, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("not Prometheus text: %v\n%s", err, rec.Body)
	}
	return f
}

// value is the one sample of family name whose labels include want.
func value(f map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	for _, m := range f[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetricsReport(t *testing.T) {
	t.Parallel()
	queuesDown := false
	m := New()
	m.WatchWAL(func() (int64, int64) { return 4096, 2 })
	m.WatchQueues(func() (map[string]map[string]int, error) {
		if queuesDown {
			return nil, errors.New("redis down")
		}
		return map[string]map[string]int{"critical": {"pending": 3, "active": 1}}, nil
	})
	in := m.Ingest()
	in.Accepted("event", 2)
	in.Accepted("event", 1)
	in.Rejected("event", "invalid_field")
	in.Flushed(3)
	in.FlushFailed()
	in.Committed(5, 2*time.Millisecond)
	in.Committed(3, 40*time.Millisecond)
	m.ObserveJob("results:snapshot", 1e9, nil)
	m.ObserveJob("results:query", 1e9, errors.New("x"))

	f := scrape(t, m)
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"lift_ingest_rows_accepted_total", map[string]string{"kind": "event"}, 3},
		{"lift_ingest_requests_rejected_total", map[string]string{"kind": "event", "reason": "invalid_field"}, 1},
		{"lift_ingest_flush_rows_total", nil, 3},
		{"lift_ingest_flush_failures_total", nil, 1},
		{"lift_ingest_wal_bytes", nil, 4096},
		{"lift_ingest_wal_fsync_seconds", nil, 2},
		{"lift_ingest_wal_group_rows", nil, 2},
		{"lift_ingest_wal_segments", nil, 2},
		{"lift_jobs_queue_up", nil, 1},
		{"lift_jobs_queue_depth", map[string]string{"queue": "critical", "state": "pending"}, 3},
		{"lift_job_duration_seconds", map[string]string{"type": "results:snapshot", "outcome": "ok"}, 1},
		{"lift_job_duration_seconds", map[string]string{"type": "results:query", "outcome": "error"}, 1},
	}
	for _, c := range cases {
		if got, ok := value(f, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if f["go_goroutines"] == nil || f["process_cpu_seconds_total"] == nil {
		t.Error("the Go and process collectors are missing")
	}

	// Redis down: the scrape still answers, saying so.
	queuesDown = true
	f = scrape(t, m)
	if up, _ := value(f, "lift_jobs_queue_up", nil); up != 0 || f["lift_jobs_queue_depth"] != nil {
		t.Errorf("queues down: up %v, depth family %v; want 0 and none", up, f["lift_jobs_queue_depth"])
	}
}

// WALFsyncs is what lift bench ingest prints a phase's fsync quantiles
// from: the buckets must come back cumulative, under their bounds.
func TestWALFsyncs(t *testing.T) {
	t.Parallel()
	m := New()
	for _, d := range []time.Duration{300 * time.Microsecond, 2 * time.Millisecond, 40 * time.Millisecond} {
		m.Ingest().Committed(1, d)
	}
	bounds, cum, n := m.WALFsyncs()
	if n != 3 || len(bounds) != len(cum) {
		t.Fatalf("count %d, %d bounds, %d counts; want 3 and equal lengths", n, len(bounds), len(cum))
	}
	want := map[float64]uint64{.00025: 0, .0005: 1, .0025: 2, .025: 2, .05: 3, 1: 3}
	for i, b := range bounds {
		if w, ok := want[b]; ok && cum[i] != w {
			t.Errorf("cumulative count at %gs = %d, want %d", b, cum[i], w)
		}
	}
}

// A queue read that hangs (Redis stopped mid-answer) is given up on at the
// budget: the scrape goes on with lift_jobs_queue_up 0 instead of waiting.
func TestQueueReadHangs(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	hang := make(chan struct{})
	defer close(hang)
	reg.MustRegister(queueCollector{budget: 20 * time.Millisecond, depths: func() (map[string]map[string]int, error) {
		<-hang
		return nil, nil
	}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "lift_jobs_queue_up" && f.GetMetric()[0].GetGauge().GetValue() == 0 {
			return
		}
	}
	t.Fatalf("no lift_jobs_queue_up 0 in %v", families)
}

// TestNoIngestSeriesWithoutIngester: a process with no ingester (api role,
// worker) exports no lift_ingest_* series; one with an ingester exports
// them from the start, before any row.
func TestNoIngestSeriesWithoutIngester(t *testing.T) {
	t.Parallel()
	m := New()
	m.ObserveJob("results:snapshot", 1e9, nil)
	for name := range scrape(t, m) {
		if strings.HasPrefix(name, "lift_ingest_") {
			t.Errorf("%s is exported by a process without an ingester", name)
		}
	}
	m.Ingest()
	m.Ingest() // a second observer registers nothing twice
	f := scrape(t, m)
	for _, name := range []string{"lift_ingest_flush_rows_total", "lift_ingest_flush_failures_total", "lift_ingest_wal_fsync_seconds", "lift_ingest_wal_group_rows"} {
		if f[name] == nil {
			t.Errorf("%s missing once the ingester's observer exists", name)
		}
	}
}

// TestDeadLetters: the gauge reads its count at each scrape, and a scrape
// that cannot read it carries no sample rather than a false zero.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	m := New()
	var n int64 = 3
	var fail error
	m.WatchDeadLetters(func(context.Context) (int64, error) { return n, fail })
	if got, ok := value(scrape(t, m), "lift_webhook_dead_letters", nil); !ok || got != 3 {
		t.Errorf("lift_webhook_dead_letters = %v (%v), want 3", got, ok)
	}
	n = 4
	if got, ok := value(scrape(t, m), "lift_webhook_dead_letters", nil); !ok || got != 4 {
		t.Errorf("lift_webhook_dead_letters = %v (%v) after a fourth, want 4", got, ok)
	}
	fail = errors.New("postgres down")
	if f := scrape(t, m)["lift_webhook_dead_letters"]; f != nil && len(f.GetMetric()) > 0 {
		t.Errorf("a failed read still gave a sample: %v", f)
	}
}
