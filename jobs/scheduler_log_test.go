package jobs

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/lifttest"
)

// A run of failed ticks logs its first failure, then at most a line a
// minute, then one line when the ticks work again.
func TestTickFailuresLogAMinute(t *testing.T) {
	down := errors.New("store.Lead: dial tcp 127.0.0.1:5432: connect: connection refused")
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var logs lifttest.Logs
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	var f tickFailures
	f.note(log, t0, nil)          // healthy: nothing to say
	for s := 0; s <= 90; s += 2 { // 46 failed ticks, one every 2 s
		f.note(log, t0.Add(time.Duration(s)*time.Second), down)
	}
	f.note(log, t0.Add(92*time.Second), nil)
	f.note(log, t0.Add(94*time.Second), nil)
	want := []string{
		`level=ERROR msg="scheduler tick failed" err="store.Lead: dial tcp 127.0.0.1:5432: connect: connection refused" failed_ticks=1 failing_for=0s`,
		`level=ERROR msg="scheduler tick failed" err="store.Lead: dial tcp 127.0.0.1:5432: connect: connection refused" failed_ticks=31 failing_for=1m0s`,
		`level=INFO msg="scheduler ticks again" failed_ticks=46 failed_for=1m32s`,
	}
	if got := strings.Split(strings.TrimSpace(logs.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
