package app

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestVendorIsWhatTheLockfilePins: the chart library the binary embeds is
// the version package.json pins exactly and package-lock.json locks, as
// `make app-assets` copied it: the MANIFEST names that version and each
// file's sha256, and the library's own banner carries the version.
func TestVendorIsWhatTheLockfilePins(t *testing.T) {
	t.Parallel()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, "package.json", &pkg)
	pinned := pkg.Dependencies["uplot"]
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(pinned) {
		t.Fatalf("package.json pins uplot %q; want an exact version (no range), so every build embeds the same file", pinned)
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	readJSON(t, "package-lock.json", &lock)
	locked := lock.Packages["node_modules/uplot"]
	if locked.Version != pinned || !strings.HasPrefix(locked.Integrity, "sha512-") {
		t.Fatalf("package-lock.json locks uplot %q (integrity %q); package.json pins %q", locked.Version, locked.Integrity, pinned)
	}

	manifest, err := files.ReadFile("vendor/MANIFEST")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(manifest))
	sc.Scan()
	if got := sc.Text(); got != "uplot "+pinned {
		t.Fatalf("vendor/MANIFEST says %q, package.json pins %q: run make app-assets", got, pinned)
	}
	sums := map[string]string{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			t.Fatalf("MANIFEST line %q: want `<sha256>  <file>`", sc.Text())
		}
		sums[f[1]] = f[0]
	}
	for _, name := range []string{"uPlot.iife.min.js", "uPlot.min.css"} {
		b, err := files.ReadFile("vendor/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != sums[name] {
			t.Errorf("embedded vendor/%s has sha256 %s, MANIFEST %q: the file changed after make app-assets", name, got, sums[name])
		}
	}
	js, _ := files.ReadFile("vendor/uPlot.iife.min.js")
	banner, _, _ := bytes.Cut(js, []byte("\n"))
	if want := "(v" + pinned + ")"; !bytes.Contains(banner, []byte(want)) {
		t.Errorf("uPlot's banner %q does not name %s", banner, want)
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func get(t *testing.T, h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestServe: the page with its CSP, revalidated every time; assets cached
// for a year only under the URL of their content; ETags answer 304.
func TestServe(t *testing.T) {
	t.Parallel()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	page := get(t, h, "GET", "/app/")
	js := h.assets["app.js"]
	for _, tc := range []struct {
		name, method, target string
		header               []string
		status               int
		want                 map[string]string // response headers
	}{
		{"Page", "GET", "/app/", nil, 200, map[string]string{"Content-Type": "text/html; charset=utf-8",
			"Cache-Control": "no-cache", "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}},
		{"PageHead", "HEAD", "/app/", nil, 200, map[string]string{"ETag": page.Header().Get("ETag")}},
		{"PageNotModified", "GET", "/app/", []string{"If-None-Match", page.Header().Get("ETag")}, 304, nil},
		{"NoSlash", "GET", "/app", nil, 301, map[string]string{"Location": "/app/"}},
		{"VersionedAsset", "GET", "/app/app.js?v=" + js.hash, nil, 200, map[string]string{"Content-Type": "text/javascript; charset=utf-8",
			"Cache-Control": "public, max-age=31536000, immutable", "ETag": js.etag}},
		{"OldVersionRevalidates", "GET", "/app/app.js?v=0123456789abcdef", nil, 200, map[string]string{"Cache-Control": "no-cache"}},
		{"AssetNotModified", "GET", "/app/app.js", []string{"If-None-Match", js.etag}, 304, map[string]string{"ETag": js.etag}},
		{"Library", "GET", "/app/vendor/uPlot.iife.min.js", nil, 200, map[string]string{"Content-Type": "text/javascript; charset=utf-8"}},
		{"Style", "GET", "/app/vendor/uPlot.min.css", nil, 200, map[string]string{"Content-Type": "text/css; charset=utf-8"}},
		{"ManifestIsNotServed", "GET", "/app/vendor/MANIFEST", nil, 404, nil},
		{"Unknown", "GET", "/app/nope.js", nil, 404, nil},
		{"Post", "POST", "/app/", nil, 405, map[string]string{"Allow": "GET, HEAD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, tc.method, tc.target, tc.header...)
			if w.Code != tc.status {
				t.Fatalf("%s %s = %d, want %d", tc.method, tc.target, w.Code, tc.status)
			}
			for k, v := range tc.want {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestPageNamesItsAssets: every script and style the page loads is served,
// under the versioned URL that lets it be cached, and nothing is inline
// (the CSP would refuse it).
func TestPageNamesItsAssets(t *testing.T) {
	t.Parallel()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	body := get(t, h, "GET", "/app/").Body.String()
	refs := regexp.MustCompile(`(?:src|href)="(/app/[^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(refs) != len(assetNames) {
		t.Fatalf("the page loads %d files, want the %d assets: %v", len(refs), len(assetNames), refs)
	}
	for _, m := range refs {
		w := get(t, h, "GET", m[1])
		if w.Code != 200 || w.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s = %d, Cache-Control %q", m[1], w.Code, w.Header().Get("Cache-Control"))
		}
	}
	if strings.Contains(body, "<style") || regexp.MustCompile(`<script>|style="|\son[a-z]+=`).MatchString(body) {
		t.Error("the page has inline script or style, which its CSP refuses")
	}
}
