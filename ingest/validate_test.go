package ingest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

const testSession = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"

func validEventBody() EventRequest {
	return EventRequest{
		SessionID: testSession, VisitorID: "v-1", EventType: "product_added_to_cart", Source: "webpixel",
		CreatedAt: json.RawMessage(`"2026-11-21T11:59:00.123Z"`), ExperimentIDs: []string{"101", "102"},
		Payload: json.RawMessage(`{"productIds":["gid://shopify/Product/7","8"],"variantIds":[70],"quantity":2}`),
	}
}

func TestValidEventRows(t *testing.T) {
	t.Parallel()
	req := validEventBody()
	req.EventID = "client-id-1"
	rows, err := validEvent(nil, &req, 9, Meta{ReceivedAt: testNow, UserAgent: "Mozilla/5.0"})
	if err != nil {
		t.Fatal(err)
	}
	base := Event{
		ShopID: 9, EventID: "client-id-1", ReceivedAt: testNow,
		CreatedAt: time.Date(2026, 11, 21, 11, 59, 0, 123e6, time.UTC), SessionID: testSession, VisitorID: "v-1",
		EventType: "product_added_to_cart", Source: "webpixel", ProductIDs: []string{"7", "8"},
		VariantIDs: []string{"70"}, Quantity: 2, Payload: string(req.Payload),
	}
	a, b := base, base
	a.ExperimentID, b.ExperimentID = "101", "102"
	if diff := cmp.Diff([]Event{a, b}, rows); diff != "" {
		t.Fatalf("mismatch (-want +got):\n%s", diff)
	}
}

func TestValidEventAssignsIDAndMarksBots(t *testing.T) {
	t.Parallel()
	req := validEventBody()
	req.ExperimentIDs = []string{}
	rows, err := validEvent(nil, &req, 9, Meta{ReceivedAt: testNow, UserAgent: "Mozilla/5.0 (compatible; Googlebot/2.1)"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ExperimentID != "" {
		t.Fatalf("rows = %+v, want one row without experiment", rows)
	}
	if len(rows[0].EventID) != 36 {
		t.Errorf("EventID = %q, want an assigned UUID", rows[0].EventID)
	}
	if !rows[0].IsBot {
		t.Error("Googlebot not marked as bot")
	}
}

func TestValidEventRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(*EventRequest)
		param  string
		substr string
	}{
		{"MissingSession", func(r *EventRequest) { r.SessionID = "" }, "sessionId", "required"},
		{"SessionNotUUID", func(r *EventRequest) { r.SessionID = "abc" }, "sessionId", "UUID"},
		{"MissingVisitor", func(r *EventRequest) { r.VisitorID = "" }, "visitorId", "required"},
		{"MissingEventType", func(r *EventRequest) { r.EventType = "" }, "eventType", "required"},
		{"BadEventType", func(r *EventRequest) { r.EventType = "Add To Cart" }, "eventType", "snake_case"},
		{"CustomNameTooLong", func(r *EventRequest) { r.EventType = CustomEventPrefix + strings.Repeat("a", 78) }, "eventType", "77"},
		{"CustomNameBadChar", func(r *EventRequest) { r.EventType = CustomEventPrefix + "quiz answered!" }, "eventType", "separators"},
		{"CustomNameEmptyPart", func(r *EventRequest) { r.EventType = CustomEventPrefix + "quiz::done" }, "eventType", "empty part"},
		{"CustomWithoutAssignment", func(r *EventRequest) {
			r.EventType = CustomEventPrefix + "quiz"
			r.ExperimentIDs = []string{}
		}, "experimentIds", "custom event"},
		{"MissingSource", func(r *EventRequest) { r.Source = "" }, "source", "required"},
		{"UnknownSource", func(r *EventRequest) { r.Source = "server" }, "source", "script, webpixel, webhook"},
		{"MissingCreatedAt", func(r *EventRequest) { r.CreatedAt = nil }, "createdAt", "required"},
		{"CreatedAtNotISO", func(r *EventRequest) { r.CreatedAt = json.RawMessage(`"yesterday"`) }, "createdAt", "ISO 8601"},
		{"CreatedAtInSeconds", func(r *EventRequest) { r.CreatedAt = json.RawMessage(`1763726340`) }, "createdAt", "out of range"},
		{"CreatedAtFarFuture", func(r *EventRequest) { r.CreatedAt = json.RawMessage(`"2030-01-01T00:00:00Z"`) }, "createdAt", "out of range"},
		{"CreatedAtFraction", func(r *EventRequest) { r.CreatedAt = json.RawMessage(`1763726340000.5`) }, "createdAt", "Unix milliseconds"},
		{"MissingExperimentIDs", func(r *EventRequest) { r.ExperimentIDs = nil }, "experimentIds", "required"},
		{"BadExperimentID", func(r *EventRequest) { r.ExperimentIDs = []string{"a b"} }, "experimentIds", "letters"},
		{"PagePathTooLong", func(r *EventRequest) { p := "/" + strings.Repeat("é", 2000); r.PagePath = &p }, "pagePath", "2000"},
		{"PayloadTooLarge", func(r *EventRequest) {
			r.Payload = json.RawMessage(`{"pageType":"` + strings.Repeat("x", 10*1024) + `"}`)
		}, "payload", "10 KB"},
		{"PayloadNotObject", func(r *EventRequest) { r.Payload = json.RawMessage(`[1,2]`) }, "payload", "object"},
		{"PayloadWrongType", func(r *EventRequest) { r.Payload = json.RawMessage(`{"quantity":"two"}`) }, "payload", "quantity"},
		{"PayloadNegativeQuantity", func(r *EventRequest) { r.Payload = json.RawMessage(`{"quantity":-1}`) }, "payload.quantity", "non-negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := validEventBody()
			tc.edit(&req)
			_, err := validEvent(nil, &req, 9, Meta{ReceivedAt: testNow})
			assertInvalid(t, err, tc.param, tc.substr)
		})
	}
}

