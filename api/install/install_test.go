package install_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api/install"
	"github.com/liftab/lift/experiment"
)

// stub answers what the case says; the real service runs in
// cmd/lift's TestInstallLifecycle.
type stub struct{ err error }

func (s stub) Begin(_ context.Context, domain string) (string, error) {
	return "https://" + domain + "/oauth/authorize?state=n", s.err
}

func (s stub) Complete(_ context.Context, q url.Values) (*experiment.Shop, error) {
	if s.err != nil {
		return nil, s.err
	}
	return &experiment.Shop{Domain: q.Get("shop")}, nil
}

func TestHandler(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.TestMode)
	for _, tc := range []struct {
		name, path string
		err        error
		status     int
		location   string
	}{
		{"BeginRedirects", "/api/auth?shop=a.myshopify.com", nil, 302, "https://a.myshopify.com/oauth/authorize?state=n"},
		{"BeginNeedsShop", "/api/auth", nil, 400, ""},
		{"BeginRefused", "/api/auth?shop=x", experiment.Errorf(experiment.KindInvalidRequest, "invalid_shop", "bad"), 400, ""},
		{"CallbackRedirects", "/api/auth/callback?shop=a.myshopify.com", nil, 302, "/app/?shop=a.myshopify.com"},
		{"BadHMAC", "/api/auth/callback?shop=a", experiment.Errorf(experiment.KindUnauthenticated, "invalid_hmac", "bad"), 401, ""},
		{"PlatformDown", "/api/auth/callback?shop=a", experiment.Errorf(experiment.KindUnavailable, "platform_unavailable", "retry"), 503, ""},
		{"NotUTF8", "/api/auth/callback?shop=%ff", nil, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gin.New()
			(&install.Handler{Service: stub{tc.err}}).Mount(r)
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if w.Code != tc.status || w.Header().Get("Location") != tc.location {
				t.Fatalf("%d %q %s", w.Code, w.Header().Get("Location"), w.Body)
			}
			if tc.status >= 400 {
				var body map[string]any
				err := json.Unmarshal(w.Body.Bytes(), &body)
				if msg, _ := body["message"].(string); err != nil || body["status"] != "error" || msg == "" || len(body) != 2 {
					t.Fatalf("envelope %s", w.Body)
				}
			}
		})
	}
}
