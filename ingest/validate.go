package ingest

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/liftab/lift/experiment"
)

// Limits from the session document (part 8) and DESIGN §6, and our own
// bounds on fields the document leaves open (so a row stays small).
const (
	MaxPayloadBytes    = 10 * 1024
	MaxPagePathChars   = 2000
	MaxCustomNameChars = 77
	maxIDChars         = 128
	maxExperimentIDs   = 50
	maxPayloadIDs      = 250
	maxTextChars       = 512
)

// CustomEventPrefix starts the event type of a custom event; the <name>
// follows. The session document writes the brand prefix as "svc"; Lift's is
// "lift". Both are accepted.
const CustomEventPrefix = "lift:custom_event:"

const docCustomEventPrefix = "svc:custom_event:"

// Sources of a tracked event (4.4).
var sources = map[string]bool{"script": true, "webpixel": true, "webhook": true}

var assignmentReasons = map[string]bool{
	"random_split": true, "force_assign_group": true, "force_assign_excluded": true,
	"audience_targeting_excluded": true, "namespace_excluded": true, "traffic_allocation_excluded": true,
}

var devices = map[string]bool{"desktop": true, "mobile": true, "tablet": true, "bot": true}

var visitorTypes = map[string]bool{"new": true, "returning": true}

// validEvent turns a track-event body into its rows, one per experiment id,
// appended to dst.
func validEvent(dst []Event, req *EventRequest, shopID int64, m Meta) ([]Event, *experiment.Error) {
	if req.EventID != "" {
		if err := checkText("eventId", req.EventID, maxIDChars); err != nil {
			return nil, err
		}
	}
	sessionID, err := checkUUID("sessionId", req.SessionID)
	if err != nil {
		return nil, err
	}
	if err := requiredText("visitorId", req.VisitorID, maxIDChars); err != nil {
		return nil, err
	}
	custom, err := checkEventType(req.EventType)
	if err != nil {
		return nil, err
	}
	if req.Source == "" {
		return nil, missing("source")
	}
	if !sources[req.Source] {
		return nil, invalid("source", "must be one of script, webpixel, webhook")
	}
	createdAt, err := parseTime("createdAt", req.CreatedAt, m.ReceivedAt)
	if err != nil {
		return nil, err
	}
	if req.ExperimentIDs == nil {
		return nil, invalid("experimentIds", "is required (an empty array when no assignment is active)")
	}
	if len(req.ExperimentIDs) > maxExperimentIDs {
		return nil, invalid("experimentIds", "must hold at most %d ids", maxExperimentIDs)
	}
	for i, id := range req.ExperimentIDs {
		var err *experiment.Error
		if req.ExperimentIDs[i], err = testID("experimentIds", id); err != nil {
			return nil, err
		}
	}
	if custom != "" && len(req.ExperimentIDs) == 0 {
		return nil, invalid("experimentIds", "must not be empty for a custom event (tracked only with an active assignment)")
	}
	pagePath := ""
	if req.PagePath != nil {
		pagePath = *req.PagePath
		if utf8.RuneCountInString(pagePath) > MaxPagePathChars {
			return nil, invalid("pagePath", "must be at most %d characters", MaxPagePathChars)
		}
		if err := checkText("pagePath", pagePath, MaxPagePathChars); err != nil {
			return nil, err
		}
	}
	ev := Event{
		ShopID: shopID, EventID: req.EventID, ReceivedAt: m.ReceivedAt, CreatedAt: createdAt,
		SessionID: sessionID, VisitorID: req.VisitorID, EventType: req.EventType, Source: req.Source,
		PagePath: pagePath, CustomName: custom, IsBot: m.IsBot(),
	}
	if err := readPayload(req.Payload, &ev); err != nil {
		return nil, err
	}
	if ev.EventID == "" {
		ev.EventID = newRowID()
	}
	if len(req.ExperimentIDs) == 0 {
		return append(dst, ev), nil
	}
	for i, id := range req.ExperimentIDs {
		if slices.Contains(req.ExperimentIDs[:i], id) {
			continue // a repeated id would count the event twice for its test
		}
		ev.ExperimentID = id
		dst = append(dst, ev)
	}
	return dst, nil
}

