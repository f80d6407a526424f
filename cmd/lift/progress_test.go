package main

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"
)

// TestProgressLine: the line shows count, total, rate and the sooner ETA.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		total int64
		until time.Time
		done  int64
		want  string
	}{
		{"CountBound", 3000, time.Time{}, 1000, "loadgen: 1000/3000 visitors  100/s  elapsed 10s  ETA 20s"},
		{"TimeBoundSooner", 3000, start.Add(15 * time.Second), 1000, "loadgen: 1000/3000 visitors  100/s  elapsed 10s  ETA 5s"},
		{"TimeOnly", 0, start.Add(30 * time.Second), 1000, "loadgen: 1000 visitors  100/s  elapsed 10s  ETA 20s"},
		{"NoBound", 0, time.Time{}, 1000, "loadgen: 1000 visitors  100/s  elapsed 10s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &progress{label: "loadgen", unit: "visitors", total: c.total, until: c.until, start: start,
				done: func() int64 { return c.done }}
			if got := p.line(start.Add(10 * time.Second)); got != c.want {
				t.Errorf("line = %q, want %q", got, c.want)
			}
		})
	}
}

// TestProgressSilentOffTerminal: into a buffer or a file (CI), nothing.
func TestProgressSilentOffTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for _, w := range []io.Writer{&buf, f} {
		stop := startProgress(w, "x", "y", 10, time.Time{}, func() int64 { return 1 })
		time.Sleep(2 * progressEvery)
		stop()
	}
	st, _ := f.Stat()
	if buf.Len() != 0 || st.Size() != 0 {
		t.Fatalf("progress wrote %d bytes to a buffer and %d to a file, want none", buf.Len(), st.Size())
	}
}
