package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// asynqLogger sends asynq's lines through the process's logger. While Redis
// is down asynq repeats the same few errors every second or two ("Dequeue
// error", "Failed to forward scheduled tasks": about 70 lines a minute from
// an idle worker), so they are held back by level and text (holdBack).
type asynqLogger struct {
	l    *slog.Logger
	held *holdBack
}

// holdBack keeps a line that repeats to one a repeatWindow: a line already
// written in the window is held back and counted, and the next one written
// says how many were ("repeated"). Lines are keyed by what makes them the
// same line for their writer.
type holdBack struct {
	now func() time.Time

	mu   sync.Mutex
	seen map[string]repeat
}

type repeat struct {
	at      time.Time // when the line was last written
	skipped int       // held back since
}

const (
	repeatWindow = time.Minute
	// maxSeen bounds the memory of written lines: texts that carry ids
	// never repeat, and forgetting only lets a line through early.
	maxSeen = 1000
)

func newHoldBack() *holdBack { return &holdBack{now: time.Now, seen: map[string]repeat{}} }

// pass reports whether the line keyed key is written now, and how many of
// it were held back since it last was.
func (h *holdBack) pass(key string) (repeated int, ok bool) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	r, seen := h.seen[key]
	if seen && now.Sub(r.at) < repeatWindow {
		r.skipped++
		h.seen[key] = r
		return 0, false
	}
	if len(h.seen) >= maxSeen {
		clear(h.seen)
	}
	h.seen[key] = repeat{at: now}
	return r.skipped, true
}

func newAsynqLogger(l *slog.Logger) *asynqLogger {
	return &asynqLogger{l: l, held: newHoldBack()}
}

func (a *asynqLogger) Debug(args ...any) { a.log(slog.LevelDebug, args) }
func (a *asynqLogger) Info(args ...any)  { a.log(slog.LevelInfo, args) }
func (a *asynqLogger) Warn(args ...any)  { a.log(slog.LevelWarn, args) }
func (a *asynqLogger) Error(args ...any) { a.log(slog.LevelError, args) }
func (a *asynqLogger) Fatal(args ...any) { a.log(slog.LevelError, args) }

func (a *asynqLogger) log(level slog.Level, args []any) {
	msg := fmt.Sprint(args...)
	repeated, ok := a.held.pass(level.String() + " " + msg)
	switch {
	case !ok:
	case repeated > 0:
		a.l.Log(context.Background(), level, msg, "repeated", repeated)
	default:
		a.l.Log(context.Background(), level, msg)
	}
}
