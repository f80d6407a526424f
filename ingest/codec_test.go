package ingest

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEventCodecRoundTrip(t *testing.T) {
	t.Parallel()
	g := int16(-1)
	tests := []struct {
		name string
		ev   Event
	}{
		{"Empty", Event{}},
		{"Full", Event{
			ShopID: 42, ExperimentID: "101", EventID: "e-1", ReceivedAt: testNow, CreatedAt: testNow.Add(-time.Minute),
			SessionID: testSession, VisitorID: "v", EventType: "lift:custom_event:a/b", Source: "webpixel", PagePath: "/p?q=ü",
			PageType: "product", ProductIDs: []string{"1", "2"}, VariantIDs: []string{"3"}, Quantity: 7,
			CheckoutToken: "ck", OrderID: "9", CustomName: "a/b", Revenue: 12.34, TestGroup: &g, IsBot: true,
			Payload: `{"x":1}`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got Event
			if err := decodeEvent(appendEvent(nil, &tc.ev), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.ev, got); diff != "" {
				t.Fatalf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventCodecRefusesTruncated(t *testing.T) {
	t.Parallel()
	ev := Event{ShopID: 1, EventID: "abc", Payload: "{}"}
	b := appendEvent(nil, &ev)
	for n := range len(b) {
		var got Event
		if err := decodeEvent(b[:n], &got); err == nil {
			t.Fatalf("decoded a %d-byte prefix of %d", n, len(b))
		}
	}
}

// The reader parses varints from a string itself; it must agree with
// encoding/binary on every input, malformed ones included.
func TestReaderVarintsMatchBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    []byte
	}{
		{"Empty", nil},
		{"Zero", []byte{0}},
		{"OneByte", []byte{0x7f}},
		{"TwoBytes", []byte{0x80, 0x01}},
		{"Truncated", []byte{0x80, 0x80}},
		{"MaxUint64", binary.AppendUvarint(nil, math.MaxUint64)},
		{"MinInt64", binary.AppendVarint(nil, math.MinInt64)},
		{"Overflow", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}},
		{"TooLong", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
		{"Trailing", []byte{0x05, 0x07}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantU, nU := binary.Uvarint(tc.b)
			r := reader{s: string(tc.b)}
			if gotU := r.uvarint(); (r.err == nil) != (nU > 0) || (nU > 0 && (gotU != wantU || len(r.s) != len(tc.b)-nU)) {
				t.Errorf("uvarint = %d, err %v, rest %d; binary: %d, n %d", gotU, r.err, len(r.s), wantU, nU)
			}
			wantV, nV := binary.Varint(tc.b)
			r = reader{s: string(tc.b)}
			if gotV := r.varint(); (r.err == nil) != (nV > 0) || (nV > 0 && gotV != wantV) {
				t.Errorf("varint = %d, err %v; binary: %d, n %d", gotV, r.err, wantV, nV)
			}
		})
	}
}