// readPayload checks the payload limit and lifts the fields of 6.1 into ev.
func readPayload(raw json.RawMessage, ev *Event) *experiment.Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > MaxPayloadBytes {
		return invalid("payload", "must be at most 10 KB")
	}
	if raw[0] != '{' {
		return invalid("payload", "must be an object")
	}
	var p eventPayload
	if err := decodePayload(raw, &p); err != nil {
		return invalid("payload", "has a field of the wrong type: %s", jsonFieldError(err))
	}
	if err := checkText("payload.pageType", p.PageType, 64); err != nil {
		return err
	}
	if err := checkText("payload.checkoutToken", p.CheckoutToken, maxTextChars); err != nil {
		return err
	}
	if err := checkText("payload.orderId", string(p.OrderID), maxIDChars); err != nil {
		return err
	}
	var err *experiment.Error
	if ev.ProductIDs, err = payloadIDs("payload.productIds", p.ProductIDs); err != nil {
		return err
	}
	if ev.VariantIDs, err = payloadIDs("payload.variantIds", p.VariantIDs); err != nil {
		return err
	}
	if p.Quantity != nil {
		q := *p.Quantity
		if q != math.Trunc(q) || q < 0 || q > 1e6 {
			return invalid("payload.quantity", "must be a non-negative integer")
		}
		ev.Quantity = uint32(q)
	}
	ev.PageType, ev.CheckoutToken, ev.OrderID = p.PageType, p.CheckoutToken, productID(string(p.OrderID))
	ev.Payload = string(raw)
	return nil
}

