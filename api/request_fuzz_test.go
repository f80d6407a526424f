package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

// textOnlyClaims is an in-memory IdempotencyStore that, like Postgres, fails
// on a key it cannot hold as text: a key reaching it that way is a 503.
type textOnlyClaims struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (s *textOnlyClaims) ClaimIdempotencyKey(_ context.Context, _ int64, key string, _ []byte, _, _ time.Duration) (experiment.ClaimResult, error) {
	if !ValidText(key) {
		return experiment.ClaimResult{}, errors.New("invalid byte sequence for encoding UTF8 (SQLSTATE 22021)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys[key] {
		return experiment.ClaimResult{Outcome: experiment.Mismatch}, nil
	}
	s.keys[key] = true
	return experiment.ClaimResult{}, nil
}

func (s *textOnlyClaims) CompleteIdempotencyKey(context.Context, experiment.IdempotencyClaim, int, []byte) error {
	return nil
}

func (s *textOnlyClaims) ReleaseIdempotencyKey(context.Context, experiment.IdempotencyClaim) error {
	return nil
}

// edgeServer is the v1 edge as api builds it: surface, body limit, query
// allowlist, Idempotency-Key, then a handler decoding a JSON body. written
// counts the requests the handler accepted.
func edgeServer(written *int) http.Handler {
	r := gin.New()
	g := r.Group("/v1", UseSurface(SurfaceV1), LimitBody(4<<10), func(c *gin.Context) {
		c.Set(shopKey, &experiment.Shop{ID: 1})
	})
	g.POST("/things/:id", Query("limit"), Idempotent(&textOnlyClaims{keys: map[string]bool{}}, IdempotencyConfig{}),
		Handle(func(c *gin.Context) error {
			var v struct {
				Name string   `json:"name"`
				N    int      `json:"n"`
				Tags []string `json:"tags"`
			}
			if err := DecodeJSON(c, &v); err != nil {
				return err
			}
			*written++
			WriteJSON(c, http.StatusCreated, v)
			return nil
		}))
	return r
}

// FuzzEdge sends arbitrary ids, queries, media types, keys and bodies
// through the v1 edge: no 5xx, and a refusal is the error envelope with
// nothing written.
func FuzzEdge(f *testing.F) {
	f.Add("1", "limit=1", "application/json", "", []byte(`{"name":"x","n":1}`))
	f.Add("1\x00", "", "application/json", "", []byte(`{}`))
	f.Add("\xff", "limit=%FF", "", "", []byte(`{}`))
	f.Add("1", "limit=%00&x=1", "", "", []byte(`{}`))
	f.Add("1", "", "text/plain", "", []byte(`{"name":"x"}`))
	f.Add("1", "", "application/merge-patch+json; charset=utf-8", "k\xff", []byte(`{"name":"x"}`))
	f.Add("1", "", "application/json", "k", []byte(`{"name":"a\u0000"}`))
	f.Add("1", "", "application/json", "", []byte("{\"tags\":[\"\xff\"]}"))
	f.Add("1", "", "application/json", "", []byte(`{"name":"`+strings.Repeat("x", 5000)+`"}`))
	f.Add("1", "", ";;", "", []byte(`{"n":1099511627776000000000}`))
	f.Fuzz(func(t *testing.T, id, rawQuery, contentType, key string, body []byte) {
		written := 0
		srv := edgeServer(&written)
		req := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/v1/things/" + id, RawQuery: rawQuery},
			Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		req = req.WithContext(context.Background())
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if key != "" {
			req.Header["Idempotency-Key"] = []string{key}
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		if w.Code == http.StatusCreated {
			return
		}
		if written != 0 {
			t.Fatalf("refused with %d after the handler wrote", w.Code)
		}
		if id == "" || strings.Contains(id, "/") {
			return // no such route: gin's own 404 or redirect
		}
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Error.Code == "" {
			t.Fatalf("%d without the error envelope: %s", w.Code, w.Body)
		}
	})
}
