package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
)

// TestTrustProxies: forwarded headers from an untrusted peer change
// nothing; from a trusted proxy they are believed.
func TestTrustProxies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, trusted, peer           string
		wantIP, wantHost, wantCountry string
	}{
		{"NoneTrustedByDefault", "", "203.0.113.9:4000", "203.0.113.9", "", ""},
		{"PeerOutsideTheList", "10.0.0.0/8", "203.0.113.9:4000", "203.0.113.9", "", ""},
		{"TrustedProxy", "10.0.0.0/8", "10.1.2.3:4000", "198.51.100.7", "shop.example", "JP"},
		{"TrustedSingleAddress", "10.1.2.3", "10.1.2.3:4000", "198.51.100.7", "shop.example", "JP"},
		{"TrustedIPv6", "::1", "[::1]:4000", "198.51.100.7", "shop.example", "JP"},
	}
	gin.SetMode(gin.TestMode)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gin.New()
			var trusted []string
			if tc.trusted != "" {
				trusted = []string{tc.trusted}
			}
			if err := api.TrustProxies(e, trusted); err != nil {
				t.Fatal(err)
			}
			e.GET("/who", func(c *gin.Context) {
				c.JSON(200, gin.H{"ip": c.ClientIP(), "host": c.GetHeader("X-Forwarded-Host"), "country": c.GetHeader("CF-IPCountry")})
			})
			req := httptest.NewRequest("GET", "/who", nil)
			req.RemoteAddr = tc.peer
			req.Header.Set("X-Forwarded-For", "198.51.100.7")
			req.Header.Set("X-Forwarded-Host", "shop.example")
			req.Header.Set("CF-IPCountry", "JP")
			w := httptest.NewRecorder()
			e.ServeHTTP(w, req)
			var got map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			if got["ip"] != tc.wantIP || got["host"] != tc.wantHost || got["country"] != tc.wantCountry {
				t.Fatalf("got %v, want ip %s host %q country %q", got, tc.wantIP, tc.wantHost, tc.wantCountry)
			}
		})
	}
}

func TestTrustProxiesRefusesGarbage(t *testing.T) {
	t.Parallel()
	if err := api.TrustProxies(gin.New(), []string{"proxy.internal"}); err == nil {
		t.Fatal("want an error for a host name")
	}
}
