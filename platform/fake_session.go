package platform

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// SessionToken is a session token for shop domain's admin panel as the
// platform's App Bridge hands one to the embedded app (shopify.idToken()):
// HS256 with the app's secret, audience the app's key, iss
// https://{shop}/admin, dest https://{shop}, valid for one minute from now.
// It lets a developer call the session API of a node running the fake.
func (f *Fake) SessionToken(domain string, now time.Time) (string, error) {
	if f.APIKey == "" || f.APISecret == "" {
		return "", errors.New("platform: the fake has no app credentials to sign a session token with")
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": "https://" + domain + "/admin", "dest": "https://" + domain, "aud": f.APIKey, "sub": "1",
		"exp": now.Add(time.Minute).Unix(), "nbf": now.Unix(), "iat": now.Unix(),
		"jti": uuid.NewString(), "sid": uuid.NewString(),
	}).SignedString([]byte(f.APISecret))
}
