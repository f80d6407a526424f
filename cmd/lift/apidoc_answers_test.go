package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/lifttest"
)

// tourCall is one request of the tour below and what it should answer.
type tourCall struct {
	method, path, auth, body string
	header                   []string
	status                   int
}

// TestAPIDocumentMatchesAnswers walks every surface of a real server —
// v1, the admin panel's session API, storefront tracking, admin tools,
// webhooks, install and operations — and checks each answer (status,
// headers, body) against the public document with libopenapi-validator:
// the document describes what the code answers, not what it was meant to.
// With -update-examples it records v1's answers as the document's
// examples (api/apidoc/examples.json).
func TestAPIDocumentMatchesAnswers(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(c *config.Config) {
		c.Platform.APIKey, c.Platform.APISecret, c.Admin.APIKey = "key", "secret", "admin"
		c.Platform.WebhookSecret = "hook"
	})
	raw, _ := apiDoc(t, s)
	d, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	shop, read, write := s.shop(true)
	session := sessionToken(t, shop.Domain)
	examples := map[string]map[string]json.RawMessage{}
	run := func(c tourCall) reply {
		t.Helper()
		r, req := s.send(c)
		if r.status != c.status {
			t.Fatalf("%s %s = %d, want %d: %s", c.method, c.path, r.status, c.status, r.raw)
		}
		res := &http.Response{StatusCode: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.raw)), Request: req}
		if ok, verrs := v.ValidateHttpResponse(req, res); !ok {
			for _, e := range verrs {
				t.Errorf("%s %s → %d: %s: %s", c.method, c.path, r.status, e.Message, e.Reason)
				for _, se := range e.SchemaValidationErrors {
					t.Errorf("    %s at %s", se.Reason, se.FieldPath)
				}
			}
		}
		if strings.HasPrefix(c.path, "/v1/") && r.header.Get("X-RateLimit-Limit") == "" {
			t.Errorf("%s %s → %d without the X-RateLimit-* headers the document promises", c.method, c.path, r.status)
		}
		if *updateExamples && strings.HasPrefix(c.path, "/v1/") {
			record(examples, opID(t, raw, c), c, r)
		}
		return r
	}

	// v1: a test through its whole life, its results and an export.
	run(tourCall{"GET", "/v1/experiments", read, "", nil, 200})
	created := run(tourCall{"POST", "/v1/experiments", write, `{"type":"url_redirect","name":"Sale landing","shared":{"url_redirect":{"source_path":"/collections/sale","match_type":"prefix"}},` +
		`"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"New landing","split":50,"content":{"destination":"/pages/sale-2"}}]}`, nil, 201})
	id := fmt.Sprint(created.body["id"])
	e := "/v1/experiments/" + id
	run(tourCall{"GET", e, read, "", nil, 200})
	run(tourCall{"PATCH", e, write, `{"name":"Sale landing (EU)","traffic_allocation":80}`, nil, 200})
	pv := run(tourCall{"POST", e + "/test_groups/1/preview", write, "", nil, 200})
	link, err := url.Parse(fmt.Sprint(pv.body["url"]))
	if err != nil {
		t.Fatal(err)
	}
	q1 := "?shop=" + url.QueryEscape(shop.Domain)
	preview := "/api/storefront/config" + q1 + "&preview=" + url.QueryEscape(link.Query().Get("lift_preview"))
	run(tourCall{"GET", preview, "", "", nil, 200}) // the draft's group, under "preview"
	run(tourCall{"POST", e + "/start", write, "", nil, 200})
	run(tourCall{"POST", e + "/pause", write, "", nil, 200})
	run(tourCall{"POST", e + "/resume", write, "", nil, 200})
	testID := created.body["id"]
	var tid int64
	fmt.Sscan(fmt.Sprint(testID), &tid)
	lifttest.PlantVisitors(t, s.app.Warehouse, shop.ID, tid, time.Now().UTC().Add(-24*time.Hour), 200, []float64{0.05, 0.09}, 40)
	if err := s.app.results().TakeSnapshot(t.Context(), shop.ID, tid, false); err != nil {
		t.Fatal(err)
	}
	run(tourCall{"GET", e + "/results", read, "", nil, 200})
	// results_summary's schema lists every field (additionalProperties false).
	run(tourCall{"GET", e + "?include=results_summary", read, "", nil, 200})
	q := run(tourCall{"POST", e + "/results", read, `{"breakdown":["device"],"sample_basis":"visitors"}`, nil, 202})
	run(tourCall{"GET", e + "/results/" + fmt.Sprint(q.body["id"]), read, "", nil, 200})
	ex := run(tourCall{"POST", e + "/exports", write, "", nil, 202})
	run(tourCall{"GET", "/v1/exports/" + fmt.Sprint(ex.body["id"]), read, "", nil, 200})
	run(tourCall{"POST", e + "/end", write, "", nil, 200})
	run(tourCall{"POST", e + "/archive", write, "", nil, 200})
	run(tourCall{"GET", "/v1/experiments/999999999", read, "", nil, 404})
	run(tourCall{"GET", "/v1/experiments", "", "", nil, 401})
	run(tourCall{"POST", "/v1/experiments", write, `{"type":"url_redirect"}`, nil, 422})
	run(tourCall{"POST", "/v1/experiments", write, `{"type":`, nil, 400})

	// The admin panel's session surface and admin tools.
	run(tourCall{"GET", "/api/experiments", session, "", nil, 200})
	run(tourCall{"GET", "/api/experiments/" + id, session, "", nil, 200})
	run(tourCall{"GET", "/api/experiments/999999999", session, "", nil, 404})
	run(tourCall{"GET", "/api/experiments", "not-a-jwt", "", nil, 401})
	run(tourCall{"PUT", "/api/experiments/" + id, session, `{"status":"PAUSED"}`, nil, 400})
	run(tourCall{"POST", "/api/experiments/" + id + "/duplicate", session, "", nil, 200})
	run(tourCall{"POST", "/api/redirect-experiments/create", session, `{"name":"x"}`, nil, 400})
	run(tourCall{"POST", "/api/get-order", "", fmt.Sprintf(`{"shop":%q,"orderId":"1"}`, shop.Domain), []string{"x-api-key", "admin"}, 404})
	an := `{"dateStart":"` + time.Now().UTC().AddDate(0, 0, -3).Format("2006-01-02") + `","dateFinish":"` + time.Now().UTC().Format("2006-01-02") + `"}`
	for _, view := range []string{"", "v1/", "v2/", "v1/storewide/", "v2/storewide/", "shipping/", "redirect/", "template/", "theme/", "checkout/"} {
		run(tourCall{"POST", "/api/analytics/" + view + id, session, an, nil, 200})
	}
	run(tourCall{"POST", "/api/analytics/timeseries/" + id, session, strings.TrimSuffix(an, "}") + `,"totalViews":[200,200]}`, nil, 200})
	run(tourCall{"POST", "/api/analytics/v1/" + id, session, `{"dateStart":"tomorrow"}`, nil, 400})
	run(tourCall{"GET", "/api/enable-script", "", "", []string{"x-api-key", "wrong"}, 401})

	// Storefront tracking, webhooks, install, operations.
	run(tourCall{"GET", "/api/get-session", "", "", nil, 200})
	run(tourCall{"GET", "/api/public/get-country-code", "", "", nil, 200})
	run(tourCall{"GET", "/api/observe/session" + q1 + "&sessionId=0b9f7c1e-2d4a-4f6b-9a8e-3c1d2e4f5a6b&experimentId=" + id, "", "", nil, 202})
	run(tourCall{"GET", "/api/observe" + q1 + "&productId=8101&experimentId=" + id, "", "", nil, 202})
	run(tourCall{"POST", "/api/track/event" + q1, "", `{"sessionId":"0b9f7c1e-2d4a-4f6b-9a8e-3c1d2e4f5a6b","visitorId":"v-1","eventType":"page_viewed","source":"script","createdAt":1764000000000,"experimentIds":["` + id + `"]}`, nil, 202})
	run(tourCall{"POST", "/api/track/event" + q1, "", `{"sessionId":"0b9f7c1e-2d4a-4f6b-9a8e-3c1d2e4f5a6b"}`, nil, 400})
	// As /lift.js sends it: text/plain.
	run(tourCall{"POST", "/api/track/assignment" + q1, "", `{"sessionId":"0b9f7c1e-2d4a-4f6b-9a8e-3c1d2e4f5a6b","visitorId":"v-1","experimentId":"` + id + `","testGroup":1,"createdAt":"2026-11-24T10:00:00Z"}`, []string{"Content-Type", "text/plain;charset=UTF-8"}, 200})
	run(tourCall{"GET", "/api/storefront/config" + q1, "", "", nil, 200})
	run(tourCall{"GET", preview, "", "", nil, 404}) // the test is archived now
	// Each 400 example of the storefront surface is the real answer to the
	// request its description names: nothing but shop (and {} as a body).
	for _, c := range []struct {
		call    tourCall
		example string // of the response's named examples; "" for its one example
	}{
		{tourCall{"GET", "/api/observe" + q1, "", "", nil, 400}, ""},
		{tourCall{"GET", "/api/observe/session" + q1, "", "", nil, 400}, ""},
		{tourCall{"POST", "/api/track/event" + q1, "", "{}", nil, 400}, ""},
		{tourCall{"POST", "/api/track/assignment" + q1, "", "{}", nil, 400}, ""},
		{tourCall{"POST", "/api/analytics/add-to-cart" + q1, "", "{}", nil, 400}, ""},
		{tourCall{"POST", "/api/analytics/checkout" + q1, "", "{}", nil, 400}, ""},
		{tourCall{"POST", "/api/analytics/order" + q1, "", "{}", nil, 400}, ""},
		{tourCall{"GET", "/api/ga4/metadata", "", "", nil, 400}, ""},
		{tourCall{"GET", "/api/storefront/config", "", "", nil, 400}, "missingShop"},
		{tourCall{"GET", "/api/storefront/config?shop=nope.myshopify.com", "", "", nil, 400}, "unknownShop"},
		{tourCall{"GET", "/api/storefront/config" + q1 + "&preview=1.1.1.x", "", "", nil, 400}, "invalidPreview"},
	} {
		got := run(c.call)
		if want := documentedExample(t, raw, c.call, "400", c.example); !sameJSON(want, got.raw) {
			t.Errorf("%s %s → %s; the document's example says %s", c.call.method, c.call.path, got.raw, want)
		}
	}
	run(tourCall{"GET", "/lift.js", "", "", nil, 200})
	run(tourCall{"HEAD", "/lift.js", "", "", nil, 200})
	run(tourCall{"HEAD", "/app/app.js", "", "", nil, 200})
	// A missing page or asset is the file server's plain text, as documented.
	run(tourCall{"GET", "/app/nope.js", "", "", nil, 404})
	run(tourCall{"GET", "/demo/nope", "", "", nil, 404})
	run(tourCall{"GET", "/api/ga4/metadata?experimentId=" + id + "&groupIndex=1", "", "", nil, 200})
	run(tourCall{"OPTIONS", "/api/track/event", "", "", []string{"Origin", "https://shop.example", "Access-Control-Request-Method", "POST"}, 204})
	body := `{"id":1}`
	run(tourCall{"POST", "/api/webhooks", "", body, []string{webhooks.HeaderSignature, "bad", webhooks.HeaderTopic, "SHOP_UPDATE", webhooks.HeaderShop, shop.Domain, webhooks.HeaderID, "d-1"}, 401})
	run(tourCall{"POST", "/api/webhooks", "", body, []string{webhooks.HeaderSignature, webhooks.Sign([]byte("hook"), []byte(body)), webhooks.HeaderTopic, "SHOP_UPDATE", webhooks.HeaderShop, shop.Domain, webhooks.HeaderID, "d-2"}, 200})
	sign := func(b string) []string {
		return []string{webhooks.HeaderSignature, webhooks.Sign([]byte("hook"), []byte(b)), webhooks.HeaderShop, shop.Domain}
	}
	rates := `{"rate":{"destination":{"country":"US"},"items":[{"quantity":1,"properties":{"_lift_assignments":"1:1"}}],"currency":"USD"}}`
	if r := run(tourCall{"POST", webhooks.RatesPath, "", rates, sign(rates), 200}); !strings.Contains(string(r.raw), `"total_price":"695"`) {
		t.Errorf("the demo's domestic zone's rates are not in %s", r.raw)
	}
	run(tourCall{"POST", webhooks.RatesPath, "", rates, []string{webhooks.HeaderSignature, "bad", webhooks.HeaderShop, shop.Domain}, 401})
	run(tourCall{"POST", webhooks.RatesPath, "", `{"rate":{}}`, sign(`{"rate":{}}`), 400})
	run(tourCall{"GET", "/api/auth", "", "", nil, 400})
	run(tourCall{"GET", "/healthz", "", "", nil, 200})
	run(tourCall{"GET", "/readyz", "", "", nil, 200})
	run(tourCall{"GET", "/docs/nope.js", "", "", nil, 404})

	if *updateExamples {
		// Keep what this tour does not call (hand-written, e.g. the v1
		// document's own small example).
		if old, err := os.ReadFile("../../api/apidoc/examples.json"); err == nil {
			var kept map[string]map[string]json.RawMessage
			json.Unmarshal(old, &kept)
			for id, ex := range kept {
				if examples[id] == nil {
					examples[id] = ex
				}
			}
		}
		b, _ := json.MarshalIndent(examples, "", "  ")
		if err := os.WriteFile("../../api/apidoc/examples.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// send makes c's request and returns the answer and the request it sent.
func (s *server) send(c tourCall) (reply, *http.Request) {
	s.t.Helper()
	req, err := http.NewRequest(c.method, s.url+c.path, strings.NewReader(c.body))
	if err != nil {
		s.t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", "Bearer "+c.auth)
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header.Set(c.header[i], c.header[i+1])
	}
	r := s.roundTrip(req)
	// The validator reads the request's body again.
	req.Body = io.NopCloser(strings.NewReader(c.body))
	return r, req
}

// opID finds the operationId the document gives c's method and path.
func opID(t *testing.T, raw []byte, c tourCall) string {
	var doc map[string]any
	json.Unmarshal(raw, &doc)
	path := strings.SplitN(c.path, "?", 2)[0]
	for _, o := range operations(doc) {
		if strings.EqualFold(o.method, c.method) && matchTemplate(o.path, path) {
			return o.op["operationId"].(string)
		}
	}
	t.Fatalf("no operation for %s %s", c.method, path)
	return ""
}

// documentedExample is the example the document gives c's operation for
// status: its one example, or the named one.
func documentedExample(t *testing.T, raw []byte, c tourCall, status, name string) json.RawMessage {
	t.Helper()
	var doc map[string]any
	json.Unmarshal(raw, &doc)
	path := strings.SplitN(c.path, "?", 2)[0]
	for _, o := range operations(doc) {
		if !strings.EqualFold(o.method, c.method) || !matchTemplate(o.path, path) {
			continue
		}
		resp, _ := o.op["responses"].(map[string]any)[status].(map[string]any)
		content, _ := resp["content"].(map[string]any)
		media, _ := content["application/json"].(map[string]any)
		ex := media["example"]
		if name != "" {
			named, _ := media["examples"].(map[string]any)[name].(map[string]any)
			ex = named["value"]
		}
		if ex == nil {
			t.Fatalf("%s %s: no %s example %q in the document", c.method, path, status, name)
		}
		return mustJSON(t, ex)
	}
	t.Fatalf("no operation for %s %s", c.method, path)
	return nil
}

// sameJSON: a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func matchTemplate(tmpl, path string) bool {
	a, b := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !strings.HasPrefix(a[i], "{") {
			return false
		}
	}
	return true
}

// record keeps the first request body and the first answer of each status.
func record(into map[string]map[string]json.RawMessage, id string, c tourCall, r reply) {
	m := into[id]
	if m == nil {
		m = map[string]json.RawMessage{}
		into[id] = m
	}
	if c.body != "" && m["request"] == nil && r.status < 300 {
		m["request"] = json.RawMessage(c.body)
	}
	code := fmt.Sprint(r.status)
	if _, has := m[code]; !has && json.Valid(r.raw) && len(r.raw) > 0 {
		m[code] = json.RawMessage(r.raw)
	}
}
