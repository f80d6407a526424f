package ingest

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
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

// invalid is the refusal of one field: 400 on the session surface, with a
// message that names the field.
func invalid(param, format string, args ...any) *experiment.Error {
	e := experiment.Errorf(experiment.KindInvalidRequest, "invalid_parameter", param+" "+format, args...)
	return e.WithParam(param)
}

func missing(param string) *experiment.Error {
	return experiment.Errorf(experiment.KindInvalidRequest, "missing_parameter", "%s is required", param).WithParam(param)
}

// parseTime reads createdAt: an ISO 8601 string or Unix milliseconds. Times
// before 2015 or more than a day ahead of now are refused (a seconds value
// sent as milliseconds lands in 1970 and is caught here).
func parseTime(param string, raw json.RawMessage, now time.Time) (time.Time, *experiment.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, missing(param)
	}
	var t time.Time
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return t, invalid(param, "must be an ISO 8601 time or Unix milliseconds")
		}
		var ok bool
		if t, ok = parseISO(s); !ok {
			return t, invalid(param, "must be an ISO 8601 time or Unix milliseconds")
		}
	} else {
		ms, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || ms != math.Trunc(ms) {
			return t, invalid(param, "must be an ISO 8601 time or Unix milliseconds")
		}
		t = time.UnixMilli(int64(ms))
	}
	if t.Year() < 2015 || t.After(now.Add(24*time.Hour)) {
		return t, invalid(param, "is out of range (Unix milliseconds, not seconds)")
	}
	return t.UTC(), nil
}

var isoLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05.999999999"}

func parseISO(s string) (time.Time, bool) {
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// checkUUID normalizes a UUID string to lower case or refuses it.
func checkUUID(param, s string) (string, *experiment.Error) {
	if s == "" {
		return "", missing(param)
	}
	if len(s) != 36 {
		return "", invalid(param, "must be a UUID")
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", invalid(param, "must be a UUID")
			}
		default:
			if !isHex(c) {
				return "", invalid(param, "must be a UUID")
			}
		}
	}
	return strings.ToLower(s), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// checkText refuses over-long strings and control characters.
func checkText(param, s string, maxChars int) *experiment.Error {
	if len(s) > maxChars && utf8.RuneCountInString(s) > maxChars {
		return invalid(param, "must be at most %d characters", maxChars)
	}
	if !utf8.ValidString(s) {
		return invalid(param, "must be valid UTF-8")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return invalid(param, "must not contain control characters")
		}
	}
	return nil
}

func requiredText(param, s string, maxChars int) *experiment.Error {
	if s == "" {
		return missing(param)
	}
	return checkText(param, s, maxChars)
}

// checkExperimentID accepts the ids both surfaces use: numeric ids and
// opaque ids of letters, digits, '-' and '_'.
func checkExperimentID(param, s string) *experiment.Error {
	if s == "" {
		return missing(param)
	}
	if len(s) > 64 {
		return invalid(param, "must be at most 64 characters")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return invalid(param, "must contain only letters, digits, '-' and '_'")
		}
	}
	return nil
}

// productID strips a platform global id prefix (gid://shopify/Product/123 →
// 123): tests name products by their numeric id.
func productID(s string) string {
	if strings.HasPrefix(s, "gid://") {
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			return s[i+1:]
		}
	}
	return s
}

func checkNumericID(param, s string) (string, *experiment.Error) {
	s = productID(strings.TrimSpace(s))
	if s == "" {
		return "", missing(param)
	}
	if len(s) > 32 {
		return "", invalid(param, "must be a numeric id")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", invalid(param, "must be a numeric id")
		}
	}
	return s, nil
}

// checkTestGroup: 0 control, 1 and up variants, -1 excluded.
func checkTestGroup(param string, g *float64) (int16, *experiment.Error) {
	if g == nil {
		return 0, missing(param)
	}
	if *g != math.Trunc(*g) || *g < -1 || *g > 100 {
		return 0, invalid(param, "must be an integer: -1 excluded, 0 control, 1 and up variants")
	}
	return int16(*g), nil
}

