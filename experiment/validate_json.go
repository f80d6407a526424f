// Locating a decoding failure by its JSON path. encoding/json names a
// mistyped field by its struct path without array indexes
// ("test_groups.split"), an unknown field by its bare key ("colour"), and a
// bad timestamp by Go's time layout with no field at all; v1's param must be
// the JSON path and its message must not speak Go. So when a strict decode
// fails, the raw value is walked again along the destination's type to find
// the first offending value in document order.

package experiment

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// fieldError is a decoding failure located at a JSON path (relative to the
// decoded value).
type fieldError struct {
	param   string
	unknown bool   // the field does not exist
	what    string // else what the value must be, after the field's name
}

func (e *fieldError) Error() string { return e.message(e.param) }

// message names the field by name, which may be a longer path than param
// when the value decoded sits inside a larger body.
func (e *fieldError) message(name string) string {
	switch {
	case e.unknown:
		return fmt.Sprintf("Unknown field %q.", name)
	case name == "":
		name = "The value"
	}
	return name + " " + e.what
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType            = reflect.TypeFor[time.Time]()
)

// locate finds the first value of raw that cannot decode into t, or nil.
func locate(raw json.RawMessage, t reflect.Type, path string) *fieldError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil // null decodes into anything, as encoding/json does
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType) {
		return leaf(raw, t, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		return locateObject(raw, t, path, func(key string) (reflect.Type, bool) { return fieldByJSONName(t, key) })
	case reflect.Map:
		return locateObject(raw, t, path, func(string) (reflect.Type, bool) { return t.Elem(), true })
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return leaf(raw, t, path) // []byte is base64 text
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return mistyped(raw, t, path)
		}
		for i, e := range elems {
			if fe := locate(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); fe != nil {
				return fe
			}
		}
		return nil
	case reflect.Interface:
		return nil
	}
	return leaf(raw, t, path)
}

// locateObject walks an object's members in document order; field gives the
// type a key decodes into, or false for a key the type does not have.
func locateObject(raw json.RawMessage, t reflect.Type, path string, field func(string) (reflect.Type, bool)) *fieldError {
	if raw[0] != '{' {
		return mistyped(raw, t, path)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil
		}
		p := joinParam(path, key)
		ft, ok := field(key)
		if !ok {
			return &fieldError{param: p, unknown: true}
		}
		if fe := locate(val, ft, p); fe != nil {
			return fe
		}
	}
	return nil
}

// fieldByJSONName is the type of t's field that key decodes into, matched as
// encoding/json matches: the exact name first, then case-insensitively.
func fieldByJSONName(t reflect.Type, key string) (reflect.Type, bool) {
	var fold reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if ft, ok := fieldByJSONName(f.Type, key); ok {
				return ft, true // an embedded struct's fields are the outer one's
			}
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f.Type, true
		}
		if fold == nil && strings.EqualFold(name, key) {
			fold = f.Type
		}
	}
	return fold, fold != nil
}

// leaf decodes one scalar (or self-decoding) value on its own.
func leaf(raw json.RawMessage, t reflect.Type, path string) *fieldError {
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err == nil {
		return nil
	}
	return mistyped(raw, t, path)
}

// mistyped says what path must be, in the API's words.
func mistyped(raw json.RawMessage, t reflect.Type, path string) *fieldError {
	var want string
	switch {
	case t == timeType:
		want = `a date-time string in RFC 3339 form, such as "2026-07-01T09:00:00Z"`
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		want = "a whole number"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			// A number JSON allows but a float64 cannot hold (1e400).
			return &fieldError{param: path, what: fmt.Sprintf("must be a number a computer can hold; %s is out of range.", raw)}
		}
		want = "a number"
	case t.Kind() == reflect.String:
		want = "a string"
	case t.Kind() == reflect.Bool:
		want = "true or false"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		want = "an object"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		want = "an array"
	default:
		want = "a valid value"
	}
	return &fieldError{param: path, what: fmt.Sprintf("must be %s, not %s.", want, describeJSON(raw))}
}

// describeJSON names a value's JSON kind, with short scalars quoted.
func describeJSON(raw json.RawMessage) string {
	kind := map[byte]string{'{': "an object", '[': "an array", '"': "a string", 't': "a boolean", 'f': "a boolean"}[raw[0]]
	if kind == "" {
		kind = "a number"
	}
	if raw[0] != '{' && raw[0] != '[' && len(raw) <= 40 {
		return kind + " " + string(raw)
	}
	return kind
}
