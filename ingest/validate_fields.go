// The checks of single fields the tracking validators share: each refuses
// with the field's name as param.

package ingest

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/liftab/lift/experiment"
)

// invalid is the refusal of one field: 400 on the session surface, with a
// message that names the field.
func invalid(param, format string, args ...any) *experiment.Error {
	e := experiment.Errorf(experiment.KindInvalidRequest, "invalid_parameter", param+" "+format, args...)
	return e.WithParam(param)
}

func missing(param string) *experiment.Error {
	return experiment.Errorf(experiment.KindInvalidRequest, "missing_parameter", "%s is required", param).WithParam(param)
}

// parseTime reads createdAt: an ISO 8601 string or Unix milliseconds. Times
// before 2015 or more than a day ahead of now are refused (a seconds value
// sent as milliseconds lands in 1970 and is caught here).
func parseTime(param string, raw json.RawMessage, now time.Time) (time.Time, *experiment.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, missing(param)
	}
	var t time.Time
	if raw[0] == '"' {
		var s string
		if len(raw) >= 2 && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
			// raw is a JSON string (the body decoded): without escapes its
			// content is its bytes, and encoding/json is not needed.
			s = string(raw[1 : len(raw)-1])
		} else if err := json.Unmarshal(raw, &s); err != nil {
			return t, invalid(param, "must be an ISO 8601 time or Unix milliseconds")
		}
		var ok bool
		if t, ok = parseISO(s); !ok {
			return t, invalid(param, "must be an ISO 8601 time or Unix milliseconds")
		}
	} else {
		ms, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || ms != math.Trunc(ms) {
			return t, invalid(param, "must be an ISO 8601 time or Unix milliseconds")
		}
		t = time.UnixMilli(int64(ms))
	}
	if t.Year() < 2015 || t.After(now.Add(24*time.Hour)) {
		return t, invalid(param, "is out of range (Unix milliseconds, not seconds)")
	}
	return t.UTC(), nil
}

// isoLayouts are the ISO 8601 forms a storefront may send, the common one
// first: RFC 3339, ±hhmm offsets, minute precision, the basic format, a
// date alone (midnight UTC); no zone means UTC.
var isoLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00", "2006-01-02T15:04Z0700", "2006-01-02T15:04",
	"20060102T150405.999999999Z0700", "20060102T150405.999999999", "20060102T1504Z0700", "2006-01-02", "20060102"}

func parseISO(s string) (time.Time, bool) {
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	// ISO 8601 allows lower-case designators ("t", "z"); layouts match
	// them in upper case only.
	if u := strings.ToUpper(s); u != s {
		return parseISO(u)
	}
	return time.Time{}, false
}

// checkUUID normalizes a UUID string to lower case or refuses it.
func checkUUID(param, s string) (string, *experiment.Error) {
	if s == "" {
		return "", missing(param)
	}
	if len(s) != 36 {
		return "", invalid(param, "must be a UUID")
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", invalid(param, "must be a UUID")
			}
		default:
			if !isHex(c) {
				return "", invalid(param, "must be a UUID")
			}
		}
	}
	return strings.ToLower(s), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// checkText refuses over-long strings and control characters.
func checkText(param, s string, maxChars int) *experiment.Error {
	if len(s) > maxChars && utf8.RuneCountInString(s) > maxChars {
		return invalid(param, "must be at most %d characters", maxChars)
	}
	if !utf8.ValidString(s) {
		return invalid(param, "must be valid UTF-8")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return invalid(param, "must not contain control characters")
		}
	}
	return nil
}

func requiredText(param, s string, maxChars int) *experiment.Error {
	if s == "" {
		return missing(param)
	}
	return checkText(param, s, maxChars)
}

// checkExperimentID accepts the ids both surfaces use: numeric ids and
// opaque ids of letters, digits, '-' and '_'.
func checkExperimentID(param, s string) *experiment.Error {
	if s == "" {
		return missing(param)
	}
	if len(s) > 64 {
		return invalid(param, "must be at most 64 characters")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return invalid(param, "must contain only letters, digits, '-' and '_'")
		}
	}
	return nil
}

