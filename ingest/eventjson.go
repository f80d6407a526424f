package ingest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The track-event body is most of the storefront's traffic, and decoding it
// with encoding/json (reflection, then a second pass over the payload) was
// the largest cost of the handler in lift bench ingest --cpuprofile. The
// scanner below reads the common shape of the body by hand: every known key
// spelled exactly and given once, strings without escapes, numbers JSON
// allows. Anything else (escapes, keys in another case, repeated keys, a
// wrong type, malformed JSON) makes it give up, and json.Unmarshal decides
// on a fresh value: so the result, and every refusal with its message, is
// what json.Unmarshal gives. FuzzEventJSONParity checks that.

// DecodeEventRequest fills req from a track-event body, exactly as
// json.Unmarshal(body, req) does on a zero req, and returns its error.
func DecodeEventRequest(body []byte, req *EventRequest) error {
	*req = EventRequest{}
	s := jsonScan{b: body}
	if s.eventRequest(req) {
		return nil
	}
	*req = EventRequest{}
	return json.Unmarshal(body, req)
}

// decodePayload is json.Unmarshal(raw, p) on a zero p, scanned by hand when
// it can be.
func decodePayload(raw []byte, p *eventPayload) error {
	*p = eventPayload{}
	s := jsonScan{b: raw}
	if s.payload(p) {
		return nil
	}
	*p = eventPayload{}
	return json.Unmarshal(raw, p)
}

// The keys of the two objects, as their json tags spell them.
var (
	eventKeys   = []string{"eventId", "sessionId", "visitorId", "eventType", "source", "createdAt", "experimentIds", "pagePath", "payload"}
	payloadKeys = []string{"pageType", "productIds", "variantIds", "quantity", "checkoutToken", "orderId", "name"}
)

// eventRequest reads the whole body into req; false means json.Unmarshal
// must decide.
func (s *jsonScan) eventRequest(req *EventRequest) bool {
	return s.object(eventKeys, func(field int) bool {
		switch field {
		case 0:
			return s.stringOrNull(&req.EventID)
		case 1:
			return s.stringOrNull(&req.SessionID)
		case 2:
			return s.stringOrNull(&req.VisitorID)
		case 3:
			return s.stringOrNull(&req.EventType)
		case 4:
			return s.stringOrNull(&req.Source)
		case 5:
			return s.raw((*[]byte)(&req.CreatedAt))
		case 6:
			return s.stringList(&req.ExperimentIDs)
		case 7:
			if s.literal("null") {
				return true
			}
			var p string
			req.PagePath = &p
			return s.stringOrNull(&p)
		default:
			return s.raw((*[]byte)(&req.Payload))
		}
	}) && s.end()
}

// payload reads a track-event payload object into p.
func (s *jsonScan) payload(p *eventPayload) bool {
	return s.object(payloadKeys, func(field int) bool {
		switch field {
		case 0:
			return s.stringOrNull(&p.PageType)
		case 1:
			return s.flexList(&p.ProductIDs)
		case 2:
			return s.flexList(&p.VariantIDs)
		case 3:
			if s.literal("null") {
				return true
			}
			num, ok := s.number()
			if !ok {
				return false
			}
			q, err := strconv.ParseFloat(string(num), 64)
			p.Quantity = &q
			return err == nil // out of range: encoding/json's type error
		case 4:
			return s.stringOrNull(&p.CheckoutToken)
		case 5:
			return s.flex(&p.OrderID)
		default:
			return s.stringOrNull(&p.Name)
		}
	}) && s.end()
}

// jsonScan is a position in a JSON text. Its methods return false when the
// text is not in the shape they read; the caller then leaves it to
// encoding/json.
type jsonScan struct {
	b []byte
	i int
}

// maxSkipDepth bounds the nesting of values passed over; deeper ones go to
// encoding/json (whose own limit is 10 000).
const maxSkipDepth = 64

// peek skips white space and returns the next byte (0 at the end).
func (s *jsonScan) peek() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// end: nothing but white space follows.
func (s *jsonScan) end() bool {
	s.peek()
	return s.i == len(s.b)
}

