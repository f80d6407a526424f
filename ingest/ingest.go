// Package ingest takes the storefront's tracking requests at full volume and
// loses none it acknowledged: a request is validated, appended to a
// write-ahead log on local disk (group-committed), answered, and later
// flushed in large batches into ClickHouse (DESIGN §6).
package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/liftab/lift/experiment"
)

// Sink is the port the flusher writes into, declared here so ingest needs no
// database driver; *warehouse.Warehouse implements it and cmd/lift wires it
// in. Insert must be safe to retry with the same batch (the tables fold rows
// by their ids).
type Sink interface {
	Insert(ctx context.Context, b *Batch) error
}

// Config of the ingester. Zero fields take the defaults.
type Config struct {
	Dir            string        // WAL directory; required
	SegmentBytes   int64         // rotate a segment at this size; default 16 MiB
	DiskBudget     int64         // WAL bytes kept for an absent ClickHouse, then 503; default 2 GiB of frames (a running node also holds the segment it writes and the next, zero-filled to SegmentBytes; a stop or the next start trims them)
	CommitInterval time.Duration // minimum time between the starts of two group commits; default 500 µs (see commitLoop)
	CommitFsyncs   int           // group commits whose fsyncs may overlap; default 8 (see commitLoop)
	MaxBatchRows   int           // rows per insert; default 50 000
	FlushInterval  time.Duration // longest a row waits for its batch; default 5 s (see flushEvery)
	RetryMin       time.Duration // first wait after a failed insert; default 100 ms
	RetryMax       time.Duration // longest wait between retries; default 5 s
	InsertTimeout  time.Duration // one insert attempt; default 30 s
	Now            func() time.Time
	Logger         *slog.Logger
	Observer       Observer // told of every row accepted or refused and every flush; default: none
}

// Observer is told what the ingester does, for metrics. Its methods are
// called on the request, commit and flush paths, so they must be cheap and
// must not block. kind is the row kind: event, assignment, session,
// page_view or legacy; reason is the refusal's error code.
type Observer interface {
	Accepted(kind string, rows int)
	Rejected(kind, reason string)
	// Committed reports a group commit on disk: the rows it carried and
	// how long its fsync took, the durable wait of every request in it.
	Committed(rows int, fsync time.Duration)
	Flushed(rows int)
	FlushFailed()
}

type noObserver struct{}

func (noObserver) Accepted(string, int)         {}
func (noObserver) Rejected(string, string)      {}
func (noObserver) Committed(int, time.Duration) {}
func (noObserver) Flushed(int)                  {}
func (noObserver) FlushFailed()                 {}

// flushEvery is the default FlushInterval. Every insert makes a new part in
// the events table and in each of its materialized views, which ClickHouse
// writes and later merges on the disk the WAL fsyncs to; with no FUA (virtio
// here) an fdatasync waits for the disk cache to take everything written
// before it. Under lift bench ingest the requests slower than 30 ms at half
// rate all fell in 100 ms windows that held an fsync of 17-109 ms (a quiet
// disk: 5 ms at most), and a buffered writer beside an fsync loop gave the
// same (p99 107 ms against 2 ms alone). Inserting every 5 s instead of 1 s
// (ClickHouse asks for at most one insert a second) writes five times fewer
// parts: half-rate p99 13-29 ms against 33-48 ms after one closed-loop phase,
// though after the default bench's three phases the merges of their rows
// still stall some runs. A/B results need no row sooner than that.
const flushEvery = 5 * time.Second

func (c Config) withDefaults() Config {
	c.SegmentBytes = cmp.Or(c.SegmentBytes, 16<<20)
	c.DiskBudget = cmp.Or(c.DiskBudget, 2<<30)
	c.CommitInterval = cmp.Or(c.CommitInterval, 500*time.Microsecond)
	c.CommitFsyncs = cmp.Or(c.CommitFsyncs, 8)
	c.MaxBatchRows = cmp.Or(c.MaxBatchRows, 50_000)
	c.FlushInterval = cmp.Or(c.FlushInterval, flushEvery)
	c.RetryMin = cmp.Or(c.RetryMin, 100*time.Millisecond)
	c.RetryMax = cmp.Or(c.RetryMax, 5*time.Second)
	c.InsertTimeout = cmp.Or(c.InsertTimeout, 30*time.Second)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Dir == "":
		return errors.New("the WAL directory (Dir) is required")
	case c.SegmentBytes < 1<<10:
		return errors.New("SegmentBytes must be at least 1 KiB")
	case c.DiskBudget < 4*c.SegmentBytes:
		return errors.New("DiskBudget must hold at least four segments")
	case c.CommitInterval < 0 || c.FlushInterval < 0 || c.RetryMin < 0 || c.RetryMax < c.RetryMin || c.InsertTimeout < 0:
		return errors.New("intervals must not be negative, RetryMax ≥ RetryMin")
	case c.MaxBatchRows < 1:
		return errors.New("MaxBatchRows must be positive")
	case c.CommitFsyncs < 1 || c.CommitFsyncs > 64:
		return errors.New("CommitFsyncs must be between 1 and 64")
	}
	return nil
}

