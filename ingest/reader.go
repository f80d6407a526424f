package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// walReader reads committed frames in order, across segments. Only the
// flusher goroutine uses it.
type walReader struct {
	w   *wal
	seq uint64 // segment being read
	off int64  // offset of the next frame in it
	f   *os.File
	buf []byte
}

const readChunk = 2*maxFrame + 2*frameHeader

// newWALReader starts at the checkpoint of the previous run, or at the first
// segment.
func newWALReader(w *wal) *walReader {
	r := &walReader{w: w, buf: make([]byte, 0, readChunk)}
	seq, off, ok := readCheckpoint(w.cfg.dir)
	first, _ := w.nextSegment(0)
	switch {
	case ok && w.hasSegment(seq):
		r.seq, r.off = seq, off
	case ok:
		r.seq, _ = w.nextSegment(seq)
	default:
		r.seq = first
	}
	return r
}

// nextSegment is the smallest live segment after seq.
func (w *wal) nextSegment(seq uint64) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	best, found := uint64(0), false
	for s := range w.sizes {
		if s > seq && (!found || s < best) {
			best, found = s, true
		}
	}
	return best, found
}

func (w *wal) hasSegment(seq uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.sizes[seq]
	return ok
}

// limit is how far seq may be read, and whether it is sealed (no more frames
// will be added: it is before the segment being written).
func (w *wal) limit(seq uint64) (size int64, sealed, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if seq == w.committedSeq {
		return w.committedSize, false, true
	}
	size, ok = w.sizes[seq]
	return size, seq < w.committedSeq, ok
}

// read hands up to max committed payloads to fn, in order, and returns how
// many it read. The payload slice is only valid during the call. It returns
// 0 when the reader has caught up with the committed end.
func (r *walReader) read(max int, fn func(payload []byte)) (int, error) {
	n := 0
	for n < max {
		limit, sealed, ok := r.w.limit(r.seq)
		if !ok || (sealed && r.off >= limit) {
			if !r.advance() {
				return n, nil
			}
			continue
		}
		if r.off >= limit {
			return n, nil
		}
		if r.f == nil {
			f, err := os.Open(segmentPath(r.w.cfg.dir, r.seq))
			if err != nil {
				return n, fmt.Errorf("ingest: WAL read: %w", err)
			}
			r.f = f
		}
		want := min(limit-r.off, readChunk)
		r.buf = r.buf[:want]
		got, err := r.f.ReadAt(r.buf, r.off)
		if err != nil && !errors.Is(err, io.EOF) {
			return n, fmt.Errorf("ingest: WAL read: %w", err)
		}
		chunk := r.buf[:got]
		parsed, torn := 0, false
		for n < max {
			if len(chunk) < frameHeader {
				torn = int64(len(chunk)) == limit-r.off && len(chunk) > 0
				break
			}
			size := int(binary.LittleEndian.Uint32(chunk))
			sum := binary.LittleEndian.Uint32(chunk[4:])
			if size == 0 || size > maxFrame {
				torn = true // zero: the unwritten rest of a zero-filled segment
				break
			}
			if len(chunk) < frameHeader+size {
				torn = int64(len(chunk)) == limit-r.off
				break
			}
			p := chunk[frameHeader : frameHeader+size]
			if crc32.Checksum(p, crcTable) != sum {
				torn = true
				break
			}
			fn(p)
			n++
			parsed++
			r.off += int64(frameHeader + size)
			chunk = chunk[frameHeader+size:]
		}
		if torn {
			// The tail of a segment cut by a crash: nothing after it was
			// acknowledged. A sealed segment ends here; the current one
			// cannot be torn below its committed size.
			if !sealed || !r.advance() {
				return n, nil
			}
			continue
		}
		if parsed == 0 && n < max {
			return n, nil
		}
	}
	return n, nil
}

// advance moves to the next live segment, if there is one.
func (r *walReader) advance() bool {
	next, ok := r.w.nextSegment(r.seq)
	if !ok {
		return false
	}
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	r.seq, r.off = next, 0
	return true
}

// position is where the next frame will be read: everything before it has
// been handed out.
func (r *walReader) position() (uint64, int64) { return r.seq, r.off }

func (r *walReader) close() {
	if r.f != nil {
		r.f.Close()
	}
}
