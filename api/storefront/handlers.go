package storefront

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/ingest"
)

const contentTypeJSON = "application/json; charset=utf-8"

var acceptedBody = []byte(`{"accepted":true}`)

func (h *Handler) meta(c *gin.Context) ingest.Meta {
	return ingest.Meta{ReceivedAt: h.in.Now(), UserAgent: c.Request.UserAgent()}
}

func badRequest(param, format string, args ...any) *experiment.Error {
	return experiment.Errorf(experiment.KindInvalidRequest, "invalid_request", format, args...).WithParam(param)
}

// bodyPool recycles request body buffers; the hot path should not allocate
// one per request.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// decode reads a JSON body sent as application/json or as text/plain (what
// navigator.sendBeacon sends for a string) into v.
func (h *Handler) decode(c *gin.Context, v any) error { return h.decodeWith(c, v, json.Unmarshal) }

// decodeEvent is json.Unmarshal for a track-event body, without reflection
// on the common shape (ingest.DecodeEventRequest gives the same result and
// the same errors).
func decodeEvent(body []byte, v any) error {
	return ingest.DecodeEventRequest(body, v.(*ingest.EventRequest))
}

// decodeWith is decode with the given unmarshal, which must fail as
// json.Unmarshal does.
func (h *Handler) decodeWith(c *gin.Context, v any, unmarshal func([]byte, any) error) error {
	if ct := c.GetHeader("Content-Type"); ct != "" && !commonMediaTypes[ct] {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && mt != "text/plain") {
			return badRequest("Content-Type", "Content-Type must be application/json or text/plain")
		}
	}
	// Bodies are read as sent: a compressed one would be read as JSON
	// whatever its bytes (as ReadBody refuses it on the other surfaces).
	if enc := c.GetHeader("Content-Encoding"); enc != "" && !strings.EqualFold(strings.TrimSpace(enc), "identity") {
		return badRequest("Content-Encoding", "Content-Encoding %q is not accepted: send the body uncompressed", enc)
	}
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	body, err := readLimited((*bp)[:0], c.Request.Body, h.cfg.MaxBodyBytes)
	*bp = body[:0]
	if errors.Is(err, errBodyTooLarge) {
		return badRequest("body", "request body must be at most %d KB", h.cfg.MaxBodyBytes>>10)
	}
	if err != nil {
		return badRequest("body", "request body could not be read")
	}
	if len(body) == 0 {
		return badRequest("body", "request body is required (a JSON object)")
	}
	if err := unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return badRequest(te.Field, "%s has the wrong type", te.Field)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) || te != nil {
			return badRequest("body", "request body must be a JSON object")
		}
		return badRequest("body", "request body has an id field that is neither a string nor a number")
	}
	return nil
}

// commonMediaTypes are the Content-Type values browsers and the tracking
// script send, accepted without parsing (mime.ParseMediaType allocates a map
// per call); any other value is parsed.
var commonMediaTypes = map[string]bool{
	"text/plain;charset=UTF-8": true, "text/plain": true, "text/plain; charset=utf-8": true,
	"application/json": true, "application/json; charset=utf-8": true, "application/json;charset=UTF-8": true,
}

// readLimited appends all of r to buf, refusing more than limit bytes.
func readLimited(buf []byte, r io.Reader, limit int64) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, errBodyTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// accepted answers 202 {"accepted":true}: what c.Data writes, with the
// header values prepared once instead of three allocations per call.
func accepted(c *gin.Context) {
	h := c.Writer.Header()
	if len(h["Content-Type"]) == 0 {
		h["Content-Type"] = acceptedType
	}
	h["Content-Length"] = acceptedLength
	c.Status(http.StatusAccepted)
	if _, err := c.Writer.Write(acceptedBody); err != nil {
		_ = c.Error(err)
		c.Abort()
	}
}

var (
	acceptedType   = []string{contentTypeJSON}
	acceptedLength = []string{strconv.Itoa(len(acceptedBody))}
)

// GET /api/get-session → {"sessionId": "<uuid>"}.
func (h *Handler) getSession(c *gin.Context) error {
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"sessionId": experiment.NewID("")})
	return nil
}

// findShop is the installed shop the request names, also noted for the
// access log.
//
// Here and in every handler, what reaches a store is c.Request.Context(),
// never c: the engine is built without ContextWithFallback, so the
// *gin.Context's Done and Deadline never fire, and passing it dropped the
// request deadline (api.Deadline) and the client's disconnect; the config
// read then hung as long as Postgres did (ops audit O2-1).
func (h *Handler) findShop(c *gin.Context, domain string) (*experiment.Shop, error) {
	shop, err := h.shops.find(c.Request.Context(), "shop", domain)
	if err == nil {
		api.NoteShop(c, shop)
	}
	return shop, err
}

// GET /api/observe?shop&productId&experimentId → 202.
func (h *Handler) observe(c *gin.Context) error {
	shop, err := h.findShop(c, c.Query("shop"))
	if err != nil {
		return h.refuse("page_view", err)
	}
	req := ingest.ObserveRequest{
		ProductID: c.Query("productId"), ExperimentID: c.Query("experimentId"),
		SessionID: c.Query("sessionId"), VisitorID: c.Query("visitorId"),
	}
	if err := h.in.ObserveProduct(c.Request.Context(), shop.ID, &req, h.meta(c)); err != nil {
		return err
	}
	accepted(c)
	return nil
}

