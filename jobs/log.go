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
// an idle worker), so a line already written in the last repeatWindow is
// held back and counted; the next one written says how many were
// ("repeated").
type asynqLogger struct {
	l   *slog.Logger
	now func() time.Time

	mu   sync.Mutex
	seen map[string]repeat // by level and text
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

func newAsynqLogger(l *slog.Logger) *asynqLogger {
	return &asynqLogger{l: l, now: time.Now, seen: map[string]repeat{}}
}

func (a *asynqLogger) Debug(args ...any) { a.log(slog.LevelDebug, args) }
func (a *asynqLogger) Info(args ...any)  { a.log(slog.LevelInfo, args) }
func (a *asynqLogger) Warn(args ...any)  { a.log(slog.LevelWarn, args) }
func (a *asynqLogger) Error(args ...any) { a.log(slog.LevelError, args) }
func (a *asynqLogger) Fatal(args ...any) { a.log(slog.LevelError, args) }

func (a *asynqLogger) log(level slog.Level, args []any) {
	msg := fmt.Sprint(args...)
	key := level.String() + " " + msg
	now := a.now()
	a.mu.Lock()
	r, ok := a.seen[key]
	if ok && now.Sub(r.at) < repeatWindow {
		r.skipped++
		a.seen[key] = r
		a.mu.Unlock()
		return
	}
	if len(a.seen) >= maxSeen {
		clear(a.seen)
	}
	a.seen[key] = repeat{at: now}
	a.mu.Unlock()
	if r.skipped > 0 {
		a.l.Log(context.Background(), level, msg, "repeated", r.skipped)
		return
	}
	a.l.Log(context.Background(), level, msg)
}
