package api

import (
	"context"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/experiment"
)

const (
	shopKey  = "lift.shop"
	tokenKey = "lift.token"
)

// TokenFinder looks up a bearer token; *store.DB implements it.
type TokenFinder interface {
	FindTokenBySecret(ctx context.Context, secret string) (*experiment.Token, *experiment.Shop, error)
}

// Authenticate is the one auth path of the public API. It answers 401
// missing_token, invalid_token (malformed, unknown, or a shop Lift can no
// longer act for) or token_revoked, and 403 api_access_disabled (each 429
// instead once the address's budget of refusals is spent, when
// LimitUnauthenticated runs before it); otherwise it
// puts the token and its shop on the request, and the audit actor on its
// context.
func Authenticate(tokens TokenFinder) gin.HandlerFunc {
	return func(c *gin.Context) {
		tok, shop, err := authenticate(c, tokens)
		if err != nil {
			refuseAuthentication(c, err) // through the address's budget (ratelimit.go)
			return
		}
		c.Set(tokenKey, tok)
		c.Set(shopKey, shop)
		ctx := experiment.WithActor(c.Request.Context(), experiment.Actor{
			Name: "token", TokenID: tok.ID, RequestID: RequestID(c), Method: c.Request.Method, Path: c.Request.URL.Path,
		})
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

func authenticate(c *gin.Context, tokens TokenFinder) (*experiment.Token, *experiment.Shop, error) {
	h := c.GetHeader("Authorization")
	scheme, secret, _ := strings.Cut(h, " ")
	secret = strings.TrimSpace(secret)
	if h == "" || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return nil, nil, experiment.Errorf(experiment.KindUnauthenticated, "missing_token",
			"Send a bearer token in the Authorization header.")
	}
	invalid := experiment.Errorf(experiment.KindUnauthenticated, "invalid_token", "The bearer token is not valid.")
	if !experiment.WellFormedSecret(secret) {
		return nil, nil, invalid
	}
	tok, shop, err := tokens.FindTokenBySecret(c.Request.Context(), secret)
	if experiment.IsNotFound(err) {
		return nil, nil, invalid
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case !shop.Installed():
		return nil, nil, invalid
	case tok.RevokedAt != nil:
		return nil, nil, experiment.Errorf(experiment.KindUnauthenticated, "token_revoked",
			"This token was revoked; create a new one.")
	case !shop.APIEnabled:
		return nil, nil, experiment.Errorf(experiment.KindForbidden, "api_access_disabled",
			"This shop is not enabled for the API; contact support.")
	}
	return tok, shop, nil
}

// Shop is the authenticated shop of the request.
func Shop(c *gin.Context) *experiment.Shop {
	s, _ := c.Get(shopKey)
	shop, _ := s.(*experiment.Shop)
	return shop
}

// Token is the authenticated token of the request.
func Token(c *gin.Context) *experiment.Token {
	t, _ := c.Get(tokenKey)
	tok, _ := t.(*experiment.Token)
	return tok
}

// RequireScope answers 403 insufficient_scope when the token's scope does not
// allow the request; details name both scopes.
func RequireScope(p Policy) gin.HandlerFunc {
	return func(c *gin.Context) {
		need := p.Scope(c)
		have := Token(c).Scope
		if !have.Allows(need) {
			WriteError(c, experiment.Errorf(experiment.KindForbidden, "insufficient_scope",
				"This request needs a token with the %s scope.", need).
				WithDetails(map[string]any{"token_scope": string(have), "required_scope": string(need)}))
			return
		}
		c.Next()
	}
}
