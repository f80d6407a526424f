package ingest

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// These benchmarks watch the hot path's cost per request: run with
// go test -bench . -benchmem ./ingest/ (they are not part of make test).

func benchEvent() EventRequest {
	req := validEventBody()
	req.ExperimentIDs = []string{"101"}
	return req
}

func BenchmarkValidateEvent(b *testing.B) {
	req := benchEvent()
	m := Meta{ReceivedAt: testNow, UserAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := validEvent(nil, &req, 1, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEventBody(b *testing.B) {
	body, _ := json.Marshal(benchEvent())
	b.ReportAllocs()
	for b.Loop() {
		var req EventRequest
		if err := json.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEventRequest is BenchmarkDecodeEventBody through the
// hand-written scanner the storefront uses (eventjson.go).
func BenchmarkDecodeEventRequest(b *testing.B) {
	body, _ := json.Marshal(benchEvent())
	b.ReportAllocs()
	for b.Loop() {
		var req EventRequest
		if err := DecodeEventRequest(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeEvent(b *testing.B) {
	rows, _ := validEvent(nil, new(benchEvent()), 1, Meta{ReceivedAt: testNow})
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendEvent(buf[:0], &rows[0])
	}
}

func BenchmarkDecodeEvent(b *testing.B) {
	rows, _ := validEvent(nil, new(benchEvent()), 1, Meta{ReceivedAt: testNow})
	enc := appendEvent(nil, &rows[0])
	b.ReportAllocs()
	for b.Loop() {
		var ev Event
		if err := decodeEvent(enc, &ev); err != nil {
			b.Fatal(err)
		}
	}
}

// discardSink accepts every batch; the benchmark measures the WAL path.
type discardSink struct{}

func (discardSink) Insert(context.Context, *Batch) error { return nil }

// BenchmarkTrackEventParallel is validate + encode + group-committed,
// fsynced WAL append from many goroutines, flusher running.
func BenchmarkTrackEventParallel(b *testing.B) {
	in, err := New(Config{Dir: b.TempDir(), FlushInterval: 100 * time.Millisecond}, discardSink{})
	if err != nil {
		b.Fatal(err)
	}
	if err := in.Start(); err != nil {
		b.Fatal(err)
	}
	defer in.Close(context.Background())
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := benchEvent()
		for pb.Next() {
			if err := in.TrackEvent(context.Background(), 1, &req, Meta{ReceivedAt: time.Now()}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
