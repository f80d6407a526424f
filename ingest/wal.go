package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The write-ahead log is a directory of segment files named by a sequence
// number (00000000000000000042.wal). A frame is
//
//	[4 bytes little-endian payload length][4 bytes CRC-32C of payload][payload]
//
// and a payload is a kind byte followed by the JSON of one row (rows.go).
//
// Appends are group-committed: requests add frames to a shared buffer and wait;
// one committer goroutine writes the buffer, and one fsync wakes every waiter
// of that group. Several groups' fsyncs may be in flight at once, and groups
// start at least commitInterval apart (see commitLoop). So durability costs
// each request about one fsync of latency (under load, plus at most the
// interval), and the fsyncs' CPU is shared by every request of a group.
//
// The flusher reads the committed frames back in order (walReader) and, once
// ClickHouse has accepted them, calls release: whole segments before the
// accepted position are deleted and the position is saved in a checkpoint
// file, so a restart replays only what was not yet accepted. A crash between
// an accepted insert and the checkpoint replays that batch: the tables fold
// rows by their ids, so it never counts twice.
//
// Segments are zero-filled before use (createSegment), so a segment's data
// ends at the first frame of length zero; a stop or the next start cuts the
// zeros off (closeSegments, trimSegment), so the budget counts real bytes. A
// frame torn by a crash mid-write fails its CRC; the reader stops that
// segment there. That frame was never acknowledged (acks follow the fsync).