func payloadIDs(param string, ids []FlexString) ([]string, *experiment.Error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > maxPayloadIDs {
		return nil, invalid(param, "must hold at most %d ids", maxPayloadIDs)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		s := productID(string(id))
		if err := requiredText(param, s, maxIDChars); err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func jsonFieldError(err error) string {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok && te.Field != "" {
		return te.Field
	}
	return "invalid JSON"
}

// validAssignment turns an assignment body into its row.
func validAssignment(req *AssignmentRequest, shopID int64, m Meta) (Assignment, *experiment.Error) {
	var a Assignment
	sessionID, err := checkUUID("sessionId", req.SessionID)
	if err != nil {
		return a, err
	}
	if err := requiredText("visitorId", req.VisitorID, maxIDChars); err != nil {
		return a, err
	}
	id, err := testID("experimentId", string(req.ExperimentID))
	if err != nil {
		return a, err
	}
	req.ExperimentID = FlexString(id)
	group, err := checkTestGroup("testGroup", req.TestGroup)
	if err != nil {
		return a, err
	}
	createdAt, err := parseTime("createdAt", req.CreatedAt, m.ReceivedAt)
	if err != nil {
		return a, err
	}
	if err := checkEnum("assignmentReason", req.AssignmentReason, assignmentReasons); err != nil {
		return a, err
	}
	country, err := checkCountry("country", req.Country)
	if err != nil {
		return a, err
	}
	if err := checkEnum("device", req.Device, devices); err != nil {
		return a, err
	}
	if err := checkEnum("visitorType", req.VisitorType, visitorTypes); err != nil {
		return a, err
	}
	for _, f := range []struct{ param, v string }{
		{"utmSource", req.UTMSource}, {"utmMedium", req.UTMMedium}, {"utmCampaign", req.UTMCampaign},
		{"gclid", req.Gclid}, {"fbclid", req.Fbclid},
	} {
		if err := checkText(f.param, f.v, maxTextChars); err != nil {
			return a, err
		}
	}
	return Assignment{
		ShopID: shopID, ExperimentID: string(req.ExperimentID), VisitorID: req.VisitorID,
		AssignmentID: AssignmentID(shopID, string(req.ExperimentID), req.VisitorID),
		SessionID:    sessionID, TestGroup: group, Reason: req.AssignmentReason, Country: country,
		Device: req.Device, VisitorType: req.VisitorType, UTMSource: req.UTMSource, UTMMedium: req.UTMMedium,
		UTMCampaign: req.UTMCampaign, Gclid: req.Gclid, Fbclid: req.Fbclid,
		AssignedAt: createdAt, ReceivedAt: m.ReceivedAt, IsBot: m.IsBot() || req.Device == "bot",
	}, nil
}

// validSession turns an observe/session query into its row.
func validSession(req *SessionRequest, shopID int64, m Meta) (Session, *experiment.Error) {
	var s Session
	sessionID, err := checkUUID("sessionId", req.SessionID)
	if err != nil {
		return s, err
	}
	if req.ExperimentID, err = testID("experimentId", req.ExperimentID); err != nil {
		return s, err
	}
	if err := checkText("visitorId", req.VisitorID, maxIDChars); err != nil {
		return s, err
	}
	if err := checkText("pagePath", req.PagePath, MaxPagePathChars); err != nil {
		return s, err
	}
	if err := checkText("referrer", req.Referrer, MaxPagePathChars); err != nil {
		return s, err
	}
	country, err := checkCountry("country", req.Country)
	if err != nil {
		return s, err
	}
	if err := checkEnum("device", req.Device, devices); err != nil {
		return s, err
	}
	if err := checkEnum("visitorType", req.VisitorType, visitorTypes); err != nil {
		return s, err
	}
	for _, f := range []struct{ param, v string }{
		{"utmSource", req.UTMSource}, {"utmMedium", req.UTMMedium}, {"utmCampaign", req.UTMCampaign},
	} {
		if err := checkText(f.param, f.v, maxTextChars); err != nil {
			return s, err
		}
	}
	return Session{
		ShopID: shopID, ExperimentID: req.ExperimentID, SessionID: sessionID, RecordID: newRowID(),
		VisitorID: req.VisitorID, SeenAt: m.ReceivedAt, PagePath: req.PagePath, Referrer: req.Referrer,
		Device: req.Device, Country: country, VisitorType: req.VisitorType, UTMSource: req.UTMSource,
		UTMMedium: req.UTMMedium, UTMCampaign: req.UTMCampaign, IsBot: m.IsBot() || req.Device == "bot",
	}, nil
}

// validPageView turns an observe query into its row.
func validPageView(req *ObserveRequest, shopID int64, m Meta) (PageView, *experiment.Error) {
	var v PageView
	product, err := checkNumericID("productId", req.ProductID)
	if err != nil {
		return v, err
	}
	if req.ExperimentID, err = testID("experimentId", req.ExperimentID); err != nil {
		return v, err
	}
	sessionID := ""
	if req.SessionID != "" {
		if sessionID, err = checkUUID("sessionId", req.SessionID); err != nil {
			return v, err
		}
	}
	if err := checkText("visitorId", req.VisitorID, maxIDChars); err != nil {
		return v, err
	}
	return PageView{
		ShopID: shopID, ExperimentID: req.ExperimentID, ProductID: product, ViewID: newRowID(),
		SessionID: sessionID, VisitorID: req.VisitorID, ViewedAt: m.ReceivedAt, IsBot: m.IsBot(),
	}, nil
}

// Legacy kinds, one per legacy endpoint.
type LegacyKind int

const (
	LegacyAddToCart LegacyKind = iota + 1
	LegacyCheckout
	LegacyOrder
)

// validLegacy turns a legacy body into an event row (add-to-cart, checkout)
// or an order row (order).
// validLegacy reads a legacy call of the shop with id shopID, whose money
// is in shopCurrency: an order in another currency is refused, because
// results add revenue in the shop's currency and Lift does not convert.
func validLegacy(kind LegacyKind, req *LegacyRequest, shopID int64, shopCurrency string, m Meta) (*Event, *Order, *experiment.Error) {
	id, err := testID("experimentId", string(req.ExperimentID))
	if err != nil {
		return nil, nil, err
	}
	req.ExperimentID = FlexString(id)
	group, err := checkTestGroup("testGroup", req.TestGroup)
	if err != nil {
		return nil, nil, err
	}
	if err := checkText("visitorId", req.VisitorID, maxIDChars); err != nil {
		return nil, nil, err
	}
	revenue := 0.0
	if kind != LegacyAddToCart {
		if req.Revenue == nil {
			return nil, nil, missing("revenue")
		}
		if *req.Revenue < 0 || math.IsInf(*req.Revenue, 0) || *req.Revenue > 1e12 {
			return nil, nil, invalid("revenue", "must be a non-negative amount")
		}
		revenue = *req.Revenue
	}
	if kind == LegacyOrder {
		orderID, err := checkNumericID("orderId", string(req.OrderID))
		if err != nil {
			return nil, nil, err
		}
		if req.Currency != "" && !strings.EqualFold(req.Currency, shopCurrency) {
			return nil, nil, invalid("currency", "must be the shop's currency, %s (Lift does not convert amounts)", shopCurrency)
		}
		return nil, &Order{
			ShopID: shopID, ExperimentID: string(req.ExperimentID), OrderID: orderID,
			Version: uint64(m.ReceivedAt.UnixMilli()), TestGroup: group, VisitorID: req.VisitorID,
			Revenue: revenue, Currency: shopCurrency, CreatedAt: m.ReceivedAt,
			Source: "legacy", IsBot: m.IsBot(),
		}, nil
	}
	sessionID, err := checkUUID("sessionId", req.SessionID)
	if err != nil {
		return nil, nil, err
	}
	ev := &Event{
		ShopID: shopID, ExperimentID: string(req.ExperimentID), EventID: newRowID(), ReceivedAt: m.ReceivedAt,
		CreatedAt: m.ReceivedAt, SessionID: sessionID, VisitorID: req.VisitorID, Source: "legacy",
		Revenue: revenue, TestGroup: &group, IsBot: m.IsBot(),
	}
	if kind == LegacyAddToCart {
		product, err := checkNumericID("productId", string(req.ProductID))
		if err != nil {
			return nil, nil, err
		}
		ev.EventType, ev.ProductIDs, ev.Quantity = "product_added_to_cart", []string{product}, 1
	} else {
		ev.EventType = "checkout_started"
	}
	return ev, nil, nil
}
