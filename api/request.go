package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

const requestIDKey = "lift.request_id"

// RequestIDs takes the caller's x-correlation-id as the request's id, so a
// 5xx can be traced with the caller's own id. Without one, RequestID mints
// an id when something first needs it: an accepted tracking call never does,
// and a random id per event would be work thrown away.
func RequestIDs() gin.HandlerFunc {
	return func(c *gin.Context) {
		// The id is logged and stored with the audit record: text only.
		if id := strings.TrimSpace(c.GetHeader("X-Correlation-Id")); id != "" && len(id) <= 200 && ValidText(id) {
			c.Set(requestIDKey, id)
			c.Header(RequestIDHeader, id)
		}
		c.Next()
	}
}

// RequestIDHeader carries the request's id on the answer of every request
// that has one: every 5xx, on every surface (the session envelope has no
// field for it, and its message asks the caller to quote it).
const RequestIDHeader = "X-Request-Id"

// RequestID is the request's id: the caller's, or one minted on first use
// and kept for the rest of the request.
func RequestID(c *gin.Context) string {
	if id := c.GetString(requestIDKey); id != "" {
		return id
	}
	id := experiment.NewID("req_")
	c.Set(requestIDKey, id)
	if !c.Writer.Written() {
		c.Header(RequestIDHeader, id)
	}
	return id
}

// LimitBody refuses a body over max bytes with 413 request_too_large: at once
// when Content-Length says so, else when reading passes the limit.
func LimitBody(max int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > max {
			WriteError(c, tooLarge(max))
			return
		}
		c.Set(maxBodyKey, max)
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, max)
		c.Next()
	}
}

// TooLarge is the 413 for a body a handler found over the route's limit
// while reading it.
func TooLarge(c *gin.Context) *experiment.Error { return tooLarge(c.GetInt64(maxBodyKey)) }

func tooLarge(max int64) *experiment.Error {
	return experiment.Errorf(experiment.KindTooLarge, "request_too_large", "The request body is over the %d MB limit.", max>>20)
}

// DefaultMaxBody caps ReadBody on a route mounted without LimitBody.
const DefaultMaxBody = 10 << 20

// ReadBody reads the whole body, translating an oversize body to 413. It
// never reads more than the route's LimitBody (or DefaultMaxBody) plus one
// byte. The body is read as JSON whatever its Content-Type says: the
// contract has no status for a media type, and a JSON body sent as a form
// (curl -d) is still the caller's JSON; one that is not JSON is 400
// malformed_json.
func ReadBody(c *gin.Context) ([]byte, error) {
	if b, ok := c.Get(bodyKey); ok {
		return b.([]byte), nil
	}
	// Lift reads bodies as sent: one labelled compressed would be read as
	// JSON whatever its bytes (the fuzz audit's plain body labelled gzip
	// was applied, a real gzip body answered malformed_json).
	if enc := strings.TrimSpace(c.GetHeader("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return nil, Invalid("invalid_request", "", "A Content-Encoding of %q is not accepted: send the body uncompressed.", enc)
	}
	if _, limited := c.Get(maxBodyKey); !limited {
		c.Set(maxBodyKey, int64(DefaultMaxBody))
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, DefaultMaxBody)
	}
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		if isMaxBytes(err) {
			return nil, tooLarge(c.GetInt64(maxBodyKey))
		}
		return nil, Invalid("malformed_json", "", "The request body could not be read.")
	}
	c.Set(bodyKey, b)
	return b, nil
}

const (
	bodyKey    = "lift.body"
	maxBodyKey = "lift.max_body"
)

// NoBody refuses a body on a route that takes none (part 5: the lifecycle
// actions, previews, exports), so a field sent there is not silently
// dropped: an empty body or {} passes; a field is 422 invalid_request
// naming it, text that is not JSON 400 malformed_json.
func NoBody(c *gin.Context) {
	b, err := ReadBody(c)
	if err == nil && len(bytes.TrimSpace(b)) > 0 {
		err = DecodeJSONBytes(b, &struct{}{})
	}
	if err != nil {
		WriteError(c, err)
		return
	}
	c.Next()
}

// DecodeJSON decodes the request body into v. A body that is not JSON is 400
// malformed_json, JSON that is not an object 422 invalid_request; a field v
// does not have, or a value of the wrong kind, is 422 invalid_request naming
// it in param (the contract's "body the schema refuses", as the tests
// resource answers too; 400 unknown_parameter is for query parameters); an
// oversize body is 413.
func DecodeJSON(c *gin.Context, v any) error {
	b, err := ReadBody(c)
	if err != nil {
		return err
	}
	return DecodeJSONBytes(b, v)
}

