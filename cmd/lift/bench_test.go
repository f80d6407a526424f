package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestBenchIngestRuns: `lift bench ingest` at a tiny scale goes through
// every phase against the real stores and keeps its own books: every
// event acknowledged lands in ClickHouse once (it fails otherwise), and it
// prints each target with a verdict. Its figures are not asserted: tests
// never time anything.
func TestBenchIngestRuns(t *testing.T) {
	t.Parallel()
	s := roleServer(t, "api")
	out, stderr, err := s.command(newBenchCmd(), "ingest", "--duration", "1s", "--sustain", "2s", "--workers", "4", "--max-events", "3000")
	if err != nil {
		t.Fatalf("lift bench ingest: %v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{"   4 conns  bare 202 handler", "   4 conns  lift ingest", "peak: bare ", "half-rate phase: ",
		"lift ingest @50%", "bare 202 @same rate", "targets: ratio "} {
		if !strings.Contains(out, want) {
			t.Errorf("the output has no %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`(\d+) events acknowledged, (\d+) distinct event ids in ClickHouse`).FindStringSubmatch(out)
	if m == nil || m[1] != m[2] || m[1] == "0" {
		t.Errorf("drain line %q, want as many events in ClickHouse as acknowledged, and some:\n%s", m, out)
	}
	if !regexp.MustCompile(`non-2xx or failed 0 ok; .* loss 0 ok`).MatchString(out) {
		t.Errorf("a request failed or was lost:\n%s", out)
	}
}

// TestBenchResultsRuns: `lift bench results` on a small test loads it,
// times every target and prints each verdict, the memory and analytics
// lines and the live-test line, then drops its database. As above, no
// figure is asserted.
func TestBenchResultsRuns(t *testing.T) {
	t.Parallel()
	s := roleServer(t, "api")
	out, stderr, err := s.command(newBenchCmd(), "results", "--visitors", "1000", "--rounds", "1")
	if err != nil {
		t.Fatalf("lift bench results: %v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{"loading 1000 visitors", "first snapshot", "snapshot                   min",
		"breakdown device×country   min", "bare GROUP BY event_type   min", "× the bare scan (medians; target ≤ 3×: ",
		"snapshot peak memory:", "session analytics: slowest cold", "snapshot (live)", "load after timing"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output has no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kept database") {
		t.Errorf("a run without --keep kept its database:\n%s", out)
	}
}
