// Package install is the install surface (issue 13, docs/install.md): GET
// /api/auth?shop= starts the platform's OAuth install, GET
// /api/auth/callback completes it. Both answer errors in the session
// envelope ({"status":"error","message":…}) and success with a 302.
package install

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// Installer is the install lifecycle; *experiment.InstallService is one.
type Installer interface {
	Begin(ctx context.Context, domain string) (string, error)
	Complete(ctx context.Context, q url.Values) (*experiment.Shop, error)
}

// Handler serves the install routes.
type Handler struct {
	Service Installer
	// AppURL is where an installed merchant is sent: the app inside the
	// platform's admin, or Lift's panel. Nil sends them to /app/?shop=.
	AppURL func(shop *experiment.Shop) string
}

// Mount adds GET /api/auth and GET /api/auth/callback to r.
func (h *Handler) Mount(r gin.IRouter) {
	g := r.Group("/api/auth", api.UseSurface(api.SurfaceSession))
	g.GET("", api.Handle(h.begin))
	g.GET("/callback", api.Handle(h.callback))
}

// begin answers 302 to the platform's authorize URL, 400 for a missing or
// implausible shop.
func (h *Handler) begin(c *gin.Context) error {
	shop := c.Query("shop")
	if shop == "" || !api.ValidText(shop) {
		return experiment.Errorf(experiment.KindInvalidRequest, "invalid_shop", "The shop parameter is required.")
	}
	u, err := h.Service.Begin(h.ctx(c), shop)
	if err != nil {
		return err
	}
	c.Redirect(http.StatusFound, u)
	return nil
}

// callback answers 302 to the app once the shop is installed; 401 for a
// bad HMAC or an unknown, used or expired state; 400 for missing
// parameters; 503 when the platform refused (the merchant may retry).
func (h *Handler) callback(c *gin.Context) error {
	q := c.Request.URL.Query()
	for k, vs := range q {
		for _, v := range vs {
			if !api.ValidText(k + v) {
				return experiment.Errorf(experiment.KindInvalidRequest, "invalid_request", "The query must be UTF-8 text.")
			}
		}
	}
	shop, err := h.Service.Complete(h.ctx(c), q)
	if err != nil {
		return err
	}
	c.Redirect(http.StatusFound, h.appURL(shop))
	return nil
}

func (h *Handler) appURL(shop *experiment.Shop) string {
	if h.AppURL != nil {
		return h.AppURL(shop)
	}
	return "/app/?shop=" + url.QueryEscape(shop.Domain)
}

func (h *Handler) ctx(c *gin.Context) context.Context {
	return experiment.WithActor(c.Request.Context(), experiment.Actor{Name: "install", RequestID: api.RequestID(c),
		Method: c.Request.Method, Path: c.Request.URL.Path})
}
