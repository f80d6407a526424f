package experiment

import (
	"errors"
	"net"
	"syscall"
)

// Unreachable reports whether err says a dependency could not be reached:
// the connection was refused, reset or broken, or could not be dialled (the
// address did not resolve). Whatever the driver, adapters wrap such errors
// and they surface as these, so callers need no driver to tell them apart.
// The work was not done, and the same call will work once the dependency is
// back: it is no fault of the call. A timeout is not in it: a dependency
// slow to answer this call may answer the next no faster, so a caller that
// retries must count it.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial")
}