// checkCountry normalizes a two-letter code to upper case ("" stays "").
func checkCountry(param, s string) (string, *experiment.Error) {
	if s == "" {
		return "", nil
	}
	if len(s) != 2 || !isLetter(s[0]) || !isLetter(s[1]) {
		return "", invalid(param, "must be a two-letter country code")
	}
	return strings.ToUpper(s), nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func checkEnum(param, s string, allowed map[string]bool) *experiment.Error {
	if s != "" && !allowed[s] {
		return invalid(param, "has an unknown value %q", s)
	}
	return nil
}

// checkEventType accepts the documented types, other platform event names
// (snake_case, as the web pixel forwards them) and custom events, whose name
// it returns.
func checkEventType(t string) (custom string, err *experiment.Error) {
	if t == "" {
		return "", missing("eventType")
	}
	for _, prefix := range []string{CustomEventPrefix, docCustomEventPrefix} {
		if name, ok := strings.CutPrefix(t, prefix); ok {
			return name, checkCustomName(name)
		}
	}
	if len(t) > 64 {
		return "", invalid("eventType", "must be at most 64 characters")
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') || i == 0 && !(c >= 'a' && c <= 'z') {
			return "", invalid("eventType", "must be a snake_case event name or %s<name>", CustomEventPrefix)
		}
	}
	return "", nil
}

// checkCustomName: at most 77 characters of letters, digits, '_' and '-',
// structured with ':', '/' and '.' separators (no empty part between them).
func checkCustomName(name string) *experiment.Error {
	const param = "eventType"
	if name == "" {
		return invalid(param, "custom event needs a name")
	}
	if len(name) > MaxCustomNameChars {
		return invalid(param, "custom event name must be at most %d characters", MaxCustomNameChars)
	}
	prevSep := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == ':' || c == '/' || c == '.':
			if prevSep {
				return invalid(param, "custom event name has an empty part around %q", c)
			}
			prevSep = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-':
			prevSep = false
		default:
			return invalid(param, "custom event name may use letters, digits, '_', '-' and the separators ':', '/', '.'")
		}
	}
	if prevSep {
		return invalid(param, "custom event name must not end with a separator")
	}
	return nil
}

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
	for _, id := range req.ExperimentIDs {
		if err := checkExperimentID("experimentIds", id); err != nil {
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
		ev.EventID = NewID()
	}
	if len(req.ExperimentIDs) == 0 {
		return append(dst, ev), nil
	}
	for _, id := range req.ExperimentIDs {
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
	if err := json.Unmarshal(raw, &p); err != nil {
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
	if err := checkExperimentID("experimentId", string(req.ExperimentID)); err != nil {
		return a, err
	}
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
	if err := checkExperimentID("experimentId", req.ExperimentID); err != nil {
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
		ShopID: shopID, ExperimentID: req.ExperimentID, SessionID: sessionID, RecordID: NewID(),
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
	if err := checkExperimentID("experimentId", req.ExperimentID); err != nil {
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
		ShopID: shopID, ExperimentID: req.ExperimentID, ProductID: product, ViewID: NewID(),
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
func validLegacy(kind LegacyKind, req *LegacyRequest, shopID int64, m Meta) (*Event, *Order, *experiment.Error) {
	if err := checkExperimentID("experimentId", string(req.ExperimentID)); err != nil {
		return nil, nil, err
	}
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
		if req.Currency != "" && (len(req.Currency) != 3 || !isLetter(req.Currency[0])) {
			return nil, nil, invalid("currency", "must be an ISO 4217 code")
		}
		return nil, &Order{
			ShopID: shopID, ExperimentID: string(req.ExperimentID), OrderID: orderID,
			Version: uint64(m.ReceivedAt.UnixMilli()), TestGroup: group, VisitorID: req.VisitorID,
			Revenue: revenue, Currency: strings.ToUpper(req.Currency), CreatedAt: m.ReceivedAt,
			Source: "legacy", IsBot: m.IsBot(),
		}, nil
	}
	sessionID, err := checkUUID("sessionId", req.SessionID)
	if err != nil {
		return nil, nil, err
	}
	ev := &Event{
		ShopID: shopID, ExperimentID: string(req.ExperimentID), EventID: NewID(), ReceivedAt: m.ReceivedAt,
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