func assertInvalid(t *testing.T, err *experiment.Error, param, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want refusal of %s", param)
	}
	if err.Kind != experiment.KindInvalidRequest || err.Param != param || !strings.Contains(err.Message, substr) ||
		!strings.Contains(err.Message, param) {
		t.Fatalf("got %v (kind %d), want invalid %s mentioning %q", err, err.Kind, param, substr)
	}
}

func TestValidEventAcceptsTimeForms(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	for _, raw := range []string{`"2026-11-21T11:00:00Z"`, `"2026-11-21T12:00:00+01:00"`, `"2026-11-21T11:00:00.000+0000"`, `1795258800000`,
		`"2026-11-21T11:00Z"`, `"2026-11-21T12:00+01:00"`, `"20261121T110000Z"`, `"20261121T120000+0100"`, `"2026-11-21t11:00:00z"`, `"2026-11-21T11:00"`} {
		t.Run(raw, func(t *testing.T) {
			t.Parallel()
			req := validEventBody()
			req.CreatedAt = json.RawMessage(raw)
			rows, err := validEvent(nil, &req, 1, Meta{ReceivedAt: testNow})
			if err != nil {
				t.Fatal(err)
			}
			if !rows[0].CreatedAt.Equal(want) {
				t.Errorf("CreatedAt = %v, want %v", rows[0].CreatedAt, want)
			}
		})
	}
}

func TestValidEventAcceptsADate(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`"2026-11-21"`, `"20261121"`} {
		req := validEventBody()
		req.CreatedAt = json.RawMessage(raw)
		rows, err := validEvent(nil, &req, 1, Meta{ReceivedAt: testNow})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if want := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC); !rows[0].CreatedAt.Equal(want) {
			t.Errorf("%s: CreatedAt = %v, want %v", raw, rows[0].CreatedAt, want)
		}
	}
}

