package session

import (
	"crypto/subtle"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// leeway absorbs clock skew between the platform and this server.
const leeway = 5 * time.Second

// claims are the platform session token's claims (part 5).
type claims struct {
	Dest string `json:"dest"`
	Sid  string `json:"sid"`
	jwt.RegisteredClaims
}

// authenticate is the one auth path of the session surface: a bearer
// session token, verified, naming an installed shop. It puts the shop on
// the request and the audit actor on its context; anything else is 401.
func (a *API) authenticate() gin.HandlerFunc {
	return func(c *gin.Context) {
		shop, err := a.verify(c)
		if err != nil {
			api.WriteError(c, err)
			return
		}
		c.Set(shopKey, shop)
		api.NoteShop(c, shop) // the access log's shop, as on v1
		ctx := experiment.WithActor(c.Request.Context(), experiment.Actor{
			Name: "session", RequestID: api.RequestID(c), Method: c.Request.Method, Path: c.Request.URL.Path,
		})
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

func unauthenticated(msg string) error {
	return experiment.Errorf(experiment.KindUnauthenticated, "invalid_session", "%s", msg)
}

// verify checks the token's signature (HS256 only, with the app's secret),
// audience (the app's key), times (exp required; nbf, iat with leeway),
// that iss and dest name the same shop, and that the shop is installed.
func (a *API) verify(c *gin.Context) (*experiment.Shop, error) {
	scheme, raw, _ := strings.Cut(c.GetHeader("Authorization"), " ")
	raw = strings.TrimSpace(raw)
	if !strings.EqualFold(scheme, "Bearer") || raw == "" {
		return nil, unauthenticated("Send the session token in the Authorization header as Bearer <session token>.")
	}
	if a.APISecret == "" {
		return nil, unauthenticated("Session tokens are not accepted: no platform API secret is configured.")
	}
	var cl claims
	_, err := jwt.ParseWithClaims(raw, &cl, func(*jwt.Token) (any, error) { return []byte(a.APISecret), nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithAudience(a.APIKey),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(leeway), jwt.WithTimeFunc(a.Now))
	if err != nil || a.APIKey == "" {
		return nil, unauthenticated("The session token is not valid.")
	}
	domain, ok := sameShop(cl.Issuer, cl.Dest)
	if !ok {
		return nil, unauthenticated("The session token's iss and dest do not name the same shop.")
	}
	shop, err := a.Shops.FindShopByDomain(c.Request.Context(), domain)
	if experiment.IsNotFound(err) || err == nil && !shop.Installed() {
		return nil, unauthenticated("The shop of this session token has not installed the app.")
	}
	if err != nil {
		return nil, err
	}
	return shop, nil
}

// sameShop reports the shop domain when iss is https://{shop}/admin and
// dest is https://{shop}.
func sameShop(iss, dest string) (string, bool) {
	i, err1 := url.Parse(iss)
	d, err2 := url.Parse(dest)
	if err1 != nil || err2 != nil || i.Scheme != "https" || d.Scheme != "https" || i.Host == "" ||
		i.Path != "/admin" || strings.Trim(d.Path, "/") != "" || i.User != nil || d.User != nil {
		return "", false
	}
	if !strings.EqualFold(i.Host, d.Host) {
		return "", false
	}
	return strings.ToLower(i.Host), true
}

// requireAdminKey guards the admin tools: 404 when no key is configured
// (the tools are off), 401 when the x-api-key header does not match.
func (a *API) requireAdminKey() gin.HandlerFunc {
	return func(c *gin.Context) {
		if a.AdminKey == "" {
			api.WriteError(c, experiment.Errorf(experiment.KindNotFound, "not_found", "not found"))
			return
		}
		got := c.GetHeader("x-api-key")
		if subtle.ConstantTimeCompare([]byte(got), []byte(a.AdminKey)) != 1 {
			api.WriteError(c, unauthenticated("Send the internal key in the x-api-key header."))
			return
		}
		c.Next()
	}
}
