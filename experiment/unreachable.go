package experiment

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// Unreachable reports whether err says a dependency could not be reached
// at all: the connection was refused, or could not be dialled (the address
// did not resolve). Whatever the driver, adapters wrap such errors and they
// surface as these, so callers need no driver to tell them apart. The work
// was not started, and the same call will work once the dependency is back:
// it is no fault of the call, so a retry need not count it. Not in it:
// timeouts (a dependency slow to answer this call, or dropping its packets,
// may answer the next no faster) and connections reset or broken midway
// (the call itself may have brought the server down), which a caller that
// retries must count, or a poison task would loop for ever.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &dns) && !dns.IsTimeout) ||
		(errors.As(err, &op) && op.Op == "dial")
}
