package experiment

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

var groupName = regexp.MustCompile(`^test_groups\[\d+\]\.name$`)

// Text limits of a test's writable strings, in characters (Unicode code
// points). api/v1/openapi.json documents them. A value over its limit is 422
// invalid_request naming the field; the body limit (10 MB) alone would let
// one test hold megabytes that every read and list then carries.
const (
	MaxNameChars       = 255     // name, test_groups[].name
	MaxHypothesisChars = 5000    // hypothesis
	MaxCodeChars       = 100_000 // custom_css, custom_js and a DOM change's value of a visual edit
	MaxTextChars       = 2048    // any other string: ids, paths, titles, amounts
	MaxKeyChars        = 255     // an object key anywhere in a body
	MaxGroupIndex      = 999     // test_groups[].index is 0 to this
)

// TextLimit gives the most characters the string at a JSON path may hold.
type TextLimit func(path string) int

// AnyText is the limit of bodies without field-specific limits.
func AnyText(string) int { return MaxTextChars }

// testTextLimit is the limit of each string of a test's create or PATCH body.
func testTextLimit(path string) int {
	switch {
	case path == "name" || groupName.MatchString(path):
		return MaxNameChars
	case path == "hypothesis":
		return MaxHypothesisChars
	case strings.HasSuffix(path, ".custom_css") || strings.HasSuffix(path, ".custom_js"),
		strings.Contains(path, ".dom_changes[") && strings.HasSuffix(path, ".value"):
		return MaxCodeChars
	}
	return MaxTextChars
}

// CheckJSONText refuses text that no store can hold, naming the field in
// param: invalid UTF-8 or an unpaired surrogate escape is 400 malformed_json
// (a JSON text is UTF-8), a NUL character is 400 malformed_json (Postgres text
// and jsonb cannot hold it), a string over its limit is 422 invalid_request.
// Go's decoder would silently replace invalid UTF-8 and let NUL through, so
// this runs on the raw body before it is decoded. body must be valid JSON
// (json.Valid); anything else is left to the decoder.
func CheckJSONText(body []byte, limit TextLimit) error {
	s := textScanner{b: body, limit: limit}
	defer func() {
		// An input json.Valid refused may run past its end; the decoder
		// answers it.
		_ = recover()
	}()
	return s.value("")
}

type textScanner struct {
	b     []byte
	i     int
	depth int
	limit TextLimit
}

// maxJSONDepth bounds how deep a request body nests. No Lift body goes
// past a handful of levels; the scanner builds each level's path, so ten
// thousand levels (Go's own limit) cost it 0.65 s of CPU (the fuzz audit).
const maxJSONDepth = 100

func (s *textScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *textScanner) value(path string) error {
	s.ws()
	if s.i >= len(s.b) {
		return nil
	}
	switch s.b[s.i] {
	case '{', '[':
		if s.depth++; s.depth > maxJSONDepth {
			return Errorf(KindInvalidRequest, "malformed_json", "The request body nests deeper than %d levels.", maxJSONDepth)
		}
		defer func() { s.depth-- }()
		if s.b[s.i] == '{' {
			return s.object(path)
		}
		return s.array(path)
	case '"':
		_, err := s.str(path, s.limit(path), false)
		return err
	}
	for s.i < len(s.b) && !strings.ContainsRune(",]} \t\n\r", rune(s.b[s.i])) {
		s.i++
	}
	return nil
}

func (s *textScanner) object(path string) error {
	s.i++ // {
	for {
		s.ws()
		if s.b[s.i] == '}' {
			s.i++
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
			s.ws()
		}
		key, err := s.str(path, MaxKeyChars, true)
		if err != nil {
			return err
		}
		s.ws()
		s.i++ // :
		if err := s.value(joinParam(path, key)); err != nil {
			return err
		}
	}
}

func (s *textScanner) array(path string) error {
	s.i++ // [
	for n := 0; ; n++ {
		s.ws()
		if s.b[s.i] == ']' {
			s.i++
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
		}
		if err := s.value(fmt.Sprintf("%s[%d]", path, n)); err != nil {
			return err
		}
	}
}

// str reads the string at s.i, counting its characters against max. A key
// is decoded and returned (the path of what follows); a value is only
// checked.
func (s *textScanner) str(path string, max int, isKey bool) (string, error) {
	s.i++ // opening quote
	var key strings.Builder
	param := func() string {
		if isKey {
			return joinParam(path, key.String())
		}
		return path
	}
	for chars := 0; ; chars++ {
		c := s.b[s.i]
		var r rune
		switch {
		case c == '"':
			s.i++
			return key.String(), nil
		case c == '\\':
			var ok bool
			if r, ok = s.escape(); !ok {
				return "", notUTF8(param())
			}
		case c < utf8.RuneSelf:
			r = rune(c)
			s.i++
		default:
			var size int
			r, size = utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				return "", notUTF8(param())
			}
			s.i += size
		}
		if r == 0 {
			return "", Errorf(KindInvalidRequest, "malformed_json",
				"%s contains a NUL character (\\u0000), which no text field accepts.", orBody(param())).WithParam(param())
		}
		if chars >= max {
			if isKey {
				return "", Refuse("invalid_request", path, "A field name is at most %d characters.", max)
			}
			return "", Refuse("invalid_request", path, "%s is at most %d characters.", orBody(path), max)
		}
		if isKey {
			key.WriteRune(r)
		}
	}
}

// escape reads one escape sequence; ok is false for an unpaired surrogate.
func (s *textScanner) escape() (r rune, ok bool) {
	s.i++ // backslash
	c := s.b[s.i]
	s.i++
	switch c {
	case 'u':
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	default: // " \ /
		return rune(c), true
	}
	r = s.hex4()
	switch {
	case utf16.IsSurrogate(r) && r >= 0xDC00:
		return 0, false
	case utf16.IsSurrogate(r):
		if s.i+6 > len(s.b) || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' {
			return 0, false
		}
		s.i += 2
		pair := utf16.DecodeRune(r, s.hex4())
		return pair, pair != utf8.RuneError
	}
	return r, true
}

func (s *textScanner) hex4() rune {
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	s.i += 4
	return r
}

func notUTF8(param string) *Error {
	return Errorf(KindInvalidRequest, "malformed_json", "%s is not valid UTF-8 text.", orBody(param)).WithParam(param)
}

func orBody(param string) string {
	if param == "" {
		return "The request body"
	}
	return param
}