// DecodeJSONBytes is DecodeJSON for a body already read. Text no store can
// hold (invalid UTF-8, NUL) is 400 malformed_json and a string over
// experiment.MaxTextChars 422 invalid_request, each naming the field.
func DecodeJSONBytes(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if err := json.Unmarshal(b, new(json.RawMessage)); err != nil {
		return Invalid("malformed_json", "", "The request body is not valid JSON: %s.", strings.TrimPrefix(err.Error(), "json: "))
	}
	if b[0] != '{' {
		// JSON the schema refuses, as a create's body is answered.
		return experiment.Refuse("invalid_request", "", "The request body must be a JSON object.")
	}
	if err := experiment.CheckJSONText(b, experiment.AnyText); err != nil {
		return err
	}
	return experiment.DecodeBody(b, v)
}

// Query allows only the named query parameters on a route: another name is
// 400 unknown_parameter, a name sent twice is 400 invalid_request. Every
// route declares it, so it is also where path parameters and query values
// are checked to be text (valid UTF-8 without NUL) before any reaches a
// store: 400 invalid_request naming the parameter.
func Query(allowed ...string) gin.HandlerFunc {
	ok := make(map[string]bool, len(allowed))
	for _, a := range allowed {
		ok[a] = true
	}
	return func(c *gin.Context) {
		for _, p := range c.Params {
			if err := CheckText(p.Key, p.Value); err != nil {
				WriteError(c, err)
				return
			}
		}
		// url.Query drops a pair it cannot unescape (limit=0%), which
		// would skip every check below: such a query is the caller's error.
		query, err := url.ParseQuery(c.Request.URL.RawQuery)
		if err != nil {
			WriteError(c, Invalid("invalid_request", "", "The query string is not valid: %v.", err))
			return
		}
		for name, vals := range query {
			if !ok[name] {
				WriteError(c, Invalid("unknown_parameter", name, "Unknown query parameter: %s.", name))
				return
			}
			if len(vals) > 1 {
				WriteError(c, Invalid("invalid_request", name, "The query parameter %s was sent more than once.", name))
				return
			}
			if err := CheckText(name, vals[0]); err != nil {
				WriteError(c, err)
				return
			}
		}
		c.Next()
	}
}

// ValidText reports whether s can be stored as text: valid UTF-8 without
// NUL, which Postgres refuses (SQLSTATE 22021) and would turn into a 500.
func ValidText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// CheckText is ValidText as the 400 invalid_request naming param.
func CheckText(param, v string) error {
	if ValidText(v) {
		return nil
	}
	return Invalid("invalid_request", param, "%s must be UTF-8 text without NUL characters.", param)
}

// GroupIndex parses a test group index path parameter: a whole number from
// 0 to experiment.MaxGroupIndex, else 422 invalid_request naming param (as
// the index of a test group that does not exist would be).
func GroupIndex(c *gin.Context, param string) (int, error) {
	raw := c.Param(param)
	n, err := strconv.Atoi(raw)
	// One spelling per group, as TestID keeps one per test: "01", "+1" and
	// " 1" are not group 1 (v1 audit 2 V13).
	if err != nil || n < 0 || n > experiment.MaxGroupIndex || raw != strconv.Itoa(n) {
		return 0, experiment.Refuse("invalid_request", param, "A test group index is a whole number from 0 to %d; got %q.",
			experiment.MaxGroupIndex, raw)
	}
	return n, nil
}

// WriteJSON writes v with status; it is how handlers answer.
func WriteJSON(c *gin.Context, status int, v any) {
	c.JSON(status, v)
}

// Itoa formats a numeric id for the wire.
func Itoa(id int64) string { return strconv.FormatInt(id, 10) }

// testIDPattern is a test id as Lift writes it: no sign, no leading zero,
// within int64. "01" is not test 1: one test, one spelling in logs and keys.
var testIDPattern = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)

// TestID reads the test id in path parameter name. One that cannot name a
// test reads as not found, like a test of another shop; each surface's
// envelope words the experiment_not_found error its own way.
func TestID(c *gin.Context, name string) (int64, error) {
	raw := c.Param(name)
	if !testIDPattern.MatchString(raw) {
		return 0, experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test with id %q.", raw)
	}
	id, _ := strconv.ParseInt(raw, 10, 64)
	return id, nil
}