const (
	frameHeader    = 8
	maxFrame       = 1 << 20
	segmentSuffix  = ".wal"
	checkpointName = "checkpoint"
	lockName       = "lock"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrWALFull is returned by append when the log is over its disk budget
// (ClickHouse has been away for long); the request is refused, not lost.
var ErrWALFull = errors.New("ingest: write-ahead log over its disk budget")

// ErrWALInUse is returned by Start when another ingester holds the WAL
// directory.
var ErrWALInUse = errors.New("ingest: the WAL directory is in use by another ingester")

// ErrClosed is returned by append after Close.
var ErrClosed = errors.New("ingest: closed")

// walConfig is the part of Config the log needs.
type walConfig struct {
	dir            string
	segmentBytes   int64
	diskBudget     int64
	commitInterval time.Duration
	concurrency    int                                 // fsyncs in flight at once
	committed      func(rows int, fsync time.Duration) // told of every group on disk; may be nil
	// create makes a zero-filled segment file; nil is createSegment (tests
	// give one that meets a full disk).
	create func(dir string, seq uint64, size int64) (*os.File, error)
}

// commitGen is one group commit: everyone who appended into it waits on done.
type commitGen struct {
	done chan struct{}
	err  error
	rows int // records appended into it (under wal.mu)
}

type wal struct {
	cfg walConfig

	mu        sync.Mutex
	pending   []byte // frames of the open generation
	gen       *commitGen
	diskBytes int64 // bytes in segment files plus pending
	closed    bool
	// committed position, read by the flusher
	committedSeq  uint64
	committedSize int64
	sizes         map[uint64]int64 // on-disk size of every live segment
	// noSegment is why appends have no segment to go to (the disk was full
	// when one was needed, at start or at a rotation), nil once one is open.
	noSegment error

	kick     chan struct{} // an append is waiting for the committer
	readable chan struct{} // a commit made new frames readable
	stopped  chan struct{} // the committer has exited

	commits, syncNanos, maxSyncNanos atomic.Int64  // for Stats
	free                             [][]byte      // recycled group buffers (under mu)
	slots                            chan struct{} // one per fsync in flight
	inflight                         sync.WaitGroup

	// owned by the committer goroutine
	next         chan preparedSegment // the segment being prepared, nil before the first
	f            *os.File             // nil while noSegment
	seq          uint64
	size         int64
	segmentTried time.Time // the last try at a segment while noSegment
}

// openWAL opens (creating) the log directory, trims what is left from a
// previous run to its frames (trimSegment) and starts a fresh segment after
// the last one; the old segments are left for the reader to replay.
func openWAL(cfg walConfig) (*wal, error) {
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("ingest.openWAL: %w", err)
	}
	seqs, err := listSegments(cfg.dir)
	if err != nil {
		return nil, fmt.Errorf("ingest.openWAL: %w", err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(cfg.dir, "*"+segmentSuffix+".tmp")); len(tmps) > 0 {
		for _, t := range tmps {
			os.Remove(t) // a preparation cut short by a crash
		}
	}
	if cfg.create == nil {
		cfg.create = createSegment
	}
	w := &wal{
		cfg:      cfg,
		gen:      &commitGen{done: make(chan struct{})},
		sizes:    make(map[uint64]int64),
		kick:     make(chan struct{}, 1),
		readable: make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		slots:    make(chan struct{}, max(cfg.concurrency, 1)),
	}
	next := uint64(1)
	if len(seqs) > 0 {
		next = seqs[len(seqs)-1] + 1 // numbers only grow, even past removed segments
	}
	for _, s := range seqs {
		end, err := trimSegment(segmentPath(cfg.dir, s))
		if err != nil {
			return nil, fmt.Errorf("ingest.openWAL: %w", err)
		}
		if end == 0 {
			continue // removed: it held no frame
		}
		w.sizes[s] = end
		w.diskBytes += end
	}
	if err := w.openSegment(next); err != nil {
		if !errors.Is(err, syscall.ENOSPC) {
			return nil, fmt.Errorf("ingest.openWAL: %w", err)
		}
		// A full disk must not keep the node down: its segments hold
		// acknowledged rows only the flusher can move out (and free the
		// space). Appends are refused as the disk's (503) until the
		// segment fits (trySegment, every second). The segment is listed,
		// empty, before its file exists, so the reader moves past the old
		// ones and the flusher's release deletes them all.
		w.seq, w.committedSeq, w.noSegment = next, next, fmt.Errorf("ingest: no WAL segment: %w", err)
		w.sizes[next] = 0
		go w.retrySegment()
	}
	go w.commitLoop()
	return w, nil
}

// retrySegment wakes the committer every second while appends have no
// segment, so it tries one (trySegment) even when no request arrives: a
// node that is not ready gets none behind a load balancer.
func (w *wal) retrySegment() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		done := w.noSegment == nil || w.closed
		w.mu.Unlock()
		if done {
			return
		}
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// trySegment opens the segment appends go to when there is none (a start
// or a rotation on a full disk), at most once a second: each try may write megabytes
// before the disk refuses them. Committer only.
func (w *wal) trySegment() error {
	if time.Since(w.segmentTried) < time.Second {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.noSegment
	}
	w.segmentTried = time.Now()
	if err := w.openSegment(w.seq); err != nil {
		err = fmt.Errorf("ingest: no WAL segment: %w", err)
		w.mu.Lock()
		w.noSegment = err
		w.mu.Unlock()
		return err
	}
	return nil
}

// openSegment makes seq the segment appends go to, taking the file the
// preparer zero-filled ahead of time when it is the one, and starts
// preparing the next. Committer only (or openWAL before the committer
// starts).
func (w *wal) openSegment(seq uint64) error {
	var f *os.File
	if w.next != nil {
		p := <-w.next // the preparer started long ago; this rarely waits
		w.next = nil
		if p.err == nil && p.seq == seq {
			f = p.f
		} else if p.f != nil {
			p.f.Close()
		}
	}
	if f == nil {
		var err error
		if f, err = w.cfg.create(w.cfg.dir, seq, w.cfg.segmentBytes); err != nil {
			return err
		}
	}
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.seq, w.size = f, seq, 0
	w.mu.Lock()
	w.sizes[seq] = 0
	w.committedSeq, w.committedSize = seq, 0
	w.noSegment = nil
	w.mu.Unlock()
	w.next = make(chan preparedSegment, 1)
	go func(next chan<- preparedSegment) {
		f, err := w.cfg.create(w.cfg.dir, seq+1, w.cfg.segmentBytes)
		next <- preparedSegment{seq: seq + 1, f: f, err: err}
	}(w.next)
	return nil
}

// accepting reports what append would refuse every record with now:
// ErrClosed, or ErrWALFull once not even an empty frame fits the budget.
func (w *wal) accepting() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return ErrClosed
	case w.noSegment != nil:
		return w.noSegment
	case w.diskBytes+frameHeader+1 > w.cfg.diskBudget:
		return ErrWALFull
	}
	return nil
}

