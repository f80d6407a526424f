// Package metrics holds every Prometheus metric Lift exports and the
// /metrics handler that serves them. The wiring creates one Metrics per
// process; the packages that do the work report through small hooks (a
// function, or ingest's Observer) that Metrics provides, so the domain
// packages never import Prometheus.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics is one process's metrics on its own registry (not the global
// one, so tests can build as many as they like).
type Metrics struct {
	reg *prometheus.Registry

	httpRequests  *prometheus.CounterVec
	httpDuration  *prometheus.HistogramVec
	ingestRows    *prometheus.CounterVec
	ingestRefused *prometheus.CounterVec
	flushRows     prometheus.Counter
	flushFailures prometheus.Counter
	walFsync      prometheus.Histogram
	walGroupRows  prometheus.Histogram
	jobDuration   *prometheus.HistogramVec
	ingestOnce    sync.Once
}

// New registers the metrics every process has, with the Go runtime and
// process collectors; the ingest ones are registered by Ingest.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lift_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lift_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		ingestRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lift_ingest_rows_accepted_total", Help: "Tracking rows written to the WAL, by kind.",
		}, []string{"kind"}),
		ingestRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lift_ingest_requests_rejected_total", Help: "Tracking requests refused, by kind and error code.",
		}, []string{"kind", "reason"}),
		flushRows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lift_ingest_flush_rows_total", Help: "Rows the WAL flusher inserted into ClickHouse (replays included).",
		}),
		flushFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lift_ingest_flush_failures_total", Help: "Failed ClickHouse inserts of the WAL flusher (each is retried).",
		}),
		// A tracking call is answered after its group's fsync, so this
		// is the disk's share of ingest latency: when the p99 of
		// lift_http_request_duration_seconds on the tracking routes rises,
		// it says whether the disk is why.
		walFsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "lift_ingest_wal_fsync_seconds", Help: "Time a WAL group commit's fsync took.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		walGroupRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "lift_ingest_wal_group_rows", Help: "Rows a WAL group commit carried (the requests sharing one fsync).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}),
		// Snapshots and result queries are jobs: their durations are
		// the results:snapshot and results:query series.
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lift_job_duration_seconds", Help: "Time a background job ran, by task type and outcome (ok or error).",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2, 3, 5, 10, 30, 60, 300},
		}, []string{"type", "outcome"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.jobDuration)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveRequest counts one answered request. route is the pattern the
// router matched (never the raw URL: ids would make every path a series).
func (m *Metrics) ObserveRequest(route, method string, status int, took time.Duration) {
	m.httpRequests.WithLabelValues(route, method, statusLabel(status)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(took.Seconds())
}

// ObserveJob records one run of a background task.
func (m *Metrics) ObserveJob(taskType string, took time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.jobDuration.WithLabelValues(taskType, outcome).Observe(took.Seconds())
}

// Ingest is the ingester's observer (it satisfies ingest.Observer). The
// lift_ingest_* series exist from its first call: an api-role server or a
// worker has no ingester, and a series of zeros from each such pod is noise
// beside the ingest nodes' (ops audit O2-11).
func (m *Metrics) Ingest() IngestObserver {
	m.ingestOnce.Do(func() {
		m.reg.MustRegister(m.ingestRows, m.ingestRefused, m.flushRows, m.flushFailures, m.walFsync, m.walGroupRows)
	})
	return IngestObserver{m}
}

// IngestObserver counts the ingester's rows and flushes.
type IngestObserver struct{ m *Metrics }

// Accepted counts rows written to the WAL.
func (o IngestObserver) Accepted(kind string, rows int) {
	o.m.ingestRows.WithLabelValues(kind).Add(float64(rows))
}

// Rejected counts a refused request.
func (o IngestObserver) Rejected(kind, reason string) {
	o.m.ingestRefused.WithLabelValues(kind, reason).Inc()
}

// Committed records a group commit on disk.
func (o IngestObserver) Committed(rows int, fsync time.Duration) {
	o.m.walFsync.Observe(fsync.Seconds())
	o.m.walGroupRows.Observe(float64(rows))
}

// WALFsyncs reads the fsync histogram: bucket upper bounds in seconds and
// the cumulative count at each, and the count of all (lift bench ingest
// prints a phase's quantiles from two reads).
func (m *Metrics) WALFsyncs() (bounds []float64, cumulative []uint64, count uint64) {
	var d dto.Metric
	if err := m.walFsync.Write(&d); err != nil {
		return nil, nil, 0
	}
	for _, b := range d.GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
		cumulative = append(cumulative, b.GetCumulativeCount())
	}
	return bounds, cumulative, d.GetHistogram().GetSampleCount()
}

