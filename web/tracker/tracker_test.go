package tracker_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/web/tracker"
)

// maxGzipBytes is the budget a storefront pays for the tracker (issue 16).
const maxGzipBytes = 15 << 10

func TestScriptSize(t *testing.T) {
	t.Parallel()
	a := tracker.Script()
	if len(a.Gzip) >= maxGzipBytes {
		t.Errorf("lift.js is %d bytes gzipped, budget %d", len(a.Gzip), maxGzipBytes)
	}
	t.Logf("lift.js: %d bytes raw, %d gzipped", len(a.Raw), len(a.Gzip))
}

// The served script is lift.js with nav.js and content.js in their
// places, inside the closure: one request for the whole tracker.
func TestBundle(t *testing.T) {
	t.Parallel()
	raw := string(tracker.Script().Raw)
	start, end := strings.Index(raw, "(function (w, d) {"), strings.LastIndex(raw, "})(window, document);")
	for _, fn := range []string{"function navigate(", "function paintImages(", "function paintPrices(", "function show(", "function paintDOM(", "function hides("} {
		if at := strings.Index(raw, fn); at < start || at > end || start < 0 {
			t.Errorf("%s is not inside the served script's closure (at %d, the closure is %d-%d)", fn, at, start, end)
		}
	}
	if strings.Contains(raw, "// include ") || strings.Contains(raw, "tracker.go puts it here") {
		t.Errorf("an include line is left in the served script")
	}
	// Whole-line comments are not served; the /*! header is. Dropping
	// them is safe only while no source holds a template literal, whose
	// lines may start with //.
	for _, line := range strings.Split(raw, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "//") {
			t.Fatalf("a comment line is served: %q", line)
		}
	}
	if !strings.HasPrefix(raw, "/*! Lift storefront tracker.") {
		t.Errorf("the served script lost its header: %.40q", raw)
	}
	for _, f := range []string{"lift.js", "nav.js", "content.js"} {
		src, err := os.ReadFile(f)
		if err != nil || strings.Contains(string(src), "`") {
			t.Errorf("%s holds a template literal (%v): the served script keeps its lines whole", f, err)
		}
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	a := tracker.Script()
	for _, c := range []struct {
		name, method, encoding, ifNoneMatch string
		status                              int
		etag                                string
		gzipped                             bool
	}{
		{"identity", "GET", "", "", 200, a.ETag, false},
		{"gzip", "GET", "br, gzip", "", 200, a.GzipETag, true},
		{"gzip refused", "GET", "gzip;q=0", "", 200, a.ETag, false},
		{"revalidate identity", "GET", "", a.ETag, 304, a.ETag, false},
		{"revalidate gzip", "GET", "gzip", a.GzipETag, 304, a.GzipETag, false},
		{"other encoding's tag", "GET", "gzip", a.ETag, 200, a.GzipETag, true},
		{"stale tag", "GET", "", `"old"`, 200, a.ETag, false},
		{"head", "HEAD", "", "", 200, a.ETag, false},
		{"post", "POST", "", "", 405, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, tracker.Path, nil)
			if c.encoding != "" {
				req.Header.Set("Accept-Encoding", c.encoding)
			}
			if c.ifNoneMatch != "" {
				req.Header.Set("If-None-Match", c.ifNoneMatch)
			}
			w := httptest.NewRecorder()
			tracker.Handler().ServeHTTP(w, req)
			if w.Code != c.status || w.Header().Get("ETag") != c.etag {
				t.Fatalf("%d etag %s, want %d %s", w.Code, w.Header().Get("ETag"), c.status, c.etag)
			}
			if c.status == 304 {
				if w.Body.Len() != 0 {
					t.Errorf("%d with a body", c.status)
				}
				return
			}
			if c.status != 200 {
				return
			}
			h := w.Header()
			if h.Get("Cache-Control") != tracker.CacheControl || h.Get("Content-Type") != "text/javascript; charset=utf-8" ||
				h.Get("Vary") != "Accept-Encoding" {
				t.Errorf("headers = %v", h)
			}
			if c.method == "HEAD" {
				return
			}
			body := w.Body.Bytes()
			if c.gzipped != (h.Get("Content-Encoding") == "gzip") {
				t.Fatalf("Content-Encoding = %q", h.Get("Content-Encoding"))
			}
			if c.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(body, a.Raw) || !bytes.Contains(body, []byte("window")) {
				t.Errorf("body is not the script (%d bytes)", len(body))
			}
		})
	}
}

// The snippet and lift.js agree on the class that hides, the attribute that
// carries the deadline, and the elements hidden are those lift.js changes.
func TestAntiFlicker(t *testing.T) {
	t.Parallel()
	snippet := tracker.AntiFlicker(1500 * time.Millisecond)
	script := string(tracker.Script().Raw)
	for _, c := range []struct{ in, want string }{
		{snippet, "(document.documentElement,1500)</script>"},
		{snippet, "c.add('lift-hide')"},
		{snippet, "h.setAttribute('data-lift-timeout',t)"},
		{snippet, "localStorage.getItem('_lift_nav')"},
		{snippet, "c.add('lift-hide-page')"},
		{snippet, "html.lift-hide-page{opacity:0!important}"},
		{script, "html.classList.remove('lift-hide'); html.classList.remove('lift-hide-page')"},
		{snippet, "c.remove('lift-hide');c.remove('lift-hide-page')"}, // one class a call: old browsers take the first only
		{script, "set(ls, '_lift_nav',"},
		{snippet, "localStorage.getItem('_lift_css')"},
		{snippet, "e.id='lift-css-early'"},
		{script, "set(ls, '_lift_css',"},
		{script, "d.getElementById('lift-css-early')"},
		{script, "html.getAttribute('data-lift-timeout')"},
		// Marked product images hide until painted, as prices do.
		{snippet, "html.lift-hide img[data-lift-product-image]{visibility:hidden!important}"},
		{script, "el.setAttribute('data-lift-image-applied', m.t)"},
		// The elements of the visitor's DOM changes hide while the snippet
		// hides, by rules kept in the early CSS it adds (docs/dom-changes.md).
		{script, "r = 'html.lift-hide ' + "},
		{script, "'{visibility:hidden!important}'"},
		{script, "css: css.concat(hidden).join("},
	} {
		if !strings.Contains(c.in, c.want) {
			t.Errorf("%q not in %s", c.want, c.in)
		}
	}
	for _, attr := range []string{"data-lift-price", "data-lift-compare-at-price", "data-lift-test"} {
		if !strings.Contains(snippet, "html.lift-hide ["+attr+"]") || !strings.Contains(script, "'["+attr) {
			t.Errorf("%s: hidden by the snippet and changed by lift.js? snippet %s", attr, snippet)
		}
	}
}

// The README shows the snippet a shop pastes: it must be the one rendered.
func TestReadmeShowsTheSnippet(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if snippet := tracker.AntiFlicker(2 * time.Second); !strings.Contains(string(readme), snippet) {
		t.Fatalf("README.md does not show the snippet AntiFlicker(2s) renders:\n%s", snippet)
	}
}
