package ingest

import (
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