// Flushed counts rows ClickHouse accepted.
func (o IngestObserver) Flushed(rows int) { o.m.flushRows.Add(float64(rows)) }

// FlushFailed counts a failed insert.
func (o IngestObserver) FlushFailed() { o.m.flushFailures.Inc() }

// WatchWAL exports the WAL's size, read from stats at each scrape.
func (m *Metrics) WatchWAL(stats func() (bytes, segments int64)) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "lift_ingest_wal_bytes", Help: "Bytes held in the ingest WAL."},
			func() float64 { b, _ := stats(); return float64(b) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "lift_ingest_wal_segments", Help: "Segment files of the ingest WAL."},
			func() float64 { _, s := stats(); return float64(s) }))
}

// QueueDepths reports, per queue, the tasks in each state (pending, active,
// scheduled, retry, archived).
type QueueDepths func() (map[string]map[string]int, error)

// WatchQueues exports the job queues' depths, asked of depths at each
// scrape. When the queues cannot be read (Redis down) the scrape carries
// lift_jobs_queue_up 0 and no depths rather than failing.
func (m *Metrics) WatchQueues(depths QueueDepths) {
	m.reg.MustRegister(queueCollector{depths: depths, budget: queueReadBudget})
}

// WatchDeadLetters exports lift_webhook_dead_letters, the deliveries the
// worker gave up on (count is read at each scrape, within the same budget
// as the queues). A scrape that cannot read it carries no sample: alert on
// the value, and on its absence as on any target down.
func (m *Metrics) WatchDeadLetters(count func(context.Context) (int64, error)) {
	m.reg.MustRegister(deadLetterCollector{count: count, budget: queueReadBudget})
}

var deadLettersDesc = prometheus.NewDesc("lift_webhook_dead_letters",
	"Platform webhook deliveries the worker gave up on and no redelivery has completed since (all shops).", nil, nil)

type deadLetterCollector struct {
	count  func(context.Context) (int64, error)
	budget time.Duration
}

func (d deadLetterCollector) Describe(ch chan<- *prometheus.Desc) { ch <- deadLettersDesc }

func (d deadLetterCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), d.budget)
	defer cancel()
	if n, err := d.count(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(deadLettersDesc, prometheus.GaugeValue, float64(n))
	}
}

var errTimeout = errors.New("metrics: the queue read took longer than its budget")

var (
	queueDepthDesc = prometheus.NewDesc("lift_jobs_queue_depth", "Tasks in a job queue, by queue and state.", []string{"queue", "state"}, nil)
	queueUpDesc    = prometheus.NewDesc("lift_jobs_queue_up", "1 when the job queues could be read at this scrape.", nil, nil)
)

type queueCollector struct {
	depths QueueDepths
	budget time.Duration // queueReadBudget; tests shorten it
}

// queueReadBudget bounds the queue read of one scrape: the asynq inspector
// takes no context, and a hung Redis held every /metrics scrape 10 s, past
// Prometheus's default timeout, losing every other metric with it (the ops
// audit). Past it the scrape says lift_jobs_queue_up 0.
const queueReadBudget = time.Second

func (q queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDepthDesc; ch <- queueUpDesc }

func (q queueCollector) Collect(ch chan<- prometheus.Metric) {
	type read struct {
		d   map[string]map[string]int
		err error
	}
	done := make(chan read, 1) // a read past the budget finishes into the buffer
	go func() {
		d, err := q.depths()
		done <- read{d, err}
	}()
	var r read
	select {
	case r = <-done:
	case <-time.After(q.budget):
		r.err = errTimeout
	}
	d, err := r.d, r.err
	if err != nil {
		ch <- prometheus.MustNewConstMetric(queueUpDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(queueUpDesc, prometheus.GaugeValue, 1)
	for queue, states := range d {
		for state, n := range states {
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n), queue, state)
		}
	}
}

// statusLabels spells every HTTP status once: strconv.Itoa allocates for
// numbers of 100 and up, and this runs on every request.
var statusLabels = func() (s [600]string) {
	for i := 100; i < len(s); i++ {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusLabel(code int) string {
	if code >= 100 && code < len(statusLabels) {
		return statusLabels[code]
	}
	return strconv.Itoa(code)
}