// append adds payloads to the log as one unit and returns once they are on
// disk (fsynced), or with ErrWALFull / ErrClosed / the write error, in which
// case nothing was acknowledged.
func (w *wal) append(recs ...record) error {
	n := 0
	for _, r := range recs {
		if 1+len(r.body) > maxFrame {
			return fmt.Errorf("ingest: frame of %d bytes over the limit", len(r.body))
		}
		n += frameHeader + 1 + len(r.body)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if w.diskBytes+int64(n) > w.cfg.diskBudget {
		w.mu.Unlock()
		return ErrWALFull
	}
	for _, r := range recs {
		w.pending = appendFrame(w.pending, r)
	}
	w.diskBytes += int64(n)
	gen := w.gen
	gen.rows += len(recs)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	<-gen.done
	return gen.err
}

// record is one frame's content: a kind byte, then the row's encoding.
type record struct {
	kind byte
	body []byte
}

func appendFrame(b []byte, r record) []byte {
	sum := crc32.Update(crc32.Update(0, crcTable, []byte{r.kind}), crcTable, r.body)
	b = binary.LittleEndian.AppendUint32(b, uint32(1+len(r.body)))
	b = binary.LittleEndian.AppendUint32(b, sum)
	b = append(b, r.kind)
	return append(b, r.body...)
}

// commitLoop is the one writer of segment files. It writes each group in
// order, then fsyncs it in a goroutine of its own so that up to
// commitConcurrency fsyncs overlap: the filesystem folds concurrent fsyncs
// of a file into one journal commit (measured here: 1 fsync at a time gives
// ~1k commits/s, 4 at a time ~10k/s), so requests wait for the disk's
// latency, not for a queue of fsyncs. The default is 8 in flight: with 2, a
// group arriving while both were busy waited a whole fsync for a slot, and
// lift bench ingest at 64 connections gave 0.43-0.53x the bare handler,
// 0.82-1.1x with 8, on the same (busy) box minutes apart. A group is acknowledged when its own
// fsync returns; that fsync started after every earlier group was written,
// so the durable end only grows.
//
// Group commits start at least commitInterval apart (500 µs by default):
// an fsync costs this machine about 55 µs of CPU whatever it carries, and
// with no spacing the groups at 64 connections held under 3 requests, so
// fsyncs were a fifth of the ingest server's CPU per request. Spaced, the
// requests arriving meanwhile share the next group; a request arriving when
// the last group started longer ago than that (any light load) is
// committed at once, so the spacing costs latency only under load, and at
// most the interval.
func (w *wal) commitLoop() {
	defer close(w.stopped)
	for {
		<-w.kick
		w.slots <- struct{}{} // at most commitConcurrency fsyncs in flight
		start := time.Now()
		w.mu.Lock()
		buf, gen, closing := w.pending, w.gen, w.closed
		w.pending, w.gen = w.takeBuffer(), &commitGen{done: make(chan struct{})}
		w.mu.Unlock()

		if len(buf) == 0 {
			if w.f == nil && !closing {
				w.trySegment() // retrySegment's wake-up: its error stays in noSegment
			}
			close(gen.done)
			w.giveBuffer(buf)
			<-w.slots
		} else {
			w.commit(buf, gen)
		}
		if closing {
			w.inflight.Wait()
			w.closeSegments()
			return
		}
		// Spread groups apart: the requests arriving meanwhile share the
		// next one.
		if d := w.cfg.commitInterval - time.Since(start); d > 0 {
			time.Sleep(d)
		}
	}
}

// closeSegments leaves on disk only what was written: the current segment
// is cut after its frames and the one prepared ahead is removed, so a clean
// stop leaves no zero-filled space behind (a crash's is trimmed by the next
// openWAL). The flusher may still be reading the current segment; it reads
// no further than the committed end, which the cut keeps.
func (w *wal) closeSegments() {
	if w.f != nil {
		w.f.Truncate(w.size) // should it fail, the next openWAL trims the segment
		w.f.Close()
	}
	if w.next != nil {
		if p := <-w.next; p.f != nil {
			p.f.Close()
			os.Remove(segmentPath(w.cfg.dir, p.seq))
		}
		w.next = nil
	}
}

// commit writes buf to the current segment and starts its fsync. It rotates
// the segment when full, or after a failed write (the file may hold part of
// buf, and good frames must never follow a torn one in the same segment).
func (w *wal) commit(buf []byte, gen *commitGen) {
	if w.f == nil { // the disk was full when a segment was needed
		if err := w.trySegment(); err != nil {
			w.fail(buf, gen, err)
			return
		}
	}
	f, seq := w.f, w.seq
	if _, err := f.WriteAt(buf, w.size); err != nil {
		w.fail(buf, gen, fmt.Errorf("ingest: WAL write: %w", err))
		w.rotate()
		return
	}
	w.size += int64(len(buf))
	end := w.size
	w.inflight.Add(1)
	go func() {
		defer w.inflight.Done()
		t0 := time.Now()
		err := fdatasync(f)
		took := int64(time.Since(t0))
		w.syncNanos.Add(took)
		for prev := w.maxSyncNanos.Load(); took > prev && !w.maxSyncNanos.CompareAndSwap(prev, took); prev = w.maxSyncNanos.Load() {
		}
		w.commits.Add(1)
		if w.cfg.committed != nil && err == nil {
			w.cfg.committed(gen.rows, time.Duration(took))
		}
		if err != nil {
			gen.err = fmt.Errorf("ingest: WAL fsync: %w", err)
		} else {
			w.mu.Lock()
			if end > w.sizes[seq] {
				w.sizes[seq] = end
			}
			if seq == w.committedSeq && end > w.committedSize {
				w.committedSize = end
			}
			w.mu.Unlock()
			select {
			case w.readable <- struct{}{}:
			default:
			}
		}
		close(gen.done)
		w.giveBuffer(buf)
		<-w.slots
	}()
	if w.size >= w.cfg.segmentBytes {
		w.rotate()
	}
}

// fail ends a group that never reached the disk: its requests get err,
// nothing of it was acknowledged.
func (w *wal) fail(buf []byte, gen *commitGen, err error) {
	gen.err = err
	w.mu.Lock()
	w.diskBytes -= int64(len(buf))
	w.mu.Unlock()
	close(gen.done)
	w.giveBuffer(buf)
	<-w.slots
}

// rotate waits for the fsyncs in flight (they use the old file) and moves to
// a new segment. When none can be opened (the disk is full), appends stop
// until one can (loseSegment).
func (w *wal) rotate() {
	w.inflight.Wait()
	if err := w.openSegment(w.seq + 1); err != nil {
		w.loseSegment(err)
	}
}

// loseSegment seals the current segment and leaves appends without one, as
// a start on a full disk does: accepting, and so /readyz, report err until
// trySegment opens the next (retrySegment wakes it every second). It used
// to keep the current segment and write on past its size, so a node whose
// disk filled while it ran grew a segment far beyond segment_bytes, refused
// every request, and still said ready (ops audit O2-2). The segment is cut
// after its last good frame (a failed write may have left part of one, and
// the cut gives the disk back its zero-filled rest); every fsync has
// returned (rotate waited), so its committed size is final. Committer only.
func (w *wal) loseSegment(err error) {
	if w.f != nil {
		w.f.Truncate(w.size) // should it fail, the reader stops at the torn frame and the next openWAL trims it
		w.f.Close()
		w.f = nil
	}
	next := w.seq + 1
	w.seq, w.size = next, 0
	w.segmentTried = time.Now() // openSegment has just failed: the next try in a second
	w.mu.Lock()
	// Listed, empty, before its file exists, as in openWAL: the old
	// segment is sealed, so the reader drains it and release deletes it.
	w.sizes[next] = 0
	w.committedSeq, w.committedSize = next, 0
	w.noSegment = fmt.Errorf("ingest: no WAL segment: %w", err)
	w.mu.Unlock()
	go w.retrySegment()
}

// takeBuffer and giveBuffer recycle group buffers (one per commit in flight,
// plus the one being filled). Callers of takeBuffer hold w.mu.
func (w *wal) takeBuffer() []byte {
	if n := len(w.free); n > 0 {
		b := w.free[n-1]
		w.free = w.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, 64<<10)
}

func (w *wal) giveBuffer(b []byte) {
	if cap(b) > 4<<20 {
		return // a burst's buffer; let it go
	}
	w.mu.Lock()
	w.free = append(w.free, b[:0])
	w.mu.Unlock()
}

// release deletes the segments before seq (the flusher has them all in
// ClickHouse) and records that everything before (seq, off) is done.
func (w *wal) release(seq uint64, off int64) error {
	w.mu.Lock()
	var gone []uint64
	for s, size := range w.sizes {
		if s < seq {
			gone = append(gone, s)
			w.diskBytes -= size
			delete(w.sizes, s)
		}
	}
	w.mu.Unlock()
	for _, s := range gone {
		if err := os.Remove(segmentPath(w.cfg.dir, s)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("ingest: WAL release: %w", err)
		}
	}
	return writeCheckpoint(w.cfg.dir, seq, off)
}

// close stops appends, commits what is pending and stops the committer.
func (w *wal) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.stopped
		return
	}
	w.closed = true
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	<-w.stopped
}

// writeCheckpoint saves the done position atomically (temp file + rename).
// It is not fsynced: losing it on a power cut only replays accepted rows,
// which the tables fold.
func writeCheckpoint(dir string, seq uint64, off int64) error {
	tmp := filepath.Join(dir, checkpointName+".tmp")
	b := binary.LittleEndian.AppendUint64(nil, seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(off))
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("ingest: checkpoint: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, checkpointName)); err != nil {
		return fmt.Errorf("ingest: checkpoint: %w", err)
	}
	return nil
}

func readCheckpoint(dir string) (seq uint64, off int64, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, checkpointName))
	if err != nil || len(b) != 16 {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(b), int64(binary.LittleEndian.Uint64(b[8:])), true
}