func (s *jsonScan) literal(lit string) bool {
	s.peek()
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// object reads an object whose known keys are keys: field(i) reads the value
// of keys[i], other keys' values are checked and passed over. A key given
// twice, or matching a known key only ignoring case (encoding/json would
// fill that field), ends the fast path.
func (s *jsonScan) object(keys []string, field func(int) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	seen := uint64(0)
	for {
		key, ok := s.plainString()
		if !ok || s.peek() != ':' {
			return false
		}
		s.i++
		k := keyIndex(keys, key)
		switch {
		case k == -2:
			return false
		case k == -1:
			if !s.skip(0) {
				return false
			}
		case seen&(1<<k) != 0:
			return false
		default:
			seen |= 1 << k
			if !field(k) {
				return false
			}
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// keyIndex is the index of key in keys, -1 for a key encoding/json ignores,
// -2 for one it would match ignoring case.
func keyIndex(keys []string, key []byte) int {
	for i, k := range keys {
		if string(key) == k {
			return i
		}
	}
	for _, k := range keys {
		if bytes.EqualFold(key, []byte(k)) {
			return -2
		}
	}
	return -1
}

// plainString reads a string without escapes or control characters whose
// bytes are valid UTF-8: its content is then its bytes.
func (s *jsonScan) plainString() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[start:j]
			if !ascii && !utf8.Valid(v) {
				return nil, false // encoding/json replaces the bad bytes
			}
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// stringOrNull reads a string into dst; null leaves dst as it is, as
// encoding/json does.
func (s *jsonScan) stringOrNull(dst *string) bool {
	if s.literal("null") {
		return true
	}
	v, ok := s.plainString()
	if ok {
		*dst = internString(v)
	}
	return ok
}

// internString returns the constant for the event types and sources most
// events carry, so they cost no allocation; others are copied.
func internString(b []byte) string {
	switch string(b) {
	case "page_viewed":
		return "page_viewed"
	case "product_viewed":
		return "product_viewed"
	case "product_added_to_cart":
		return "product_added_to_cart"
	case "checkout_started":
		return "checkout_started"
	case "checkout_completed":
		return "checkout_completed"
	case "webpixel":
		return "webpixel"
	case "script":
		return "script"
	}
	return string(b)
}

// stringList reads null (dst stays nil) or an array of strings (an empty
// array is an empty, non-nil slice, as encoding/json makes it).
func (s *jsonScan) stringList(dst *[]string) bool {
	if s.literal("null") {
		return true
	}
	return s.array(func() bool {
		v, ok := s.plainString()
		if ok {
			*dst = append(*dst, string(v))
		}
		return ok
	}, func() { *dst = []string{} })
}

// flexList is stringList for FlexString elements (string, number or null).
func (s *jsonScan) flexList(dst *[]FlexString) bool {
	if s.literal("null") {
		return true
	}
	return s.array(func() bool {
		var v FlexString
		ok := s.flex(&v)
		*dst = append(*dst, v)
		return ok
	}, func() { *dst = []FlexString{} })
}

// array reads '[' elem (',' elem)* ']' or '[]' (then empty is called).
func (s *jsonScan) array(elem func() bool, empty func()) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		empty()
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// flex reads what FlexString.UnmarshalJSON accepts: a string, a whole
// number (kept as written) or null ("").
func (s *jsonScan) flex(dst *FlexString) bool {
	switch c := s.peek(); {
	case c == 'n':
		*dst = ""
		return s.literal("null")
	case c == '"':
		v, ok := s.plainString()
		*dst = FlexString(v)
		return ok
	default:
		num, ok := s.number()
		if !ok {
			return false
		}
		if _, err := strconv.ParseUint(string(num), 10, 64); err != nil {
			return false
		}
		*dst = FlexString(num)
		return true
	}
}

// raw copies one value's text (as json.RawMessage keeps it) into dst.
func (s *jsonScan) raw(dst *[]byte) bool {
	s.peek()
	start := s.i
	if !s.skip(0) {
		return false
	}
	*dst = bytes.Clone(s.b[start:s.i])
	return true
}

// number reads a number as JSON spells it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) number() ([]byte, bool) {
	s.peek()
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return nil, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return nil, false
		}
		i = j
	}
	v := b[s.i:i]
	s.i = i
	return v, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// skip passes over one value, checking it at least as strictly as
// encoding/json's scanner does.
func (s *jsonScan) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch c := s.peek(); {
	case c == '"':
		return s.skipString()
	case c == '{':
		return s.skipObject(depth)
	case c == '[':
		return s.array(func() bool { return s.skip(depth + 1) }, func() {})
	case c == '-' || '0' <= c && c <= '9':
		_, ok := s.number()
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

// skipObject passes over an object with any keys.
func (s *jsonScan) skipObject(depth int) bool {
	s.i++ // the '{' skip saw
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' || !s.skipString() || s.peek() != ':' {
			return false
		}
		s.i++
		if !s.skip(depth + 1) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// skipString passes over a string: escapes must be JSON's, control
// characters are refused, other bytes pass (encoding/json replaces invalid
// UTF-8 rather than refusing it).
func (s *jsonScan) skipString() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(s.b) {
				return false
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) || !isHex(s.b[j+1]) || !isHex(s.b[j+2]) || !isHex(s.b[j+3]) || !isHex(s.b[j+4]) {
					return false
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}
