package ingest

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

// The tracking decoders (the storefront adapter decodes with json.Unmarshal,
// then the Ingester validates) are fed arbitrary bodies and queries: they
// must never panic, refuse only with a 400 naming a field, and what they
// accept must survive the WAL codec unchanged. `make fuzz` runs them longer.

var fuzzMeta = Meta{ReceivedAt: testNow, UserAgent: "Mozilla/5.0"}

// wantRefusal fails unless err is nil or the session surface's 400.
func wantRefusal(t *testing.T, err *experiment.Error) {
	t.Helper()
	if err == nil {
		return
	}
	if err.Kind != experiment.KindInvalidRequest || err.Param == "" || !utf8.ValidString(err.Message) {
		t.Fatalf("not a 400 naming a field: %#v", err)
	}
}

func FuzzTrackEventBody(f *testing.F) {
	valid := `{"eventId":"e-1","sessionId":"` + testSession + `","visitorId":"v-1","eventType":"product_added_to_cart","source":"webpixel",` +
		`"createdAt":"2026-11-21T10:00:00Z","experimentIds":["101"],"pagePath":"/p","payload":{"productIds":["gid://shopify/Product/7"],"variantIds":[70],"quantity":2}}`
	for _, s := range []string{
		valid,
		strings.Replace(valid, `"v-1"`, `"v\u0000"`, 1),
		strings.Replace(valid, `"v-1"`, "\"v\xff\"", 1),
		strings.Replace(valid, `"/p"`, `"`+strings.Repeat("p", MaxPagePathChars+1)+`"`, 1),
		strings.Replace(valid, `"product_added_to_cart"`, `"lift:custom_event:a//b"`, 1),
		strings.Replace(valid, `"2026-11-21T10:00:00Z"`, `1e300`, 1),
		strings.Replace(valid, `"quantity":2`, `"quantity":1e400`, 1),
		strings.Replace(valid, `[70]`, `[{"x":1}]`, 1),
		`{"payload":"` + strings.Repeat("x", MaxPayloadBytes) + `"}`,
		`{"experimentIds":null}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req EventRequest
		if json.Unmarshal(body, &req) != nil {
			return // the adapter's 400
		}
		rows, err := validEvent(nil, &req, 1, fuzzMeta)
		wantRefusal(t, err)
		for i := range rows {
			var back Event
			if err := decodeEvent(appendEvent(nil, &rows[i]), &back); err != nil {
				t.Fatalf("accepted event does not decode: %v", err)
			}
			if diff := cmp.Diff(rows[i], back, cmp.Comparer(func(a, b []string) bool { return strings.Join(a, "\x1f") == strings.Join(b, "\x1f") })); diff != "" {
				t.Fatalf("WAL round trip mismatch (-want +got):\n%s", diff)
			}
		}
	})
}

func FuzzTrackAssignmentBody(f *testing.F) {
	valid := `{"sessionId":"` + testSession + `","visitorId":"v-1","experimentId":"101","testGroup":1,"createdAt":1763719200000,` +
		`"assignmentReason":"random_split","country":"de","device":"mobile","visitorType":"new","utmSource":"x"}`
	for _, s := range []string{
		valid,
		strings.Replace(valid, `"101"`, `1099511627776`, 1),
		strings.Replace(valid, `"testGroup":1`, `"testGroup":1099511627776`, 1),
		strings.Replace(valid, `"x"}`, `"x\u0000"}`, 1),
		strings.Replace(valid, `"de"`, "\"\xff\xfe\"", 1),
		`{"experimentId":{}}`, `{"testGroup":"1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req AssignmentRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		_, err := validAssignment(&req, 1, fuzzMeta)
		wantRefusal(t, err)
	})
}

func FuzzLegacyBody(f *testing.F) {
	valid := `{"shop":"demo-shop.myshopify.com","experimentId":"101","sessionId":"` + testSession + `","productId":"7","orderId":9,"testGroup":0,"revenue":12.5,"currency":"eur"}`
	for _, s := range []string{
		valid,
		strings.Replace(valid, `"demo-shop.myshopify.com"`, `"demo\u0000"`, 1),
		strings.Replace(valid, `"eur"`, `"e\u0000\u0000"`, 1),
		strings.Replace(valid, `12.5`, `1e400`, 1),
		strings.Replace(valid, `12.5`, `-0`, 1),
		strings.Replace(valid, `"7"`, `"gid://shopify/Product/"`, 1),
	} {
		for kind := LegacyAddToCart; kind <= LegacyOrder; kind++ {
			f.Add(uint8(kind), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		var req LegacyRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		_, _, err := validLegacy(LegacyKind(kind%3+1), &req, 1, "USD", fuzzMeta)
		wantRefusal(t, err)
	})
}

// FuzzObserveQuery is the two GET endpoints: their query strings as the
// storefront adapter reads them.
func FuzzObserveQuery(f *testing.F) {
	f.Add("sessionId=" + testSession + "&experimentId=101&productId=7&visitorId=v&pagePath=/p&country=DE&device=mobile")
	f.Add("sessionId=%00&experimentId=%FF&productId=gid://x/Product/%00")
	f.Add("pagePath=" + strings.Repeat("%C3%BC", MaxPagePathChars+1))
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		s := SessionRequest{SessionID: q.Get("sessionId"), ExperimentID: q.Get("experimentId"), VisitorID: q.Get("visitorId"),
			PagePath: q.Get("pagePath"), Referrer: q.Get("referrer"), Device: q.Get("device"), Country: q.Get("country"),
			VisitorType: q.Get("visitorType"), UTMSource: q.Get("utmSource"), UTMMedium: q.Get("utmMedium"), UTMCampaign: q.Get("utmCampaign")}
		_, verr := validSession(&s, 1, fuzzMeta)
		wantRefusal(t, verr)
		o := ObserveRequest{ProductID: q.Get("productId"), ExperimentID: q.Get("experimentId"), SessionID: q.Get("sessionId"), VisitorID: q.Get("visitorId")}
		_, verr = validPageView(&o, 1, fuzzMeta)
		wantRefusal(t, verr)
	})
}
