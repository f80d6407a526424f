package jobs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestAsynqLoggerHoldsBackRepeats: the same line within a minute is
// written once; after the window it is written again with how many were
// held back; another line, or another level, is not held back by it.
func TestAsynqLoggerHoldsBackRepeats(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	a := newAsynqLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	a.held.now = func() time.Time { return now }
	for range 30 {
		a.Error("Dequeue error: ", "dial tcp: connection refused")
		now = now.Add(time.Second)
	}
	a.Warn("Dequeue error: ", "dial tcp: connection refused")
	a.Error("Failed to forward scheduled tasks")
	now = now.Add(time.Minute)
	a.Error("Dequeue error: ", "dial tcp: connection refused")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`level=ERROR msg="Dequeue error: dial tcp: connection refused"`,
		`level=WARN msg="Dequeue error: dial tcp: connection refused"`,
		`level=ERROR msg="Failed to forward scheduled tasks"`,
		`level=ERROR msg="Dequeue error: dial tcp: connection refused" repeated=29`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[i], w) {
			t.Errorf("line %d = %q, want it to end %q", i, lines[i], w)
		}
	}
}
