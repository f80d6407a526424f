package experiment_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
)

func TestUnreachable(t *testing.T) {
	// A real refused dial: a port that was listening and is closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", addr)
	if refused == nil {
		t.Fatal("a closed port accepted a connection")
	}
	// A real dial that runs out of time (an unroutable address, or a dial
	// given no time at all).
	d := net.Dialer{Timeout: time.Nanosecond}
	_, dialTimeout := d.Dial("tcp", "10.255.255.1:5432")
	if dialTimeout == nil {
		t.Fatal("a dial with 1 ns succeeded")
	}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"RefusedDial", refused, true},
		{"RefusedDialWrapped", fmt.Errorf("store.FindShop 1: %w", refused), true},
		{"Unresolved", &net.DNSError{Err: "no such host", Name: "clickhouse.internal", IsNotFound: true}, true},
		{"ResolverTimedOut", &net.DNSError{Err: "i/o timeout", Name: "clickhouse.internal", IsTimeout: true}, false},
		{"DialTimedOut", dialTimeout, false}, // a host that drops packets: counted, or a task would retry for ever
		{"Reset", fmt.Errorf("insert: %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), false},
		{"BrokenPipe", &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}, false},
		{"ReadFailedMidway", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("use of closed network connection")}, false},
		{"Timeout", context.DeadlineExceeded, false},
		{"ReadTimeout", &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}, false},
		{"Plain", errors.New("syntax error near FROM"), false},
		{"DomainError", experiment.Errorf(experiment.KindConflict, "locked_field", "locked"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := experiment.Unreachable(c.err); got != c.want {
				t.Fatalf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