// GET /api/observe/session?shop&sessionId&experimentId → 202.
func (h *Handler) observeSession(c *gin.Context) error {
	shop, err := h.findShop(c, c.Query("shop"))
	if err != nil {
		return h.refuse("session", err)
	}
	req := ingest.SessionRequest{
		SessionID: c.Query("sessionId"), ExperimentID: c.Query("experimentId"), VisitorID: c.Query("visitorId"),
		PagePath: c.Query("pagePath"), Referrer: c.Query("referrer"), Device: c.Query("device"),
		Country: c.Query("country"), VisitorType: c.Query("visitorType"), UTMSource: c.Query("utmSource"),
		UTMMedium: c.Query("utmMedium"), UTMCampaign: c.Query("utmCampaign"),
	}
	if err := h.in.ObserveSession(c.Request.Context(), shop.ID, &req, h.meta(c)); err != nil {
		return err
	}
	accepted(c)
	return nil
}

// shopParam reads the shop query parameter without parsing the whole query
// into a map (the POST endpoints need nothing else from it).
func shopParam(c *gin.Context) string {
	raw := c.Request.URL.RawQuery
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if v, ok := strings.CutPrefix(pair, "shop="); ok {
			if strings.ContainsAny(v, "%+") {
				v, _ = url.QueryUnescape(v)
			}
			return v
		}
	}
	return ""
}

// POST /api/track/event?shop → 202 {"accepted":true}.
func (h *Handler) trackEvent(c *gin.Context) error {
	shop, err := h.findShop(c, shopParam(c))
	if err != nil {
		return h.refuse("event", err)
	}
	var req ingest.EventRequest
	if err := h.decodeWith(c, &req, decodeEvent); err != nil {
		return h.refuse("event", err)
	}
	if err := h.in.TrackEvent(c.Request.Context(), shop.ID, &req, h.meta(c)); err != nil {
		return err
	}
	accepted(c)
	return nil
}

type assignmentResponse struct {
	Success      bool   `json:"success"`
	AssignmentID string `json:"assignmentId"`
}

// POST /api/track/assignment?shop → {"success":true,"assignmentId":…}.
func (h *Handler) trackAssignment(c *gin.Context) error {
	shop, err := h.findShop(c, shopParam(c))
	if err != nil {
		return h.refuse("assignment", err)
	}
	var req ingest.AssignmentRequest
	if err := h.decode(c, &req); err != nil {
		return h.refuse("assignment", err)
	}
	id, err := h.in.TrackAssignment(c.Request.Context(), shop.ID, &req, h.meta(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, assignmentResponse{Success: true, AssignmentID: id})
	return nil
}

// refuse counts a refusal made here, before the ingester saw the request,
// and returns it.
func (h *Handler) refuse(kind string, err error) error {
	h.in.Refused(kind, err)
	return err
}

// POST /api/analytics/{add-to-cart,checkout,order}: shop in the body (or the
// query) → 202 {"accepted":true}.
func (h *Handler) legacy(kind ingest.LegacyKind) func(*gin.Context) error {
	return func(c *gin.Context) error {
		var req ingest.LegacyRequest
		if err := h.decode(c, &req); err != nil {
			return h.refuse("legacy", err)
		}
		domain := req.Shop
		if domain == "" {
			domain = c.Query("shop")
		}
		shop, err := h.findShop(c, domain)
		if err != nil {
			return h.refuse("legacy", err)
		}
		if err := h.in.TrackLegacy(c.Request.Context(), kind, shop.ID, shop.Currency, &req, h.meta(c)); err != nil {
			return err
		}
		accepted(c)
		return nil
	}
}

type metadataResponse struct {
	Found                  bool   `json:"found"`
	ExperimentID           string `json:"experimentId,omitempty"`
	ExperimentName         string `json:"experimentName,omitempty"`
	VariantID              *int   `json:"variantId,omitempty"`
	VariantName            string `json:"variantName,omitempty"`
	AnalyticsMeasurementID string `json:"analyticsMeasurementId"`
}

// GET /api/ga4/metadata?experimentId&groupIndex. Found or not, it answers
// 200; a failed lookup is logged and answered as not found, never as a 500.
func (h *Handler) ga4Metadata(c *gin.Context) error {
	experimentID := c.Query("experimentId")
	if experimentID == "" {
		return badRequest("experimentId", "experimentId is required")
	}
	if !api.ValidText(experimentID) {
		return badRequest("experimentId", "experimentId must be UTF-8 text without NUL characters")
	}
	raw, ok := c.GetQuery("groupIndex")
	if !ok || raw == "" {
		return badRequest("groupIndex", "groupIndex is required")
	}
	group, err := strconv.Atoi(raw)
	if err != nil || group < 0 {
		return badRequest("groupIndex", "groupIndex must be a non-negative integer")
	}
	notFound := metadataResponse{Found: false, AnalyticsMeasurementID: ""}
	if h.cfg.Metadata == nil {
		c.JSON(http.StatusOK, notFound)
		return nil
	}
	md, err := h.cfg.Metadata.FindAnalyticsMetadata(c.Request.Context(), experimentID, group)
	if err != nil {
		if !experiment.IsNotFound(err) {
			h.log.Error("storefront: analytics metadata lookup failed", "experiment", experimentID, "err", err)
		}
		c.JSON(http.StatusOK, notFound)
		return nil
	}
	c.JSON(http.StatusOK, metadataResponse{
		Found: true, ExperimentID: md.ExperimentID, ExperimentName: md.ExperimentName, VariantID: &md.VariantID,
		VariantName: md.VariantName, AnalyticsMeasurementID: md.AnalyticsMeasurementID,
	})
	return nil
}
