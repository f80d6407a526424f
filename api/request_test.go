package api

import (
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
