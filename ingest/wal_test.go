package ingest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

func testWAL(t *testing.T, dir string, segmentBytes, budget int64) *wal {
	t.Helper()
	w, err := openWAL(walConfig{dir: dir, segmentBytes: segmentBytes, diskBudget: budget, concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// readAll drains what the reader can see now.
func readAll(t *testing.T, r *walReader) []string {
	t.Helper()
	var got []string
	for {
		n, err := r.read(1000, func(p []byte) { got = append(got, string(p[1:])) })
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return got
		}
	}
}

func mustSegments(t *testing.T, dir string) []uint64 {
	t.Helper()
	seqs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	return seqs
}

func rec(s string) record { return record{kind: kindEvent, body: []byte(s)} }

func TestWALAppendReadAcrossSegments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := testWAL(t, dir, 1024, 1<<20)
	var want []string
	for i := range 200 {
		s := fmt.Sprintf("record-%03d-%s", i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
		want = append(want, s)
		if err := w.append(rec(s)); err != nil {
			t.Fatal(err)
		}
	}
	r := newWALReader(w)
	got := readAll(t, r)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("mismatch (-want +got):\n%s", diff)
	}
	seqs := mustSegments(t, dir)
	if len(seqs) < 5 {
		t.Fatalf("expected several segments of 1 KiB, got %d", len(seqs))
	}
	seq, off := r.position()
	if err := w.release(seq, off); err != nil {
		t.Fatal(err)
	}
	after := mustSegments(t, dir)
	if len(after) == 0 || after[0] != seq {
		t.Errorf("after release segments = %v, want none before %d", after, seq)
	}
	w.close()
}

func TestWALGroupCommitConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	var groups, groupRows int
	var badGroups []string
	committed := func(rows int, fsync time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		groups++
		groupRows += rows
		if rows < 1 || fsync <= 0 {
			badGroups = append(badGroups, fmt.Sprintf("%d rows in %s", rows, fsync))
		}
	}
	w, err := openWAL(walConfig{dir: dir, segmentBytes: 64 << 10, diskBudget: 1 << 30, concurrency: 4, committed: committed})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				if err := w.append(rec(fmt.Sprintf("%02d-%04d", g, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := readAll(t, newWALReader(w))
	if len(got) != writers*each {
		t.Fatalf("read %d records, want %d", len(got), writers*each)
	}
	seen := map[string]bool{}
	for _, s := range got {
		if seen[s] {
			t.Fatalf("record %s read twice", s)
		}
		seen[s] = true
	}
	w.close()
	// Every record was reported once, in the group whose fsync made it
	// durable.
	mu.Lock()
	defer mu.Unlock()
	if groupRows != writers*each || int64(groups) != w.commits.Load() || len(badGroups) > 0 {
		t.Errorf("groups reported %d rows in %d groups (the WAL made %d commits), bad groups %v; want %d rows",
			groupRows, groups, w.commits.Load(), badGroups, writers*each)
	}
}

func TestWALReplayAfterRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		release   int // records accepted (released) before the "crash"
		wantAfter int
	}{
		{name: "NothingReleased", release: 0, wantAfter: 50},
		{name: "HalfReleased", release: 25, wantAfter: 25},
		{name: "AllReleased", release: 50, wantAfter: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			w := testWAL(t, dir, 512, 1<<20)
			for i := range 50 {
				if err := w.append(rec(fmt.Sprintf("r%02d", i))); err != nil {
					t.Fatal(err)
				}
			}
			r := newWALReader(w)
			if tc.release > 0 {
				if n, err := r.read(tc.release, func([]byte) {}); err != nil || n != tc.release {
					t.Fatalf("read %d, %v", n, err)
				}
				seq, off := r.position()
				if err := w.release(seq, off); err != nil {
					t.Fatal(err)
				}
			}
			w.close() // the process dies; nothing else is cleaned up

			w2 := testWAL(t, dir, 512, 1<<20)
			defer w2.close()
			got := readAll(t, newWALReader(w2))
			if len(got) != tc.wantAfter {
				t.Fatalf("replayed %d records, want %d", len(got), tc.wantAfter)
			}
			if tc.wantAfter > 0 && got[0] != fmt.Sprintf("r%02d", 50-tc.wantAfter) {
				t.Errorf("replay starts at %s", got[0])
			}
		})
	}
}

