package ingest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Meta is what the HTTP adapter knows about a request beyond its body.
type Meta struct {
	ReceivedAt time.Time // stamped by the adapter from the ingester's clock
	UserAgent  string
}

// botMarkers are substrings (lower case) of the user agents of crawlers,
// previewers and headless browsers. Their traffic is stored with is_bot = 1
// and left out of results; it is never refused.
var botMarkers = []string{
	"bot", "crawl", "spider", "slurp", "headless", "lighthouse", "facebookexternalhit",
	"preview", "phantomjs", "puppeteer", "playwright", "python-requests", "scrapy", "wget",
}

// IsBot reports whether the user agent looks automated.
func (m Meta) IsBot() bool {
	for _, marker := range botMarkers {
		if containsFold(m.UserAgent, marker) {
			return true
		}
	}
	return false
}

// containsFold is strings.Contains ignoring ASCII case, without allocating
// (the marker is lower case already).
func containsFold(s, lowerSub string) bool {
	n := len(lowerSub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerSub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// NewID returns a random (version 4) UUID string. Rows get their id on
// receipt, before the WAL, so every replay carries the same id.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// AssignmentID is the id of a visitor's assignment to a test: the same for
// every assignment call of that visitor and test, since only the first stands
// (a name-based, version 5 style UUID of a SHA-256).
func AssignmentID(shopID int64, experimentID, visitorID string) string {
	h := sha256.New()
	h.Write(strconv.AppendInt(nil, shopID, 10))
	h.Write([]byte{0})
	h.Write([]byte(experimentID))
	h.Write([]byte{0})
	h.Write([]byte(visitorID))
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func asType[T error](err error, target *T) bool { return errors.As(err, target) }