// TestEventTestIDs: one row per test the event names, a repeated id
// folded; "0101" is test 101, as ga4/metadata reads it (stored as sent, it
// matched no test: storefront audit 2, S6); ids that are not numbers stay
// as they are.
func TestEventTestIDs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ sent, want []string }{
		{[]string{"101", "102", "101"}, []string{"101", "102"}},
		{[]string{"0101", "101", "legacy-07", "0"}, []string{"101", "legacy-07", "0"}},
	} {
		req := validEventBody()
		req.ExperimentIDs = c.sent
		rows, err := validEvent(nil, &req, 1, Meta{ReceivedAt: testNow})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.ExperimentID)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.sent, diff)
		}
	}
	a := validAssignmentBody()
	a.ExperimentID = "00101"
	if row, err := validAssignment(&a, 9, Meta{ReceivedAt: testNow}); err != nil || row.ExperimentID != "101" {
		t.Errorf("assignment: %q, %v; want test 101", row.ExperimentID, err)
	}
}

func TestCustomEventNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"quiz", "quiz:answered", "checkout/step.2", "a-b_c:d/e.f", strings.Repeat("n", 77)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, prefix := range []string{CustomEventPrefix, "svc:custom_event:"} {
				got, err := checkEventType(prefix + name)
				if err != nil || got != name {
					t.Fatalf("checkEventType(%q) = %q, %v", prefix+name, got, err)
				}
			}
		})
	}
}

func f64(v float64) *float64 { return &v }

func validAssignmentBody() AssignmentRequest {
	return AssignmentRequest{
		SessionID: testSession, VisitorID: "v-1", ExperimentID: "101", TestGroup: f64(1),
		CreatedAt: json.RawMessage(`1795258800000`), AssignmentReason: "random_split", Country: "de",
		Device: "mobile", VisitorType: "new", UTMSource: "news",
	}
}

func TestValidAssignment(t *testing.T) {
	t.Parallel()
	req := validAssignmentBody()
	a, err := validAssignment(&req, 9, Meta{ReceivedAt: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if a.Country != "DE" || a.TestGroup != 1 || a.AssignmentID != AssignmentID(9, "101", "v-1") || a.IsBot {
		t.Errorf("row = %+v", a)
	}
	req.Device = "bot"
	if a, err := validAssignment(&req, 9, Meta{ReceivedAt: testNow}); err != nil || !a.IsBot {
		t.Errorf("device bot: bot %v, err %v; want marked as bot", a.IsBot, err)
	}
}

func TestValidAssignmentRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(*AssignmentRequest)
		param  string
		substr string
	}{
		{"MissingExperiment", func(r *AssignmentRequest) { r.ExperimentID = "" }, "experimentId", "required"},
		{"MissingTestGroup", func(r *AssignmentRequest) { r.TestGroup = nil }, "testGroup", "required"},
		{"TestGroupBelowMinusOne", func(r *AssignmentRequest) { r.TestGroup = f64(-2) }, "testGroup", "integer"},
		{"TestGroupFraction", func(r *AssignmentRequest) { r.TestGroup = f64(0.5) }, "testGroup", "integer"},
		{"BadReason", func(r *AssignmentRequest) { r.AssignmentReason = "coin_flip" }, "assignmentReason", "unknown"},
		{"BadCountry", func(r *AssignmentRequest) { r.Country = "Germany" }, "country", "two-letter"},
		{"BadDevice", func(r *AssignmentRequest) { r.Device = "watch" }, "device", "unknown"},
		{"BadVisitorType", func(r *AssignmentRequest) { r.VisitorType = "vip" }, "visitorType", "unknown"},
		{"MissingCreatedAt", func(r *AssignmentRequest) { r.CreatedAt = nil }, "createdAt", "required"},
		{"SessionNotUUID", func(r *AssignmentRequest) { r.SessionID = "s1" }, "sessionId", "UUID"},
		{"UTMTooLong", func(r *AssignmentRequest) { r.UTMCampaign = strings.Repeat("c", 513) }, "utmCampaign", "512"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := validAssignmentBody()
			tc.edit(&req)
			_, err := validAssignment(&req, 9, Meta{ReceivedAt: testNow})
			assertInvalid(t, err, tc.param, tc.substr)
		})
	}
}