// Stats are counters since Start, for the bench and operators.
type Stats struct {
	Appended    int64         // rows acknowledged (on disk)
	Inserted    int64         // rows accepted by ClickHouse (replays included)
	FailedFlush int64         // insert attempts that failed
	WALBytes    int64         // bytes held in the WAL
	WALSegments int64         // segment files of the WAL
	Commits     int64         // group commits (one fsync each)
	FsyncTime   time.Duration // summed over commits
	MaxFsync    time.Duration
}

// Ingester validates tracking requests, logs them durably and flushes them.
// Create with New, then Start; Close drains.
type Ingester struct {
	cfg  Config
	sink Sink
	log  *slog.Logger

	lock   *os.File // held from Start to the end of Close (lockDir)
	wal    *wal
	reader *walReader

	closing   chan struct{}
	drainCtx  context.Context // cancelled when Close's deadline passes
	drainStop context.CancelFunc
	flushed   chan struct{}
	closeOnce sync.Once

	appended, inserted, failed atomic.Int64
	drained                    bool // set by the flusher when it emptied the WAL on Close
}

// New checks cfg. Nothing is opened until Start.
func New(cfg Config, sink Sink) (*Ingester, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("ingest.New: %w", err)
	}
	if sink == nil {
		return nil, errors.New("ingest.New: a Sink is required")
	}
	return &Ingester{cfg: cfg, sink: sink, log: cfg.Logger}, nil
}

// Start opens the WAL, replays what a previous run left unflushed and starts
// the flusher. Requests are accepted as soon as it returns.
func (in *Ingester) Start() error {
	lock, err := lockDir(in.cfg.Dir)
	if err != nil {
		return fmt.Errorf("ingest.Start: %s: %w", in.cfg.Dir, err)
	}
	w, err := openWAL(walConfig{
		dir: in.cfg.Dir, segmentBytes: in.cfg.SegmentBytes, diskBudget: in.cfg.DiskBudget,
		commitInterval: in.cfg.CommitInterval, concurrency: in.cfg.CommitFsyncs, committed: in.cfg.Observer.Committed,
	})
	if err != nil {
		lock.Close()
		return fmt.Errorf("ingest.Start: %w", err)
	}
	in.lock, in.wal = lock, w
	if err := w.accepting(); errors.Is(err, syscall.ENOSPC) {
		in.log.Warn("ingest: the disk is full: tracking answers 503 and the node is not ready until a WAL segment fits; "+
			"the WAL's acknowledged rows still drain to ClickHouse", "dir", in.cfg.Dir, "error", err)
	}
	in.reader = newWALReader(w)
	in.closing = make(chan struct{})
	in.flushed = make(chan struct{})
	in.drainCtx, in.drainStop = context.WithCancel(context.Background())
	go in.flushLoop()
	return nil
}

// Close stops accepting, then flushes everything in the WAL to ClickHouse
// until ctx is done. What could not be flushed by then stays in the WAL and
// is replayed by the next Start; Close reports that as an error.
func (in *Ingester) Close(ctx context.Context) error {
	var err error
	in.closeOnce.Do(func() {
		in.wal.close()
		close(in.closing)
		select {
		case <-in.flushed:
		case <-ctx.Done():
			in.drainStop()
			<-in.flushed
		}
		in.drainStop()
		in.reader.close()
		in.lock.Close() // the flusher is done with the directory
		st := in.Stats()
		in.log.Info("ingest: closed", "appended", st.Appended, "inserted", st.Inserted, "failed_flushes", st.FailedFlush,
			"commits", st.Commits, "avg_fsync", st.FsyncTime/time.Duration(max(st.Commits, 1)), "max_fsync", st.MaxFsync, "wal_bytes_left", st.WALBytes)
		if !in.drained {
			err = fmt.Errorf("ingest.Close: %w; the rest stays in the WAL for the next start", ctx.Err())
		}
	})
	return err
}

// Stats returns the counters.
func (in *Ingester) Stats() Stats {
	in.wal.mu.Lock()
	walBytes := in.wal.diskBytes
	segments := int64(len(in.wal.sizes))
	in.wal.mu.Unlock()
	return Stats{Appended: in.appended.Load(), Inserted: in.inserted.Load(), FailedFlush: in.failed.Load(), WALBytes: walBytes, WALSegments: segments,
		Commits: in.wal.commits.Load(), FsyncTime: time.Duration(in.wal.syncNanos.Load()),
		MaxFsync: time.Duration(in.wal.maxSyncNanos.Load())}
}

// Accepting reports whether the WAL takes appends now: ErrClosed after
// Close, ErrWALFull while it holds its disk budget (ClickHouse away).
// /readyz of an ingest node is this.
func (in *Ingester) Accepting(context.Context) error { return in.wal.accepting() }

// Now is the ingester's clock; adapters stamp Meta.ReceivedAt with it.
func (in *Ingester) Now() time.Time { return in.cfg.Now() }

