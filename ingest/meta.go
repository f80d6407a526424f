package ingest

import (
	"crypto/sha256"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/liftab/lift/experiment"
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

// botMarkersByFirst lists the markers by their first byte, so IsBot reads
// the user agent once instead of once per marker (it runs on every event).
var botMarkersByFirst = func() (idx [256][]string) {
	for _, m := range botMarkers {
		idx[m[0]] = append(idx[m[0]], m)
	}
	return idx
}()

// IsBot reports whether the user agent looks automated: whether it
// contains a marker, ignoring ASCII case, other than inside a phone's name
// (notBots).
func (m Meta) IsBot() bool {
	s := m.UserAgent
	for i := 0; i < len(s); i++ {
		for _, marker := range botMarkersByFirst[lowerASCII(s[i])] {
			if hasPrefixFold(s[i:], marker) && !partOfNotBot(s, i) {
				return true
			}
		}
	}
	return false
}

// notBots are words of real shoppers' user agents that hold a marker: the
// phone maker CUBOT puts its name in every model's agent, and its buyers
// and their orders were left out of results as bots (storefront audit 2,
// S4). Each is written with the marker at its end.
var notBots = []string{"cubot"}

// partOfNotBot says the marker found at s[i:] ends one of notBots.
func partOfNotBot(s string, i int) bool {
	for _, w := range notBots {
		if start := i - (len(w) - len("bot")); start >= 0 && hasPrefixFold(s[start:], w) {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case, without
// allocating (the marker is lower case already).
func hasPrefixFold(s, lowerPrefix string) bool {
	if len(s) < len(lowerPrefix) {
		return false
	}
	for j := 0; j < len(lowerPrefix); j++ {
		if lowerASCII(s[j]) != lowerPrefix[j] {
			return false
		}
	}
	return true
}

// newRowID is a row's random id. Rows get their id on receipt, before the
// WAL, so every replay carries the same id.
func newRowID() string { return experiment.NewID("") }

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
	return uuid.UUID(b).String()
}

func asType[T error](err error, target *T) bool { return errors.As(err, target) }
