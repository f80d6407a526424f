// Package webhooks is the inbound platform webhook surface, POST
// /api/webhooks (session document parts 4.6 and 6.2). It verifies each
// delivery's signature, records it once per delivery id, and queues its
// processing on the critical queue; the effect of each topic runs in
// jobs.Webhooks. Headers and signature: docs/webhooks-exports.md.
package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/store"
)

// Headers of a delivery. The contract leaves them unshown; these are Lift's.
const (
	HeaderSignature = "X-Platform-Hmac-Sha256" // base64 HMAC-SHA256 of the raw body
	HeaderTopic     = "X-Platform-Topic"
	HeaderShop      = "X-Platform-Shop-Domain"
	HeaderID        = "X-Platform-Webhook-Id"
)

// Enqueuer queues jobs; *jobs.Client implements it.
type Enqueuer interface {
	Enqueue(ctx context.Context, j jobs.Job) error
}

// Handler serves POST /api/webhooks.
type Handler struct {
	DB           *store.DB
	Jobs         Enqueuer
	Secret       []byte // platform.webhook_secret; empty refuses every delivery
	MaxBodyBytes int64  // default 10 MB
	Logger       *slog.Logger
}

// Mount adds POST /api/webhooks to r, answering errors in the session
// surface's envelope.
func (h *Handler) Mount(r gin.IRouter) {
	max := h.MaxBodyBytes
	if max <= 0 {
		max = 10 << 20
	}
	r.POST("/api/webhooks", api.UseSurface(api.SurfaceSession), api.LimitBody(max), api.Handle(h.receive))
}

// Sign is the signature of body under secret, as the platform sends it.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// receive answers 401 for a bad signature, 400 when a header is missing,
// and 200 with an empty body once the delivery is recorded and queued (or
// was already). A delivery for a shop Lift does not know is acknowledged
// and dropped: there is nothing it could change.
func (h *Handler) receive(c *gin.Context) error {
	body, err := api.ReadBody(c)
	if err != nil {
		return err
	}
	if !h.verify(c.GetHeader(HeaderSignature), body) {
		return experiment.Errorf(experiment.KindUnauthenticated, "invalid_signature", "The webhook signature does not match.")
	}
	topic, domain, id := strings.TrimSpace(c.GetHeader(HeaderTopic)), strings.ToLower(strings.TrimSpace(c.GetHeader(HeaderShop))), strings.TrimSpace(c.GetHeader(HeaderID))
	if topic == "" || domain == "" || id == "" || len(id) > 255 {
		return experiment.Errorf(experiment.KindInvalidRequest, "invalid_request",
			"A delivery needs the %s, %s and %s headers.", HeaderTopic, HeaderShop, HeaderID)
	}
	ctx := experiment.WithActor(c.Request.Context(), experiment.Actor{Name: "webhook", RequestID: id, Method: c.Request.Method, Path: c.Request.URL.Path})
	shop, err := h.DB.FindShopByDomain(ctx, domain)
	if e, ok := experiment.AsError(err); ok && e.Kind == experiment.KindNotFound {
		h.logger().Warn("webhook for an unknown shop", "shop", domain, "topic", topic, "delivery", id)
		return ok200(c)
	}
	if err != nil {
		return err
	}
	d, _, err := h.DB.RecordDelivery(ctx, store.Delivery{ShopID: shop.ID, ID: id, Topic: topic, Body: body})
	if err != nil {
		return err
	}
	if d.ProcessedAt == nil {
		// A redelivery of an unprocessed delivery enqueues again: the job id
		// makes that a no-op when the first is still queued, and recovers a
		// delivery whose enqueue failed after it was recorded.
		if err := h.Jobs.Enqueue(ctx, jobs.WebhookJob(shop.ID, id)); err != nil && !errors.Is(err, jobs.ErrDuplicate) {
			h.logger().Error("webhook enqueue failed", "shop_id", shop.ID, "delivery", id, "err", err)
			return experiment.Errorf(experiment.KindUnavailable, "unavailable", "The delivery could not be queued; retry it.")
		}
	}
	return ok200(c)
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

func ok200(c *gin.Context) error {
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
	return nil
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}