func TestValidLegacy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		kind   LegacyKind
		req    LegacyRequest
		param  string // "" means accepted
		substr string
	}{
		{"AddToCart", LegacyAddToCart, LegacyRequest{ExperimentID: "5", SessionID: testSession, ProductID: "gid://shopify/Product/12", TestGroup: f64(0)}, "", ""},
		{"AddToCartNoProduct", LegacyAddToCart, LegacyRequest{ExperimentID: "5", SessionID: testSession, TestGroup: f64(0)}, "productId", "required"},
		{"CheckoutNoRevenue", LegacyCheckout, LegacyRequest{ExperimentID: "5", SessionID: testSession, TestGroup: f64(1)}, "revenue", "required"},
		{"CheckoutNegativeRevenue", LegacyCheckout, LegacyRequest{ExperimentID: "5", SessionID: testSession, TestGroup: f64(1), Revenue: f64(-3)}, "revenue", "non-negative"},
		{"Order", LegacyOrder, LegacyRequest{ExperimentID: "5", OrderID: "991", TestGroup: f64(1), Revenue: f64(30)}, "", ""},
		{"OrderNoID", LegacyOrder, LegacyRequest{ExperimentID: "5", TestGroup: f64(1), Revenue: f64(30)}, "orderId", "required"},
		{"OrderNoGroup", LegacyOrder, LegacyRequest{ExperimentID: "5", OrderID: "991", Revenue: f64(30)}, "testGroup", "required"},
		{"OrderInShopCurrency", LegacyOrder, LegacyRequest{ExperimentID: "5", OrderID: "991", TestGroup: f64(1), Revenue: f64(30), Currency: "usd"}, "", ""},
		{"OrderInOtherCurrency", LegacyOrder, LegacyRequest{ExperimentID: "5", OrderID: "991", TestGroup: f64(1), Revenue: f64(30), Currency: "EUR"}, "currency", "USD"},
		{"OrderInNoCurrency", LegacyOrder, LegacyRequest{ExperimentID: "5", OrderID: "991", TestGroup: f64(1), Revenue: f64(30), Currency: "E12"}, "currency", "USD"},
		{"NoExperiment", LegacyCheckout, LegacyRequest{SessionID: testSession, TestGroup: f64(1), Revenue: f64(3)}, "experimentId", "required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, order, err := validLegacy(tc.kind, &tc.req, 3, "USD", Meta{ReceivedAt: testNow})
			if tc.param != "" {
				assertInvalid(t, err, tc.param, tc.substr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.kind == LegacyOrder {
				if order == nil || order.OrderID != "991" || order.Revenue != 30 || order.TestGroup != 1 || order.Currency != "USD" {
					t.Errorf("order = %+v", order)
				}
				return
			}
			if ev == nil || ev.ProductIDs[0] != "12" || ev.TestGroup == nil || *ev.TestGroup != 0 {
				t.Errorf("event = %+v", ev)
			}
		})
	}
}

func TestValidObserve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		req   ObserveRequest
		param string
	}{
		{"OK", ObserveRequest{ProductID: "123", ExperimentID: "5"}, ""},
		{"GID", ObserveRequest{ProductID: "gid://shopify/Product/123", ExperimentID: "5"}, ""},
		{"MissingProduct", ObserveRequest{ExperimentID: "5"}, "productId"},
		{"ProductNotNumeric", ObserveRequest{ProductID: "shoe", ExperimentID: "5"}, "productId"},
		{"MissingExperiment", ObserveRequest{ProductID: "1"}, "experimentId"},
		{"BadSession", ObserveRequest{ProductID: "1", ExperimentID: "5", SessionID: "x"}, "sessionId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := validPageView(&tc.req, 1, Meta{ReceivedAt: testNow})
			if tc.param == "" {
				if err != nil || v.ProductID != "123" {
					t.Fatalf("got %+v, %v", v, err)
				}
				return
			}
			if err == nil || err.Param != tc.param {
				t.Fatalf("err = %v, want refusal of %s", err, tc.param)
			}
		})
	}
}

func TestAssignmentIDStable(t *testing.T) {
	t.Parallel()
	a, b := AssignmentID(1, "5", "v"), AssignmentID(1, "5", "v")
	if a != b || a == AssignmentID(1, "6", "v") || a == AssignmentID(2, "5", "v") {
		t.Fatalf("assignment ids not stable per (shop, test, visitor): %s %s", a, b)
	}
	if _, err := checkUUID("id", a); err != nil {
		t.Fatalf("%s is not a UUID: %v", a, err)
	}
}
