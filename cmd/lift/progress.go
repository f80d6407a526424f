package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress is one status line a long command keeps rewriting with \r while
// it works: count done, rate and ETA. It prints only when its writer is a
// terminal, so CI logs and redirected output stay clean.
type progress struct {
	w           io.Writer
	label, unit string
	total       int64     // 0: unknown
	until       time.Time // zero: no time bound
	done        func() int64
	start       time.Time
	stopc       chan struct{}
	wg          sync.WaitGroup
}

// progressEvery is how often the line is redrawn.
const progressEvery = 500 * time.Millisecond

// startProgress draws the line until the returned stop, which erases it.
// The ETA is the sooner of "total at the current rate" and until.
func startProgress(w io.Writer, label, unit string, total int64, until time.Time, done func() int64) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	p := &progress{w: w, label: label, unit: unit, total: total, until: until, done: done, start: time.Now(), stopc: make(chan struct{})}
	p.wg.Go(p.loop)
	var once sync.Once
	return func() {
		once.Do(func() {
			close(p.stopc)
			p.wg.Wait()
			fmt.Fprint(w, "\r\033[K") // erase the line: the command's own output follows
		})
	}
}

func (p *progress) loop() {
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stopc:
			return
		case now := <-t.C:
			fmt.Fprint(p.w, "\r\033[K"+p.line(now))
		}
	}
}

// line renders the status at now, e.g. "loadgen: 1200/3000 visitors  40/s  ETA 45s".
func (p *progress) line(now time.Time) string {
	n := p.done()
	elapsed := now.Sub(p.start)
	rate := float64(n) / max(elapsed.Seconds(), 1e-9)
	s := fmt.Sprintf("%s: %d", p.label, n)
	if p.total > 0 {
		s += fmt.Sprintf("/%d", p.total)
	}
	s += fmt.Sprintf(" %s  %.0f/s  elapsed %s", p.unit, rate, elapsed.Round(time.Second))
	eta := time.Duration(-1)
	if p.total > 0 && rate > 0 {
		eta = time.Duration(float64(p.total-n) / rate * float64(time.Second))
	}
	if !p.until.IsZero() && (eta < 0 || p.until.Sub(now) < eta) {
		eta = max(p.until.Sub(now), 0)
	}
	if eta >= 0 {
		s += "  ETA " + eta.Round(time.Second).String()
	}
	return s
}

// isTerminal reports whether w is a character device (a terminal), not a
// file or pipe.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