func TestWALTornTailIsIgnored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := testWAL(t, dir, 1<<20, 8<<20)
	for i := range 10 {
		if err := w.append(rec(fmt.Sprintf("r%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	w.close()
	// A crash in the middle of a write leaves half a frame right after the
	// last good one (10 frames of 8+1+2 bytes).
	seqs := mustSegments(t, dir)
	f, err := os.OpenFile(segmentPath(dir, seqs[0]), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(appendFrame(nil, rec("never acknowledged"))[:12], 110)
	f.Close()

	w2 := testWAL(t, dir, 1<<20, 8<<20)
	defer w2.close()
	if err := w2.append(rec("after restart")); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, newWALReader(w2))
	want := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "after restart"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("mismatch (-want +got):\n%s", diff)
	}
}

func TestWALDiskBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := testWAL(t, dir, 1024, 4096)
	defer w.close()
	var err error
	n := 0
	for ; n < 1000; n++ {
		if err = w.append(rec("0123456789012345678901234567890123456789")); err != nil {
			break
		}
	}
	if err != ErrWALFull {
		t.Fatalf("err = %v after %d appends, want ErrWALFull", err, n)
	}
	// /readyz of an ingest node: ready while the smallest record fits.
	for w.accepting() == nil {
		if err := w.append(record{kind: kindEvent}); err != nil {
			t.Fatalf("accepting, yet an empty record was refused: %v", err)
		}
	}
	if err := w.accepting(); err != ErrWALFull || w.append(record{kind: kindEvent}) != ErrWALFull {
		t.Fatalf("accepting = %v once full, and an empty record was not refused", err)
	}
	// Releasing flushed segments makes room again.
	r := newWALReader(w)
	readAll(t, r)
	seq, off := r.position()
	if err := w.release(seq, off); err != nil {
		t.Fatal(err)
	}
	if err := w.append(rec("fits again")); err != nil {
		t.Fatalf("append after release: %v", err)
	}
}

func TestWALClosedRefuses(t *testing.T) {
	t.Parallel()
	w := testWAL(t, filepath.Join(t.TempDir(), "wal"), 1024, 1<<20)
	w.close()
	if err := w.append(rec("late")); err != ErrClosed {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}

// A crash leaves the segment being written and the one prepared after it
// zero-filled; the next start keeps only their frames and counts only those.
func TestWALTrimsWhatACrashLeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const segment = 64 << 10
	frame := appendFrame(nil, rec("acknowledged"))
	for seq, frames := range map[uint64][]byte{1: frame, 2: nil} {
		f, err := createSegment(dir, seq, segment)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(frames, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	w := testWAL(t, dir, segment, 4*segment)
	defer w.close()
	if w.diskBytes != int64(len(frame)) {
		t.Errorf("diskBytes = %d, want the one frame's %d", w.diskBytes, len(frame))
	}
	if fi, err := os.Stat(segmentPath(dir, 1)); err != nil || fi.Size() != int64(len(frame)) {
		t.Errorf("segment 1: %v, %v; want cut to %d bytes", fi, err, len(frame))
	}
	if _, err := os.Stat(segmentPath(dir, 2)); !os.IsNotExist(err) {
		t.Errorf("the empty segment 2 is still there (err %v)", err)
	}
	if got := readAll(t, newWALReader(w)); !cmp.Equal(got, []string{"acknowledged"}) {
		t.Errorf("replayed %q", got)
	}
}

// A WAL that cannot take records refuses them with a retryable 503, a disk
// filled before the budget too; only an unknown failure is a 500.
func TestRefusal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		kind experiment.Kind
		code string
	}{
		{ErrWALFull, experiment.KindUnavailable, "ingest_backlog_full"},
		{ErrClosed, experiment.KindUnavailable, "ingest_closed"},
		{fmt.Errorf("ingest: write segment: %w", &os.PathError{Op: "write", Path: "00000000000000000003.wal", Err: syscall.ENOSPC}),
			experiment.KindUnavailable, "ingest_backlog_full"},
	} {
		e, ok := experiment.AsError(refusal(c.err))
		if !ok || e.Kind != c.kind || e.Code != c.code {
			t.Errorf("%v: %v, want kind %d %s", c.err, e, c.kind, c.code)
		}
	}
	if _, ok := experiment.AsError(refusal(errors.New("bad sector"))); ok {
		t.Error("an unknown failure was answered as a refusal, not a 500")
	}
}

// A node restarted on a full disk starts, though it cannot create the
// segment appends go to: its WAL holds acknowledged rows only the flusher
// can move out, which is what frees the space. Until a segment fits, it is
// not ready and refuses appends as the disk's 503 (it used to exit, and
// crash-loop with the rows held hostage: ops audit F4). The disk is full
// for real: segment files are written to /dev/full until space "frees".
func TestWALStartsOnAFullDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := testWAL(t, dir, 4096, 1<<20)
	for _, s := range []string{"a", "b", "c"} {
		if err := w.append(rec(s)); err != nil {
			t.Fatal(err)
		}
	}
	w.close()

	var full atomic.Bool
	full.Store(true)
	w, err := openWAL(walConfig{dir: dir, segmentBytes: 4096, diskBudget: 1 << 20, concurrency: 4,
		create: func(dir string, seq uint64, size int64) (*os.File, error) {
			if !full.Load() {
				return createSegment(dir, seq, size)
			}
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err == nil {
				_, err = f.Write(make([]byte, size))
				f.Close()
			}
			return nil, err
		}})
	if err != nil {
		t.Fatalf("openWAL on a full disk: %v, want a node that starts and drains", err)
	}
	defer w.close()
	if err := w.accepting(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("accepting on a full disk = %v, want ENOSPC (not ready)", err)
	}
	appendRefusedFull(t, w, "refused")
	old := mustSegments(t, dir)
	r := newWALReader(w)
	defer r.close()
	if got := readAll(t, r); !cmp.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("the flusher read %q from a full disk's WAL, want the acknowledged a b c", got)
	}
	// In ClickHouse now: releasing them frees their disk, the last
	// segment included (it used to stay, and no space ever freed).
	if err := w.release(r.position()); err != nil {
		t.Fatal(err)
	}
	if left := mustSegments(t, dir); len(old) == 0 || len(left) != 0 {
		t.Errorf("segments %v before, %v after the drained rows were released: want none left", old, left)
	}

	roomAgain(t, w, r, &full, "d")
}

