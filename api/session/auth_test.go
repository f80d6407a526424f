package session_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/liftab/lift/store"
)

// TestSessionToken refuses every token the platform did not issue for an
// installed shop of this app, on every session endpoint family, with 401
// and the session envelope.
func TestSessionToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop()
	other := e.newShop()
	gone := e.newShop()
	yes := true
	if _, err := e.db.UpdateShop(t.Context(), gone.shop.ID, store.ShopUpdate{Uninstalled: &yes}); err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(edit func(jwt.MapClaims)) string {
		c := claims(s.shop.Domain)
		edit(c)
		return sign(t, c)
	}
	signed := func(m jwt.SigningMethod, key any) string {
		tok, err := jwt.NewWithClaims(m, claims(s.shop.Domain)).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	valid := s.session(t)
	parts := strings.Split(valid, ".")
	cases := []struct {
		name, header string
	}{
		{"missing header", ""},
		{"not bearer", "Basic " + valid},
		{"empty bearer", "Bearer "},
		{"garbage", "Bearer not-a-jwt"},
		{"bad signature", "Bearer " + parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))},
		{"other secret", "Bearer " + signed(jwt.SigningMethodHS256, []byte("another-secret"))},
		{"alg none", "Bearer " + signed(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType)},
		{"HS512", "Bearer " + signed(jwt.SigningMethodHS512, []byte(apiSecret))},
		{"RS256", "Bearer " + signed(jwt.SigningMethodRS256, rsaKey)},
		{"wrong aud", "Bearer " + with(func(c jwt.MapClaims) { c["aud"] = "another-app" })},
		{"no aud", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "aud") })},
		{"expired", "Bearer " + with(func(c jwt.MapClaims) { c["exp"] = epoch.Add(-time.Minute).Unix() })},
		{"no exp", "Bearer " + with(func(c jwt.MapClaims) { delete(c, "exp") })},
		{"nbf in the future", "Bearer " + with(func(c jwt.MapClaims) { c["nbf"] = epoch.Add(time.Minute).Unix() })},
		{"iss/dest mismatch", "Bearer " + with(func(c jwt.MapClaims) { c["dest"] = "https://" + other.shop.Domain })},
		{"iss not admin", "Bearer " + with(func(c jwt.MapClaims) { c["iss"] = "https://" + s.shop.Domain })},
		{"http iss", "Bearer " + with(func(c jwt.MapClaims) {
			c["iss"], c["dest"] = "http://"+s.shop.Domain+"/admin", "http://"+s.shop.Domain
		})},
		{"unknown shop", "Bearer " + sign(t, claims("nobody.myshopify.com"))},
		{"uninstalled shop", "Bearer " + sign(t, claims(gone.shop.Domain))},
	}
	paths := [][2]string{{"GET", "/api/experiments"}, {"GET", "/api/experiments/1"}, {"PUT", "/api/experiments/1"},
		{"POST", "/api/experiments/1/pause"}, {"POST", "/api/experiments/reset-analytics/1"},
		{"PUT", "/api/experiments/remove-products/1"}, {"POST", "/api/price-experiments/v1/create"}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range paths {
				var h []string
				if c.header != "" {
					h = []string{"Authorization", c.header}
				}
				wantError(t, e.send(t, p[0], p[1], `{"name":"x"}`, h...), http.StatusUnauthorized)
			}
		})
	}
	// Leeway: a token a few seconds past exp or before nbf still passes.
	t.Run("leeway", func(t *testing.T) {
		tok := with(func(c jwt.MapClaims) {
			c["exp"], c["nbf"] = epoch.Add(-2*time.Second).Unix(), epoch.Add(2*time.Second).Unix()
		})
		if r := e.send(t, "GET", "/api/experiments", "", "Authorization", "Bearer "+tok); r.Status != 200 {
			t.Fatalf("within leeway = %d %s", r.Status, r.Raw)
		}
	})
	// Nothing was created by any refused request.
	if l := s.list(t); len(l) != 0 {
		t.Fatalf("refused requests created %d tests", len(l))
	}
}
