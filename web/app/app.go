// Package app serves the merchant's results app at /app/: a page, its
// script and style, and the chart library (uPlot) that `make app-assets`
// copies into vendor/. Everything is embedded, so the binary serves the app
// with no npm and no files beside it.
//
// The app talks to the public API (/v1) of the same origin with a read
// token the merchant pastes; this package only serves files and holds no
// state and no secret.
package app

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is where the router mounts the app.
const Prefix = "/app/"

//go:embed index.html app.js test.js app.css favicon.svg vendor/uPlot.iife.min.js vendor/uPlot.min.css vendor/MANIFEST
var files embed.FS

// assetNames are the files the page loads, by their path under Prefix.
var assetNames = []string{"app.js", "test.js", "app.css", "favicon.svg", "vendor/uPlot.iife.min.js", "vendor/uPlot.min.css"}

// CSP is the page's Content-Security-Policy: everything from this origin
// only, no inline script or style, no plugins, no framing, and DOM sinks
// behind Trusted Types (the app builds its DOM with textContent, never
// innerHTML). Styles set through element.style (uPlot sizes its canvas
// that way) are CSSOM and allowed by style-src 'self'.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'"

// file is one served file with its validator.
type file struct {
	body []byte
	etag string // quoted, from the content's sha256
	hash string // the first hex digits of the sha256: the ?v= of its URL
}

func newFile(body []byte) file {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	return file{body: body, etag: `"` + h[:32] + `"`, hash: h[:16]}
}

// Handler serves the app. Build it once with New.
type Handler struct {
	index  file
	assets map[string]file
}

// New reads the embedded files and renders the page with versioned asset
// URLs (app.js?v=<hash>), so a new build is fetched at once while an
// unchanged asset is cached for a year.
func New() (*Handler, error) {
	h := &Handler{assets: map[string]file{}}
	for _, name := range assetNames {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("app.New: %w", err)
		}
		h.assets[name] = newFile(b)
	}
	page, err := template.New("index.html").Funcs(template.FuncMap{
		"asset": func(name string) (string, error) {
			f, ok := h.assets[name]
			if !ok {
				return "", fmt.Errorf("no asset %q", name)
			}
			return Prefix + name + "?v=" + f.hash, nil
		},
	}).ParseFS(files, "index.html")
	if err != nil {
		return nil, fmt.Errorf("app.New: %w", err)
	}
	var b bytes.Buffer
	if err := page.Execute(&b, nil); err != nil {
		return nil, fmt.Errorf("app.New: %w", err)
	}
	h.index = newFile(b.Bytes())
	return h, nil
}

// ServeHTTP answers GET and HEAD under Prefix: the page at Prefix (the app
// routes by URL fragment, so no other path is a page), the assets by name,
// 404 for anything else. Every answer carries an ETag and honours
// If-None-Match with 304.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	if name == "" || name == "index.html" {
		// The page is small and names the current assets: revalidate it
		// every time (a 304 when unchanged).
		hdr.Set("Content-Security-Policy", CSP)
		hdr.Set("Referrer-Policy", "no-referrer")
		hdr.Set("X-Frame-Options", "DENY")
		serve(w, r, "index.html", h.index, "no-cache")
		return
	}
	f, ok := h.assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	// Only a URL naming this very content may be kept without asking again;
	// an old or missing ?v= revalidates.
	cache := "no-cache"
	if r.URL.Query().Get("v") == f.hash {
		cache = "public, max-age=31536000, immutable"
	}
	serve(w, r, path.Base(name), f, cache)
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

func serve(w http.ResponseWriter, r *http.Request, name string, f file, cache string) {
	w.Header().Set("Cache-Control", cache)
	w.Header().Set("ETag", f.etag)
	// Set here rather than guessed from the system's MIME table, which
	// varies by machine.
	w.Header().Set("Content-Type", contentTypes[path.Ext(name)])
	// ServeContent answers If-None-Match from the ETag set above.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
}