// A running node whose disk fills stops taking appends when its segment is
// full and the next cannot be created, and says so to readiness until a
// segment fits (ops audit O2-2: it stayed ready while it refused every
// request, and wrote on past the segment's size). What it acknowledged
// still drains.
// appendRefusedFull checks that appending s on a full disk is refused with
// ENOSPC, answered as unavailable (503).
func appendRefusedFull(t *testing.T, w *wal, s string) {
	t.Helper()
	err := w.append(rec(s))
	if e, ok := experiment.AsError(refusal(err)); !errors.Is(err, syscall.ENOSPC) || !ok || e.Kind != experiment.KindUnavailable {
		t.Errorf("append on a full disk = %v (%v), want ENOSPC answered as unavailable", err, refusal(err))
	}
}

// roomAgain gives the disk room and checks that w takes a segment by
// itself within 5 s, with no request to prompt it (a node that is not
// ready gets none), and that the next append, s, is all the reader finds
// (never the refused record).
func roomAgain(t *testing.T, w *wal, r *walReader, full *atomic.Bool, s string) {
	t.Helper()
	full.Store(false)
	for deadline := time.Now().Add(5 * time.Second); w.accepting() != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not accepting 5 s after the disk had room: %v", w.accepting())
		}
	}
	if err := w.append(rec(s)); err != nil {
		t.Fatalf("append once the disk has room: %v", err)
	}
	if got := readAll(t, r); !cmp.Equal(got, []string{s}) {
		t.Errorf("the flusher then read %q, want %s (and never the refused record)", got, s)
	}
}

func TestWALFillsItsDiskWhileRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const segment = 4096
	var full atomic.Bool
	full.Store(true)
	w, err := openWAL(walConfig{dir: dir, segmentBytes: segment, diskBudget: 1 << 20, concurrency: 4,
		create: func(dir string, seq uint64, size int64) (*os.File, error) {
			if seq > 1 && full.Load() { // the first segment fits; the disk is full after it
				return nil, &os.PathError{Op: "write", Path: segmentPath(dir, seq), Err: syscall.ENOSPC}
			}
			return createSegment(dir, seq, size)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	r := newWALReader(w)
	defer r.close()

	pad := string(make([]byte, 500))
	var acked []string
	for i := 0; i < 9; i++ { // 9 frames of 511 bytes: the segment is full after the last
		s := fmt.Sprintf("r%d", i)
		if err := w.append(rec(s + pad)); err != nil {
			t.Fatalf("append %d before the segment is full: %v", i, err)
		}
		acked = append(acked, s)
	}
	// The committer rotates after acknowledging the last group.
	for deadline := time.Now().Add(5 * time.Second); !errors.Is(w.accepting(), syscall.ENOSPC); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("accepting with a full segment and a full disk = %v, want ENOSPC (not ready)", w.accepting())
		}
	}
	appendRefusedFull(t, w, "refused"+pad)
	if fi, err := os.Stat(segmentPath(dir, 1)); err != nil || fi.Size() != 9*511 {
		t.Errorf("segment 1 = %v %v, want cut at its 9 frames (%d bytes), nothing written past them", fi.Size(), err, 9*511)
	}
	var got []string
	for _, p := range readAll(t, r) {
		got = append(got, p[:len(p)-len(pad)])
	}
	if !cmp.Equal(got, acked) {
		t.Errorf("the flusher read %q, want the acknowledged %q", got, acked)
	}

	roomAgain(t, w, r, &full, "after")
	if err := w.release(r.position()); err != nil {
		t.Fatal(err)
	}
	if left := mustSegments(t, dir); len(left) == 0 || left[0] != 2 {
		t.Errorf("segments after release = %v, want 2 (the one appends now go to) and the one prepared after it", left)
	}
}