// TrackEvent records a behavioral event (POST /api/track/event). It returns
// a KindInvalidRequest error naming the field, or KindUnavailable when the
// WAL is full or closed; nil means the event is durably logged.
func (in *Ingester) TrackEvent(ctx context.Context, shopID int64, req *EventRequest, m Meta) (rerr error) {
	n := 0
	defer func() { in.observe("event", n, rerr) }()
	var arr [2]Event // most events carry one or two experiment ids
	rows, err := validEvent(arr[:0], req, shopID, m)
	if err != nil {
		return err
	}
	bp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bp)
	buf := (*bp)[:0]
	var one [1]record
	recs := one[:0]
	if len(rows) > 1 {
		recs = make([]record, 0, len(rows))
	}
	for i := range rows {
		start := len(buf)
		buf = appendEvent(buf, &rows[i])
		recs = append(recs, record{kind: kindEvent, body: buf[start:len(buf):len(buf)]})
	}
	*bp = buf
	n = len(recs)
	return in.append(recs...) // the WAL copies the bodies before returning
}

// encodeBuffers recycle event encodings between requests.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// TrackAssignment records an assignment (POST /api/track/assignment) and
// returns its id, which is the same for every call of that visitor and test:
// only the first stands.
func (in *Ingester) TrackAssignment(ctx context.Context, shopID int64, req *AssignmentRequest, m Meta) (_ string, rerr error) {
	defer func() { in.observe("assignment", 1, rerr) }()
	row, err := validAssignment(req, shopID, m)
	if err != nil {
		return "", err
	}
	rec, ferr := encodeRecord(kindAssignment, &row)
	if ferr != nil {
		return "", ferr
	}
	if err := in.append(rec); err != nil {
		return "", err
	}
	return row.AssignmentID, nil
}

// ObserveSession records a page load of a session (GET /api/observe/session).
func (in *Ingester) ObserveSession(ctx context.Context, shopID int64, req *SessionRequest, m Meta) (rerr error) {
	defer func() { in.observe("session", 1, rerr) }()
	row, err := validSession(req, shopID, m)
	if err != nil {
		return err
	}
	rec, ferr := encodeRecord(kindSession, &row)
	if ferr != nil {
		return ferr
	}
	return in.append(rec)
}

// ObserveProduct records a product page view (GET /api/observe).
func (in *Ingester) ObserveProduct(ctx context.Context, shopID int64, req *ObserveRequest, m Meta) (rerr error) {
	defer func() { in.observe("page_view", 1, rerr) }()
	row, err := validPageView(req, shopID, m)
	if err != nil {
		return err
	}
	rec, ferr := encodeRecord(kindPageView, &row)
	if ferr != nil {
		return ferr
	}
	return in.append(rec)
}

// TrackLegacy records one of the legacy analytics calls.
func (in *Ingester) TrackLegacy(ctx context.Context, kind LegacyKind, shopID int64, shopCurrency string, req *LegacyRequest, m Meta) (rerr error) {
	defer func() { in.observe("legacy", 1, rerr) }()
	ev, order, err := validLegacy(kind, req, shopID, shopCurrency, m)
	if err != nil {
		return err
	}
	var rec record
	var ferr error
	if order != nil {
		rec, ferr = encodeRecord(kindOrder, order)
	} else {
		rec = record{kind: kindEvent, body: appendEvent(nil, ev)}
	}
	if ferr != nil {
		return ferr
	}
	return in.append(rec)
}

// Refused counts a request its surface refused before handing it over (an
// unknown shop, a body that does not decode), under the kind the ingester
// would have counted it as, so the rejected counter sees every refusal.
func (in *Ingester) Refused(kind string, err error) { in.observe(kind, 0, err) }

// observe tells the Observer how a request ended: rows accepted, or refused
// with the error's code (internal for errors that carry none).
func (in *Ingester) observe(kind string, rows int, err error) {
	o := in.cfg.Observer
	if err == nil {
		o.Accepted(kind, rows)
		return
	}
	reason := "internal"
	if e, ok := experiment.AsError(err); ok && e != nil {
		reason = e.Code
	}
	o.Rejected(kind, reason)
}

// append logs records as one unit and translates the WAL's refusals.
func (in *Ingester) append(recs ...record) error {
	err := in.wal.append(recs...)
	if err == nil {
		in.appended.Add(int64(len(recs)))
		return nil
	}
	return refusal(err)
}

// refusal is the answer to a WAL that did not take the records.
func refusal(err error) error {
	switch {
	case errors.Is(err, ErrWALFull):
		return experiment.Errorf(experiment.KindUnavailable, "ingest_backlog_full", "tracking is paused while the backlog drains; retry later")
	case errors.Is(err, ErrClosed):
		return experiment.Errorf(experiment.KindUnavailable, "ingest_closed", "the server is shutting down; retry")
	case errors.Is(err, syscall.ENOSPC):
		// The disk filled before the budget did (a budget larger than the
		// disk): the same retryable refusal, nothing acknowledged, not a
		// 500 per request (the ops audit).
		return experiment.Errorf(experiment.KindUnavailable, "ingest_backlog_full", "tracking is paused: the server's disk is full; retry later")
	default:
		return fmt.Errorf("ingest.append: %w", err)
	}
}
