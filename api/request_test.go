package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestRequestIDsKeepsOnlyText: the caller's correlation id is stored with
// the audit record of a write, so one that is not text would fail the
// write; it is replaced by a fresh id instead.
func TestRequestIDsKeepsOnlyText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, header string
		kept         bool
	}{
		{"Text", "corr-1", true},
		{"InvalidUTF8", "corr-\xff", false},
		{"NUL", "corr-\x00", false},
		{"TooLong", strings.Repeat("c", 201), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gin.New()
			var got string
			r.GET("/", RequestIDs(), func(c *gin.Context) { got = RequestID(c) })
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Header["X-Correlation-Id"] = []string{tc.header}
			r.ServeHTTP(httptest.NewRecorder(), req)
			if kept := got == tc.header; kept != tc.kept || !tc.kept && !strings.HasPrefix(got, "req_") {
				t.Fatalf("request id = %q for header %q", got, tc.header)
			}
		})
	}
}

// TestReadBodyCapsTheRead: a chunked body (no Content-Length) over the
// route's LimitBody, or over DefaultMaxBody on a route without one, is 413
// without reading it all.
func TestReadBodyCapsTheRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		limit   int64 // 0: no LimitBody on the route
		size    int
		want    int
		maxRead int
	}{
		{"UnderLimit", 1 << 10, 1 << 10, http.StatusOK, 1 << 10},
		{"ChunkedOverLimit", 1 << 10, 1 << 20, http.StatusRequestEntityTooLarge, 64 << 10},
		{"NoLimitBodyOverDefault", 0, DefaultMaxBody + 1, http.StatusRequestEntityTooLarge, DefaultMaxBody + 64<<10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gin.New()
			chain := []gin.HandlerFunc{UseSurface(SurfaceV1)}
			if tc.limit > 0 {
				chain = append(chain, LimitBody(tc.limit))
			}
			chain = append(chain, Handle(func(c *gin.Context) error {
				if _, err := ReadBody(c); err != nil {
					return err
				}
				c.Status(http.StatusOK)
				return nil
			}))
			r.POST("/", chain...)
			body := &countingReader{left: tc.size}
			req := httptest.NewRequest(http.MethodPost, "/", body)
			req.ContentLength = -1 // chunked: only the read can tell
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			if w.Code != tc.want || body.read > tc.maxRead {
				t.Fatalf("status %d after reading %d bytes, want %d reading at most %d", w.Code, body.read, tc.want, tc.maxRead)
			}
		})
	}
}

// countingReader yields left bytes of 'x' and counts what was read.
type countingReader struct{ left, read int }

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	r.left -= n
	r.read += n
	return n, nil
}

// A body labelled compressed is refused before it is read as JSON: a plain
// body labelled gzip was applied, a real gzip body answered malformed_json.
func TestReadBodyRefusesContentEncoding(t *testing.T) {
	t.Parallel()
	for enc, want := range map[string]int{"": 200, "identity": 200, "gzip": 400, "br": 400, "GZIP, identity": 400} {
		r := gin.New()
		r.POST("/", UseSurface(SurfaceV1), Handle(func(c *gin.Context) error {
			if _, err := ReadBody(c); err != nil {
				return err
			}
			c.Status(http.StatusOK)
			return nil
		}))
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"name":"x"}`))
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != want || (want == 400 && !strings.Contains(w.Body.String(), `"code":"invalid_request"`)) {
			t.Errorf("Content-Encoding %q: %d %s, want %d", enc, w.Code, w.Body, want)
		}
	}
}
