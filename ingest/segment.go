// Segment files of the WAL (wal.go): naming, zero-filled creation, and the
// trimming of what a previous run left.

package ingest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// trimSegment cuts a segment left by a previous run to its frames and
// returns their size. Segments are zero-filled ahead of use (createSegment),
// so each run leaves the one it was writing and the one prepared after it
// mostly zeros, or entirely: kept as they were, every restart added a full
// segment of nothing to the disk and to the budget, until the node refused
// all tracking. A segment without frames is removed (0 is returned); one
// with frames is truncated after its last, so its size is its real bytes.
// It is never written again (a run appends to a new segment), so cutting
// also drops what a crash left past the last whole frame header, which was
// never acknowledged.
func trimSegment(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end, err := framesEnd(f, fi.Size())
	if err != nil {
		return 0, err
	}
	if end == 0 {
		f.Close()
		return 0, os.Remove(path)
	}
	if end < fi.Size() {
		if err := f.Truncate(end); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// framesEnd is the offset after the last frame of f whose header is whole
// and plausible. A file that does not end in zeros was filled by appends
// (they run past the zero-filled size) and is not scanned: replay reads it
// anyway, and a torn last frame only fails its CRC there.
func framesEnd(f *os.File, size int64) (int64, error) {
	var tail [frameHeader]byte
	if size >= frameHeader {
		if _, err := f.ReadAt(tail[:], size-frameHeader); err != nil {
			return 0, err
		}
		if tail != [frameHeader]byte{} {
			return size, nil
		}
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 1<<20)
	var off int64
	var hdr [frameHeader]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return off, nil // the end of the file, mid-header or not
		}
		n := int64(binary.LittleEndian.Uint32(hdr[:]))
		if n == 0 || n > maxFrame || off+frameHeader+n > size {
			return off, nil
		}
		if _, err := r.Discard(int(n)); err != nil {
			return off, nil
		}
		off += frameHeader + n
	}
}

func segmentPath(dir string, seq uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", seq, segmentSuffix))
}

func listSegments(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segmentSuffix)
		if !ok {
			continue
		}
		s, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	return seqs, nil
}

// preparedSegment is the next segment file, zero-filled in the background.
type preparedSegment struct {
	seq uint64
	f   *os.File
	err error
}

// createSegment writes a segment file of size zero bytes, fsyncs it and only
// then gives it its name. Appends then overwrite blocks that already exist,
// so the file's size and extents never change and fdatasync flushes data
// alone: the filesystem journal is not involved, and a commit does not wait
// behind other processes' writeback (ClickHouse on the same disk). This is
// what PostgreSQL does for its WAL segments (wal_init_zero). Measured here
// under ClickHouse load: p50 490 µs → 190 µs, p99.9 24 ms → 11 ms.
//
// The zeros go to disk a megabyte at a time, each flushed before the next
// is written: the commits' fdatasyncs run meanwhile, and a device flush
// waits for every write queued before it, so 16 MiB handed to the disk at
// once held the commits behind it (a Go probe here, 500 µs-spaced 6 KB
// commits while segments were prepared: max 14 ms with one sync at the
// end, 5-6 ms flushing each megabyte; a segment lasts seconds, the
// preparation 20-30 ms either way).
func createSegment(dir string, seq uint64, size int64) (*os.File, error) {
	final := segmentPath(dir, seq)
	tmp := final + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	zeros := make([]byte, min(size, 1<<20))
	for off := int64(0); off < size; off += int64(len(zeros)) {
		_, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off)
		if err == nil {
			err = fdatasync(f)
		}
		if err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, final); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
