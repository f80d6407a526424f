package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Kind classifies an error by what the caller can do about it. Adapters map a
// Kind to their own vocabulary (the HTTP layer maps it to a status and an error
// type); the domain never speaks HTTP.
type Kind int

const (
	KindInternal         Kind = iota // a fault of ours; details are never shown
	KindInvalidRequest               // the request itself is unusable (400)
	KindTooLarge                     // the body is over the limit (413)
	KindUnauthenticated              // no usable credential (401)
	KindForbidden                    // credential fine, action not allowed (403)
	KindNotFound                     // nothing of that id for this shop (404)
	KindConflict                     // the current state forbids it (409)
	KindValidation                   // the content is refused, with findings (422)
	KindRateLimited                  // over budget (429)
	KindNotImplemented               // a thing this API does not do (501)
	KindUnavailable                  // a dependency is down; nothing changed (503)
	KindTimeout                      // too slow, rolled back; nothing changed (504)
	KindMethodNotAllowed             // the resource has no such operation (405)
)

// Error is the one error type of Lift. Every layer returns it (or wraps it)
// for failures a client should see; anything else is an internal error whose
// text never leaves the process.
type Error struct {
	Kind     Kind
	Code     string         // stable machine-readable code from the contract
	Message  string         // safe to show to the client
	Param    string         // JSON path of the offending field, or a feature slug
	Details  map[string]any // machine-readable context where a code defines it
	Findings []Finding      // validation findings (KindValidation)
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Param)
	}
	return e.Code + ": " + e.Message
}

// Errorf builds an Error of the given kind and code.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithParam returns e with Param set, for chaining at the construction site.
func (e *Error) WithParam(param string) *Error { e.Param = param; return e }

// WithDetails returns e with Details set.
func (e *Error) WithDetails(d map[string]any) *Error { e.Details = d; return e }

// AsError finds the *Error in err's chain, or reports false.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Severity of a validation finding: an error blocks the request, a warning
// rides along on a successful response.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one validation result, as the contract's part 7 shapes it.
type Finding struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Param    string   `json:"param"`
}

// MarshalJSON writes a finding about the body as a whole with param null,
// as the error envelope's own param is: "" is no JSON path.
func (f Finding) MarshalJSON() ([]byte, error) {
	type wire Finding
	if f.Param != "" {
		return json.Marshal(wire(f))
	}
	return json.Marshal(struct {
		Severity Severity `json:"severity"`
		Code     string   `json:"code"`
		Message  string   `json:"message"`
		Param    *string  `json:"param"`
	}{f.Severity, f.Code, f.Message, nil})
}

// ErrNotFound is matched with errors.Is by adapters that only need to know
// "absent"; resources return a coded *Error of KindNotFound instead.
var ErrNotFound = errors.New("not found")
