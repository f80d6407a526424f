package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// memSink is an in-memory Sink that can play an absent ClickHouse.
type memSink struct {
	mu   sync.Mutex
	down bool
	rows int
}

func (s *memSink) Insert(_ context.Context, b *Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errors.New("clickhouse is away")
	}
	s.rows += b.Len()
	return nil
}

// dirBytes is what the WAL directory holds on disk (apparent sizes).
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n += fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Each start zero-fills a fresh segment and prepares the next one. Those
// must not pile up across restarts: they used to, each counted at its full
// size against the disk budget, until the node answered 503 for ever.
func TestRestartsKeepWALFlat(t *testing.T) {
	t.Parallel()
	const (
		segment  = 64 << 10
		budget   = 4 * segment // the smallest budget Config allows
		restarts = 50
	)
	tests := []struct {
		name     string
		sinkDown bool
		every    int // track one event on every n-th run; the others stay idle
	}{
		{name: "ClickHouseUp", every: 2},
		{name: "ClickHouseDown", sinkDown: true, every: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sink := &memSink{down: tc.sinkDown}
			tracked := 0
			for run := range restarts {
				in, err := New(Config{Dir: dir, SegmentBytes: segment, DiskBudget: budget, FlushInterval: time.Millisecond,
					RetryMin: time.Millisecond, RetryMax: time.Millisecond}, sink)
				if err != nil {
					t.Fatal(err)
				}
				if err := in.Start(); err != nil {
					t.Fatalf("run %d: Start: %v", run, err)
				}
				if run%tc.every == 0 {
					req := validEventBody()
					if err := in.TrackEvent(context.Background(), 1, &req, Meta{ReceivedAt: testNow}); err != nil {
						t.Fatalf("run %d: the node refuses an event: %v (WAL bytes %d)", run, err, in.Stats().WALBytes)
					}
					tracked += 2 // the event names two experiments: one row each
				}
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				cerr := in.Close(ctx)
				cancel()
				if !tc.sinkDown && cerr != nil {
					t.Fatalf("run %d: Close: %v", run, cerr)
				}
				// Between runs the directory holds the unflushed rows and
				// bookkeeping, never a whole idle segment.
				if got := dirBytes(t, dir); got > segment/2 {
					t.Fatalf("run %d: WAL directory holds %d bytes after a clean stop, want < %d", run, got, segment/2)
				}
			}
			if !tc.sinkDown && sink.rows != tracked {
				t.Errorf("sink got %d rows, want %d", sink.rows, tracked)
			}
			if tc.sinkDown {
				// Everything tracked is still on disk for the next start.
				sink.down = false
				in, err := New(Config{Dir: dir, SegmentBytes: segment, DiskBudget: budget, FlushInterval: time.Millisecond}, sink)
				if err != nil {
					t.Fatal(err)
				}
				if err := in.Start(); err != nil {
					t.Fatal(err)
				}
				if err := in.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				if sink.rows != tracked {
					t.Errorf("after ClickHouse came back the sink got %d rows, want %d", sink.rows, tracked)
				}
			}
		})
	}
}

// Two ingesters on one WAL directory would remove each other's segments;
// the second is refused until the first has closed.
func TestSecondIngesterOnOneDirIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := Config{Dir: dir, SegmentBytes: 64 << 10, DiskBudget: 256 << 10}
	first, err := New(cfg, &memSink{})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	second, err := New(cfg, &memSink{})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(); !errors.Is(err, ErrWALInUse) {
		t.Fatalf("second Start on a held directory: %v, want ErrWALInUse", err)
	}
	req := validEventBody()
	if err := first.TrackEvent(context.Background(), 1, &req, Meta{ReceivedAt: testNow}); err != nil {
		t.Fatalf("the first ingester stopped accepting: %v", err)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := second.Start(); err != nil {
		t.Fatalf("Start after the first closed: %v", err)
	}
	if err := second.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
