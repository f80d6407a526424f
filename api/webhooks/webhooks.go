// Package webhooks is the inbound platform webhook surface, POST
// /api/webhooks (session document parts 4.6 and 6.2). It verifies each
// delivery's signature and hands it to experiment.WebhookService, which
// records it once per delivery id and queues its processing. Headers,
// signature and answers: docs/webhooks-exports.md.
package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
)

// Headers of a delivery. The contract leaves them unshown; these are Lift's.
const (
	HeaderSignature = "X-Platform-Hmac-Sha256" // base64 HMAC-SHA256 of the raw body
	HeaderTopic     = "X-Platform-Topic"
	HeaderShop      = "X-Platform-Shop-Domain"
	HeaderID        = "X-Platform-Webhook-Id"
)

// Receiver takes a verified delivery; *experiment.WebhookService is one.
type Receiver interface {
	Receive(ctx context.Context, r experiment.WebhookReceipt) error
}

// Handler serves POST /api/webhooks and the carrier service's callback
// (rates.go): both are the platform calling Lift, signed the same way.
type Handler struct {
	Service      Receiver
	Secret       []byte // platform.webhook_secret; empty refuses every delivery
	MaxBodyBytes int64  // default 10 MB
	// Rates and Shops answer the carrier service's rate requests; nil
	// Rates serves no callback.
	Rates RateQuoter
	Shops ShopFinder
}

// Mount adds POST /api/webhooks (and RatesPath when Rates is set) to r,
// answering errors in the session surface's envelope.
func (h *Handler) Mount(r gin.IRouter) {
	r.POST("/api/webhooks", api.UseSurface(api.SurfaceSession), handle(h.receive))
	if h.Rates != nil {
		r.POST(RatesPath, api.UseSurface(api.SurfaceSession), handle(h.rates))
	}
}

// SetDeliveryHeaders sets the headers the platform sends with a delivery
// of topic for shop: topic, shop, delivery id and the signature of body
// under secret. The demo store and the load generator post their orders
// through it, so they sign exactly as Lift checks.
func SetDeliveryHeaders(h http.Header, secret []byte, topic, shop, deliveryID string, body []byte) {
	h.Set(HeaderTopic, topic)
	h.Set(HeaderShop, shop)
	h.Set(HeaderID, deliveryID)
	h.Set(HeaderSignature, Sign(secret, body))
}

// Sign is the signature of body under secret, as the platform sends it.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// signedBody reads the platform's call (413 over the limit) and checks its
// signature (401 "The <what> signature does not match."): every call the
// platform makes is signed the same way.
func (h *Handler) signedBody(c *gin.Context, what string) ([]byte, error) {
	body, err := h.readBody(c)
	if err != nil {
		return nil, err
	}
	if !h.verify(c.GetHeader(HeaderSignature), body) {
		return nil, experiment.Errorf(experiment.KindUnauthenticated, "invalid_signature", "The %s signature does not match.", what)
	}
	return body, nil
}

// receive answers 413 for a body over the limit, 401 for a bad signature,
// 400 when a header is missing or the body cannot be stored or read, 503
// when the delivery could not be queued, and 200 with an empty body once
// it is recorded and queued (or was already, or names an unknown shop).
func (h *Handler) receive(c *gin.Context) error {
	body, err := h.signedBody(c, "webhook")
	if err != nil {
		return err
	}
	id := strings.TrimSpace(c.GetHeader(HeaderID))
	// Headers are stored as text: bytes Postgres refuses would fail the
	// record (a 500) instead of being the sender's error.
	if !api.ValidText(c.GetHeader(HeaderTopic) + c.GetHeader(HeaderShop) + id) {
		return experiment.Errorf(experiment.KindInvalidRequest, "invalid_request",
			"The %s, %s and %s headers must be UTF-8 text.", HeaderTopic, HeaderShop, HeaderID)
	}
	ctx := experiment.WithActor(c.Request.Context(), experiment.Actor{Name: "webhook", RequestID: id, Method: c.Request.Method, Path: c.Request.URL.Path})
	err = h.Service.Receive(ctx, experiment.WebhookReceipt{Topic: c.GetHeader(HeaderTopic), ShopDomain: c.GetHeader(HeaderShop),
		DeliveryID: id, Body: body})
	if err != nil {
		return err
	}
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
	return nil
}

// readBody reads at most the limit; more is KindTooLarge.
func (h *Handler) readBody(c *gin.Context) ([]byte, error) {
	max := h.MaxBodyBytes
	if max <= 0 {
		max = 10 << 20
	}
	tooLarge := experiment.Errorf(experiment.KindTooLarge, "request_too_large", "The request body is over the %d MB limit.", max>>20)
	if c.Request.ContentLength > max {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(c.Request.Body, max+1))
	if err != nil {
		return nil, experiment.Errorf(experiment.KindInvalidRequest, "invalid_request", "The request body could not be read.")
	}
	if int64(len(b)) > max {
		return nil, tooLarge
	}
	return b, nil
}

func (h *Handler) verify(sig string, body []byte) bool {
	if len(h.Secret) == 0 || sig == "" {
		return false
	}
	got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, h.Secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// handle is api.Handle, except that an oversize body answers 413 in the
// session envelope: the platform should learn the delivery will never fit,
// where the session surface's writer knows only 400 for it.
func handle(fn api.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		err := fn(c)
		if e, ok := experiment.AsError(err); ok && e.Kind == experiment.KindTooLarge {
			c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, gin.H{"status": "error", "message": e.Message})
			return
		}
		if err != nil {
			api.WriteError(c, err)
		}
	}
}
