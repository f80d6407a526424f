package main

import (
	"fmt"
	"math"
	"time"

	"github.com/liftab/lift/metrics"
)

// walFsyncs is one read of the ingest WAL's fsync histogram. Two reads
// around a phase give that phase's fsyncs, so lift bench ingest can show
// how much of a request's latency was the disk's.
type walFsyncs struct {
	bounds []float64
	cum    []uint64
	n      uint64
}

func readWALFsyncs(m *metrics.Metrics) walFsyncs {
	b, c, n := m.WALFsyncs()
	return walFsyncs{bounds: b, cum: c, n: n}
}

// since describes the fsyncs after before: how many, the rows each group
// commit carried on average, and their p50 and p99 as the histogram's
// bucket bounds (what histogram_quantile would say of them).
func (r walFsyncs) since(before walFsyncs, rows int64) string {
	n := r.n - before.n
	if n == 0 {
		return "WAL: no fsync"
	}
	quantile := func(p float64) string {
		want := uint64(math.Ceil(p * float64(n)))
		for i, b := range r.bounds {
			c := r.cum[i]
			if i < len(before.cum) {
				c -= before.cum[i]
			}
			if c >= want {
				return "≤ " + time.Duration(b*float64(time.Second)).String()
			}
		}
		return "> " + time.Duration(r.bounds[len(r.bounds)-1]*float64(time.Second)).String()
	}
	return fmt.Sprintf("WAL: %d fsyncs, %.1f rows each, fsync p50 %s, p99 %s", n, float64(rows)/float64(n), quantile(.5), quantile(.99))
}
