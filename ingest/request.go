package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// The request types below are the bodies and query strings of the public
// tracking endpoints (session document 4.4, 6.1). The HTTP adapter fills them
// (JSON for bodies, query strings for observe*), and the Ingester validates
// them: an adapter never decides what is valid.

// EventRequest is the body of POST /api/track/event.
type EventRequest struct {
	EventID       string          `json:"eventId"` // optional: a client-chosen id makes client retries harmless
	SessionID     string          `json:"sessionId"`
	VisitorID     string          `json:"visitorId"`
	EventType     string          `json:"eventType"`
	Source        string          `json:"source"`
	CreatedAt     json.RawMessage `json:"createdAt"` // ISO 8601 string or Unix milliseconds
	ExperimentIDs []string        `json:"experimentIds"`
	PagePath      *string         `json:"pagePath"`
	Payload       json.RawMessage `json:"payload"`
}

// AssignmentRequest is the body of POST /api/track/assignment.
type AssignmentRequest struct {
	SessionID        string          `json:"sessionId"`
	VisitorID        string          `json:"visitorId"`
	ExperimentID     FlexString      `json:"experimentId"`
	TestGroup        *float64        `json:"testGroup"`
	CreatedAt        json.RawMessage `json:"createdAt"`
	AssignmentReason string          `json:"assignmentReason"`
	Country          string          `json:"country"`
	Device           string          `json:"device"`
	VisitorType      string          `json:"visitorType"`
	UTMSource        string          `json:"utmSource"`
	UTMMedium        string          `json:"utmMedium"`
	UTMCampaign      string          `json:"utmCampaign"`
	Gclid            string          `json:"gclid"`
	Fbclid           string          `json:"fbclid"`
}

// ObserveRequest is the query of GET /api/observe (a product page view).
// sessionId and visitorId are optional extras the tracking script may send.
type ObserveRequest struct {
	ProductID    string
	ExperimentID string
	SessionID    string
	VisitorID    string
}

// SessionRequest is the query of GET /api/observe/session (a page load).
// Beyond the three required fields, the optional ones feed the breakdowns.
type SessionRequest struct {
	SessionID    string
	ExperimentID string
	VisitorID    string
	PagePath     string
	Referrer     string
	Device       string
	Country      string
	VisitorType  string
	UTMSource    string
	UTMMedium    string
	UTMCampaign  string
}

// LegacyRequest is the body of the three legacy endpoints
// /api/analytics/add-to-cart, /checkout and /order; each uses its subset.
type LegacyRequest struct {
	Shop         string     `json:"shop"`
	ExperimentID FlexString `json:"experimentId"`
	SessionID    string     `json:"sessionId"`
	VisitorID    string     `json:"visitorId"`
	ProductID    FlexString `json:"productId"`
	OrderID      FlexString `json:"orderId"`
	TestGroup    *float64   `json:"testGroup"`
	Revenue      *float64   `json:"revenue"`
	Currency     string     `json:"currency"`
}

// FlexString accepts a JSON string or number (ids are sent both ways). A
// number must be a whole number from 0 to 2^64-1 (no sign, fraction or
// exponent), kept as written: 1e-400 or -0 named no test or product yet
// were stored as ids (the fuzz audit).
type FlexString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *FlexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*s = ""
		return nil
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = FlexString(v)
		return nil
	default:
		if _, err := strconv.ParseUint(string(b), 10, 64); err != nil {
			return errors.New("must be a string or a whole number")
		}
		*s = FlexString(b)
		return nil
	}
}

// eventPayload is what Lift reads out of a track-event payload (6.1).
type eventPayload struct {
	PageType      string       `json:"pageType"`
	ProductIDs    []FlexString `json:"productIds"`
	VariantIDs    []FlexString `json:"variantIds"`
	Quantity      *float64     `json:"quantity"`
	CheckoutToken string       `json:"checkoutToken"`
	OrderID       FlexString   `json:"orderId"`
	Name          string       `json:"name"`
}
