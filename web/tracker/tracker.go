// Package tracker serves /lift.js, the storefront tracker: plain
// JavaScript embedded in the binary (lift.js, nav.js and content.js, as one
// script), sent gzipped when the browser accepts it, cacheable by browsers
// and CDNs and revalidated by a strong ETag (a hash of the bytes), so a new
// release reaches storefronts within minutes.
package tracker

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Path is where storefronts load the tracker from.
const Path = "/lift.js"

// The tracker is one closure written in three files: lift.js; nav.js
// (moving the visitor to other pages); and content.js (what the visitor's
// groups change on the page: prices, images, content blocks, visual edits).
// Each of the other two goes in at its include line of lift.js. Served as
// one script: a storefront makes one request for it.
var (
	//go:embed lift.js
	main []byte
	//go:embed nav.js
	nav []byte
	//go:embed content.js
	content []byte
)

// part is a file of the tracker that goes into lift.js at its include
// line, "  // include <name>: <what it does> (tracker.go puts it here)".
type part struct {
	name string
	body []byte
}

// bundle puts each part into main at its include line. A lift.js without
// exactly one such line for each is a broken build: it panics when the
// package loads, so every test of it fails.
func bundle(main []byte, parts ...part) []byte {
	for _, p := range parts {
		re := regexp.MustCompile(`(?m)^  // include ` + regexp.QuoteMeta(p.name) + `: .*\(tracker\.go puts it here\)\n`)
		lines := re.FindAllIndex(main, -1)
		if len(lines) != 1 {
			panic("tracker: lift.js has " + strconv.Itoa(len(lines)) + " include lines for " + p.name + ", want 1")
		}
		at := lines[0]
		main = slices.Concat(main[:at[0]], p.body, main[at[1]:])
	}
	return main
}

// CacheControl keeps the script five minutes and lets a cache serve it a day
// stale while it revalidates: a page never waits on Lift for it, and a fix
// still lands within minutes.
const CacheControl = "public, max-age=300, stale-while-revalidate=86400"

// Asset is the script in both encodings with their ETags.
type Asset struct {
	Raw, Gzip      []byte
	ETag, GzipETag string
}

// Script returns the embedded tracker.
func Script() *Asset { return asset }

var asset = build(withoutLineComments(bundle(main, part{"nav.js", nav}, part{"content.js", content})))

// withoutLineComments drops the lines that are only a // comment: they say
// why for the next engineer, and every storefront page would download them
// (a third of the gzipped script). Comments after code stay, as does the
// /*! header: telling a comment from a "//" in a string needs a parser,
// and the sources hold no template literals, so a line that starts with //
// is always a comment.
func withoutLineComments(src []byte) []byte {
	var out []byte
	for line := range bytes.Lines(src) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("//")) {
			out = append(out, line...)
		}
	}
	return out
}

func build(raw []byte) *Asset {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(raw)
	zw.Close()
	sum := sha256.Sum256(raw)
	tag := hex.EncodeToString(sum[:16])
	// Each encoding is its own representation, so each has its own strong tag.
	return &Asset{Raw: raw, Gzip: buf.Bytes(), ETag: `"` + tag + `"`, GzipETag: `"` + tag + `-gz"`}
}

// Handler serves the script for GET and HEAD.
func Handler() http.Handler { return asset }

func (a *Asset) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, tag := a.Raw, a.ETag
	h := w.Header()
	h.Set("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, tag = a.Gzip, a.GzipETag
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", CacheControl)
	h.Set("ETag", tag)
	// Any storefront origin may load it (also as a module or with integrity).
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("X-Content-Type-Options", "nosniff")
	// ServeContent answers If-None-Match (304) and Range from the ETag set.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// DefaultTimeout is how long a page waits for its test changes when the
// snippet or the script tag names no deadline (lift.js has the same).
const DefaultTimeout = 2 * time.Second

// AntiFlicker is the snippet a storefront puts at the top of <head>, before
// the tracker's script tag. The tracker loads async, so the page may paint
// before it runs: the snippet hides the elements it changes (prices,
// compare-at prices, test content blocks) until lift.js has applied the
// visitor's groups, and shows them unchanged after timeout at the latest.
// It writes the deadline on <html> (data-lift-timeout), where lift.js reads
// it, so a page past it is left as served and nothing flips later. It hides
// those elements only (visibility, so the layout holds), except on a page
// this visitor's groups send it away from: a URL redirect's source, and the
// pages of a theme test on a session's first page (s 1: no _lift_sid
// cookie yet; the platform keeps the preview theme for the session, so
// later pages stay). lift.js keeps those pages in localStorage (_lift_nav:
// p the path, m 1 for a prefix), and there the snippet hides the whole page
// (opacity) until lift.js has sent the visitor on, so the page left never
// shows. So does a page of a template test's type (m 2: p is the pattern
// of its paths, /products/[^/]+/?$) opened without the group's view (v), as
// from a search result: lift.js moves it to ?view=. A visitor's very first
// page has no such list yet. Visual edits' CSS can restyle anything, so it
// is not hidden but added early: lift.js keeps the CSS of the visitor's
// groups in localStorage (_lift_css, with its time), and the snippet puts
// it in <head> as a style element (#lift-css-early) before the body is
// parsed, for 30 minutes as lift.js trusts its cached config; lift.js
// removes it once it has added the groups' own; the same early CSS hides
// the elements of the groups' DOM changes until they are applied. Product
// images marked for
// image tests (data-lift-product-image) hide as prices do, on a visitor's
// first page too: a variant's visitor never sees the product's own first
// (docs/image-tests.md).
func AntiFlicker(timeout time.Duration) string {
	ms := strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)
	return `<style>html.lift-hide [data-lift-price],html.lift-hide [data-lift-compare-at-price],` +
		`html.lift-hide [data-lift-test],html.lift-hide img[data-lift-product-image]{visibility:hidden!important}html.lift-hide-page{opacity:0!important}</style>` + "\n" +
		`<script>(function(h,t){var c=h.classList,p=location.pathname;c.add('lift-hide');` +
		`try{JSON.parse(localStorage.getItem('_lift_nav')||'[]').forEach(function(r){` +
		`if((r.m==2?new RegExp(r.p).test(p)&&(location.search.match(/[?&]view=([^&#]*)/)||[])[1]!==r.v:r.m?p.indexOf(r.p)===0:p===r.p)` +
		`&&!(r.s&&/(^|; )_lift_sid=/.test(document.cookie)))c.add('lift-hide-page')})}catch(e){}` +
		`try{var s=JSON.parse(localStorage.getItem('_lift_css')||'{}'),e;if(s.css&&Date.now()-s.at<18e5){` +
		`e=document.createElement('style');e.id='lift-css-early';e.textContent=s.css;document.head.appendChild(e)}}catch(e){}` +
		`h.setAttribute('data-lift-timeout',t);` +
		`setTimeout(function(){c.remove('lift-hide');c.remove('lift-hide-page')},t)})(document.documentElement,` + ms + `)</script>`
}

// acceptsGzip reads Accept-Encoding ("gzip", "gzip;q=0" refuses).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
