package ingest

import (
	"strings"
	"testing"
)

// TestIsBot: the one-pass marker scan says what a Contains per marker on the
// lower-cased agent says.
func TestIsBot(t *testing.T) {
	t.Parallel()
	naive := func(ua string) bool {
		ua = strings.ReplaceAll(strings.ToLower(ua), "cubot", "cu")
		for _, m := range botMarkers {
			if strings.Contains(ua, m) {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		ua   string
		want bool
	}{
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36", false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", true},
		{"Mozilla/5.0 HeadlessChrome/120.0", true},
		{"facebookexternalhit/1.1", true},
		{"FACEBOOKEXTERNALHIT", true},
		{"Python-Requests/2.31", true},
		{"Wget", true},
		{"wge", false},
		{"", false},
		{"b", false},
		{"crawlbo", true},
		{"sPiDeR", true},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148", false},
		{"pre view playwrigh puppetee", false},
		// A phone maker's name holds "bot" (storefront audit 2, S4).
		{"Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 Chrome/120.0.0.0 Mobile Safari/537.36", false},
		{"Mozilla/5.0 (Linux; Android 10; CUBOT X30) Googlebot/2.1", true},
		{"bot", true},
		{"cubot", false},
	} {
		if got := (Meta{UserAgent: tc.ua}).IsBot(); got != tc.want || got != naive(tc.ua) {
			t.Errorf("IsBot(%q) = %v, want %v (naive %v)", tc.ua, got, tc.want, naive(tc.ua))
		}
	}
}
