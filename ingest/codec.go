package ingest

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// Events, the bulk of the traffic, are written to the WAL in a compact
// binary form instead of JSON: encoding and decoding them was a fifth of the
// ingest CPU (measured with lift bench ingest --cpuprofile). The other row
// kinds are rarer and stay JSON. A version byte leads, so the format can
// change without misreading a WAL left by an older binary.

const eventCodecV1 = 1

var errCodec = errors.New("ingest: malformed WAL event")

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

// appendTime stores Unix nanoseconds; the zero time gets its own marker
// (UnixNano of it is out of range).
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(b, math.MinInt64)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// appendEvent encodes ev at the end of b.
func appendEvent(b []byte, ev *Event) []byte {
	b = append(b, eventCodecV1)
	b = binary.AppendVarint(b, ev.ShopID)
	b = appendStr(b, ev.ExperimentID)
	b = appendStr(b, ev.EventID)
	b = appendTime(b, ev.ReceivedAt)
	b = appendTime(b, ev.CreatedAt)
	b = appendStr(b, ev.SessionID)
	b = appendStr(b, ev.VisitorID)
	b = appendStr(b, ev.EventType)
	b = appendStr(b, ev.Source)
	b = appendStr(b, ev.PagePath)
	b = appendStr(b, ev.PageType)
	b = appendStrs(b, ev.ProductIDs)
	b = appendStrs(b, ev.VariantIDs)
	b = binary.AppendUvarint(b, uint64(ev.Quantity))
	b = appendStr(b, ev.CheckoutToken)
	b = appendStr(b, ev.OrderID)
	b = appendStr(b, ev.CustomName)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(ev.Revenue))
	if ev.TestGroup != nil {
		b = append(b, 1)
		b = binary.AppendVarint(b, int64(*ev.TestGroup))
	} else {
		b = append(b, 0)
	}
	b = appendBool(b, ev.IsBot)
	return appendStr(b, ev.Payload)
}

// reader decodes what the append functions wrote; the first error sticks.
// It reads a string holding the whole record, so each string field is a
// slice of it: one allocation per event instead of one per field (the
// flusher decodes every event once, and the batch keeps them all until
// its insert, so the fields share the record's lifetime anyway).
type reader struct {
	s   string
	err error
}

func (r *reader) fail() { r.err, r.s = errCodec, "" }

// uvarint is binary.Uvarint over the string.
func (r *reader) uvarint() uint64 {
	var x uint64
	var shift uint
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		c := r.s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflows 64 bits
			}
			r.s = r.s[i+1:]
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	r.fail()
	return 0
}

// varint is binary.Varint over the string (zig-zag on uvarint).
func (r *reader) varint() int64 {
	ux := r.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (r *reader) byte() byte {
	if len(r.s) < 1 {
		r.fail()
		return 0
	}
	v := r.s[0]
	r.s = r.s[1:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.s)) {
		r.fail()
		return ""
	}
	v := r.s[:n]
	r.s = r.s[n:]
	return v
}

func (r *reader) strs() []string {
	n := r.uvarint()
	if n == 0 || n > uint64(len(r.s)) {
		if n != 0 {
			r.fail()
		}
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *reader) time() time.Time {
	v := r.varint()
	if v == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

func (r *reader) f64() float64 {
	if len(r.s) < 8 {
		r.fail()
		return 0
	}
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(r.s[i])
	}
	r.s = r.s[8:]
	return math.Float64frombits(v)
}

// decodeEvent reads one event written by appendEvent.
func decodeEvent(b []byte, ev *Event) error {
	r := reader{s: string(b)}
	if r.byte() != eventCodecV1 {
		return errCodec
	}
	ev.ShopID = r.varint()
	ev.ExperimentID = r.str()
	ev.EventID = r.str()
	ev.ReceivedAt = r.time()
	ev.CreatedAt = r.time()
	ev.SessionID = r.str()
	ev.VisitorID = r.str()
	ev.EventType = r.str()
	ev.Source = r.str()
	ev.PagePath = r.str()
	ev.PageType = r.str()
	ev.ProductIDs = r.strs()
	ev.VariantIDs = r.strs()
	ev.Quantity = uint32(r.uvarint())
	ev.CheckoutToken = r.str()
	ev.OrderID = r.str()
	ev.CustomName = r.str()
	ev.Revenue = r.f64()
	if r.byte() == 1 {
		g := int16(r.varint())
		ev.TestGroup = &g
	}
	ev.IsBot = r.byte() == 1
	ev.Payload = r.str()
	if r.err == nil && len(r.s) != 0 {
		return errCodec
	}
	return r.err
}
