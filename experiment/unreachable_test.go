package experiment_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

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
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"RefusedDial", refused, true},
		{"RefusedDialWrapped", fmt.Errorf("store.FindShop 1: %w", refused), true},
		{"Unresolved", &net.DNSError{Err: "no such host", Name: "clickhouse.internal", IsNotFound: true}, true},
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
