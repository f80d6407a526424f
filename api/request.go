package api

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

const requestIDKey = "lift.request_id"

// NewID returns a random identifier with a prefix, e.g. "req_3f9a…". It is
// the one generator of opaque ids (request ids, query ids, export ids).
func NewID(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// RequestIDs gives every request an id: the caller's x-correlation-id when it
// sent one, so a 5xx can be traced with the caller's own id, else a new one.
func RequestIDs() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := strings.TrimSpace(c.GetHeader("X-Correlation-Id"))
		if id == "" || len(id) > 200 {
			id = NewID("req_")
		}
		c.Set(requestIDKey, id)
		c.Next()
	}
}

// RequestID is the id RequestIDs gave the request.
func RequestID(c *gin.Context) string {
	if id := c.GetString(requestIDKey); id != "" {
		return id
	}
	id := NewID("req_")
	c.Set(requestIDKey, id)
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

func tooLarge(max int64) *experiment.Error {
	return experiment.Errorf(experiment.KindTooLarge, "request_too_large", "The request body is over the %d MB limit.", max>>20)
}

// ReadBody reads the whole body, translating an oversize body to 413.
func ReadBody(c *gin.Context) ([]byte, error) {
	if b, ok := c.Get(bodyKey); ok {
		return b.([]byte), nil
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

// DecodeJSON decodes the request body into v. A body that is not one JSON
// object is 400 malformed_json; a field v does not have, or a value of the
// wrong kind, is 422 invalid_request naming it in param (the contract's "body
// the schema refuses", as the tests resource answers too; 400
// unknown_parameter is for query parameters); an oversize body is 413.
func DecodeJSON(c *gin.Context, v any) error {
	b, err := ReadBody(c)
	if err != nil {
		return err
	}
	return DecodeJSONBytes(b, v)
}

// DecodeJSONBytes is DecodeJSON for a body already read.
func DecodeJSONBytes(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Invalid("malformed_json", "", "The request body must be a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			field = strings.Trim(field, `"`)
			return experiment.Errorf(experiment.KindValidation, "invalid_request", "Unknown field %q.", field).WithParam(field)
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return experiment.Errorf(experiment.KindValidation, "invalid_request", "%s must be a %s.", typeErr.Field, jsonKind(typeErr.Type.Kind().String())).
				WithParam(typeErr.Field)
		}
		return Invalid("malformed_json", "", "The request body is not valid JSON: %s.", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return Invalid("malformed_json", "", "The request body must hold exactly one JSON object.")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"), strings.HasPrefix(goKind, "float"):
		return "number"
	case goKind == "slice" || goKind == "array":
		return "array"
	case goKind == "map" || goKind == "struct" || goKind == "ptr":
		return "object"
	case goKind == "bool":
		return "boolean"
	}
	return goKind
}

// Query allows only the named query parameters on a route: another name is
// 400 unknown_parameter, a name sent twice is 400 invalid_request.
func Query(allowed ...string) gin.HandlerFunc {
	ok := make(map[string]bool, len(allowed))
	for _, a := range allowed {
		ok[a] = true
	}
	return func(c *gin.Context) {
		for name, vals := range c.Request.URL.Query() {
			if !ok[name] {
				WriteError(c, Invalid("unknown_parameter", name, "Unknown query parameter: %s.", name))
				return
			}
			if len(vals) > 1 {
				WriteError(c, Invalid("invalid_request", name, "The query parameter %s was sent more than once.", name))
				return
			}
		}
		c.Next()
	}
}

// WriteJSON writes v with status; it is how handlers answer.
func WriteJSON(c *gin.Context, status int, v any) {
	c.JSON(status, v)
}

// Itoa formats a numeric id for the wire.
func Itoa(id int64) string { return strconv.FormatInt(id, 10) }