// testID checks a test id (checkExperimentID) and returns it canonical
// (canonicalTestID), as every record that names a test stores it.
func testID(param, s string) (string, *experiment.Error) {
	if err := checkExperimentID(param, s); err != nil {
		return "", err
	}
	return canonicalTestID(s), nil
}

// canonicalTestID writes a numeric id as the test's id is written: "0261"
// was stored as sent and never matched test 261, while ga4/metadata read
// it as 261 (storefront audit 2, S6). Other ids are kept as they are.
func canonicalTestID(s string) string {
	if len(s) < 2 || s[0] != '0' {
		return s // every id the tracker sends
	}
	digits := strings.TrimLeft(s, "0")
	if digits == "" || strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return s
	}
	return digits
}

// productID strips a platform global id prefix (gid://shopify/Product/123 →
// 123): tests name products by their numeric id.
func productID(s string) string {
	if strings.HasPrefix(s, "gid://") {
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			return s[i+1:]
		}
	}
	return s
}

func checkNumericID(param, s string) (string, *experiment.Error) {
	s = productID(strings.TrimSpace(s))
	if s == "" {
		return "", missing(param)
	}
	if len(s) > 32 {
		return "", invalid(param, "must be a numeric id")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", invalid(param, "must be a numeric id")
		}
	}
	return s, nil
}

// checkTestGroup: 0 control, 1 and up variants, -1 excluded.
func checkTestGroup(param string, g *float64) (int16, *experiment.Error) {
	if g == nil {
		return 0, missing(param)
	}
	if *g != math.Trunc(*g) || *g < -1 || *g > 100 {
		return 0, invalid(param, "must be an integer: -1 excluded, 0 control, 1 and up variants")
	}
	return int16(*g), nil
}

// checkCountry normalizes a two-letter code to upper case ("" stays "").
func checkCountry(param, s string) (string, *experiment.Error) {
	if s == "" {
		return "", nil
	}
	if len(s) != 2 || !isLetter(s[0]) || !isLetter(s[1]) {
		return "", invalid(param, "must be a two-letter country code")
	}
	return strings.ToUpper(s), nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func checkEnum(param, s string, allowed map[string]bool) *experiment.Error {
	if s != "" && !allowed[s] {
		return invalid(param, "has an unknown value %q", s)
	}
	return nil
}

// checkEventType accepts the documented types, other platform event names
// (snake_case, as the web pixel forwards them) and custom events, whose name
// it returns.
func checkEventType(t string) (custom string, err *experiment.Error) {
	if t == "" {
		return "", missing("eventType")
	}
	for _, prefix := range []string{CustomEventPrefix, docCustomEventPrefix} {
		if name, ok := strings.CutPrefix(t, prefix); ok {
			return name, checkCustomName(name)
		}
	}
	if len(t) > 64 {
		return "", invalid("eventType", "must be at most 64 characters")
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') || i == 0 && !(c >= 'a' && c <= 'z') {
			return "", invalid("eventType", "must be a snake_case event name or %s<name>", CustomEventPrefix)
		}
	}
	return "", nil
}

// checkCustomName: at most 77 characters of letters, digits, '_' and '-',
// structured with ':', '/' and '.' separators (no empty part between them).
func checkCustomName(name string) *experiment.Error {
	const param = "eventType"
	if name == "" {
		return invalid(param, "custom event needs a name")
	}
	if len(name) > MaxCustomNameChars {
		return invalid(param, "custom event name must be at most %d characters", MaxCustomNameChars)
	}
	prevSep := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == ':' || c == '/' || c == '.':
			if prevSep {
				return invalid(param, "custom event name has an empty part around %q", c)
			}
			prevSep = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-':
			prevSep = false
		default:
			return invalid(param, "custom event name may use letters, digits, '_', '-' and the separators ':', '/', '.'")
		}
	}
	if prevSep {
		return invalid(param, "custom event name must not end with a separator")
	}
	return nil
}
