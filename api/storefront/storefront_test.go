package storefront_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api/storefront"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/ingest"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

const (
	shopDomain   = "demo-shop.myshopify.com"
	goneDomain   = "gone-shop.myshopify.com"
	sessionID    = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	browserAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	googlebotUA  = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	pollDeadline = 20 * time.Second
)

// bundle is one test's world: a Postgres shop, a ClickHouse database, an
// ingester with its own WAL and the surface mounted on a gin engine.
type bundle struct {
	srv  http.Handler
	h    *storefront.Handler
	wh   *warehouse.Warehouse
	shop *experiment.Shop
	in   *ingest.Ingester
}

// staticMetadata is a metadata source with fixed answers, so the surface's
// found and not-found paths are tested apart from the store (cmd/lift's
// TestAnalyticsMetadata runs them on the real store).
type staticMetadata map[string]storefront.AnalyticsMetadata

func (m staticMetadata) FindAnalyticsMetadata(_ context.Context, id string, group int) (*storefront.AnalyticsMetadata, error) {
	md, ok := m[fmt.Sprintf("%s/%d", id, group)]
	if !ok {
		return nil, experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "no test %s", id)
	}
	return &md, nil
}

func setup(t testing.TB, opts ...func(*storefront.Config)) *bundle {
	t.Helper()
	return build(t, func(addr string) string { return addr }, opts...)
}

// build is setup with the ClickHouse address passed through route (the
// outage test puts a proxy in between).
func build(t testing.TB, route func(string) string, opts ...func(*storefront.Config)) *bundle {
	t.Helper()
	return buildWith(t, route, func(*ingest.Config) {}, opts...)
}

// buildWith is build with the ingester's configuration adjusted by tune.
func buildWith(t testing.TB, route func(string) string, tune func(*ingest.Config), opts ...func(*storefront.Config)) *bundle {
	t.Helper()
	ctx := context.Background()
	db := lifttest.DB(t)
	shop, err := db.CreateShop(ctx, experiment.Shop{Domain: shopDomain, Name: "Demo", Timezone: "Europe/Berlin", Currency: "EUR", Plan: "pro"})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := db.CreateShop(ctx, experiment.Shop{Domain: goneDomain, Name: "Gone", Timezone: "UTC", Currency: "USD", Plan: "pro"})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if _, err := db.UpdateShop(ctx, gone.ID, store.ShopUpdate{Uninstalled: &yes}); err != nil {
		t.Fatal(err)
	}
	addr, database := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: route(addr), Database: database, ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	icfg := ingest.Config{Dir: t.TempDir(), FlushInterval: 50 * time.Millisecond,
		RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, InsertTimeout: 5 * time.Second}
	tune(&icfg)
	in, err := ingest.New(icfg, wh)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		in.Close(ctx)
	})
	cfg := storefront.Config{Ingester: in, Shops: db}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := storefront.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.TestMode)
	r := gin.New()
	h.Mount(r)
	return &bundle{srv: r, h: h, wh: wh, shop: shop, in: in}
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (b *bundle) do(t *testing.T, method, target, contentType, body string, header ...string) response {
	t.Helper()
	return b.send(t, "", method, target, contentType, body, header...)
}

// doFrom is a body-less request from a given client address.
func (b *bundle) doFrom(t *testing.T, remote, method, target string, header ...string) response {
	t.Helper()
	return b.send(t, remote, method, target, "", "", header...)
}

func (b *bundle) send(t *testing.T, remote, method, target, contentType, body string, header ...string) response {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if remote != "" {
		req.RemoteAddr = remote
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", browserAgent)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	b.srv.ServeHTTP(w, req)
	raw, _ := io.ReadAll(w.Body)
	resp := response{status: w.Code, header: w.Header(), raw: string(raw)}
	json.Unmarshal(raw, &resp.body)
	return resp
}

// count polls a ClickHouse count until it equals want or the deadline passes.
func (b *bundle) count(t *testing.T, want uint64, query string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	var got uint64
	for {
		row := b.wh.Conn().QueryRow(context.Background(), query, args...)
		if err := row.Scan(&got); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if got == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling ClickHouse; the flush interval is 50 ms
	}
	if got != want {
		t.Fatalf("%s = %d, want %d", query, got, want)
	}
}

func wantError(t *testing.T, r response, status int, field string) {
	t.Helper()
	if r.status != status || r.body["status"] != "error" {
		t.Fatalf("status %d body %s, want %d error envelope", r.status, r.raw, status)
	}
	msg, _ := r.body["message"].(string)
	if !strings.Contains(msg, field) {
		t.Fatalf("message %q does not name %q", msg, field)
	}
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("error response without CORS header")
	}
}

func eventBody(eventID, eventType string, experimentIDs ...string) string {
	ids, _ := json.Marshal(experimentIDs)
	if experimentIDs == nil {
		ids = []byte("[]")
	}
	return fmt.Sprintf(`{"eventId":%q,"sessionId":%q,"visitorId":"v-1","eventType":%q,"source":"webpixel",
		"createdAt":"2026-11-21T10:00:00Z","experimentIds":%s,"pagePath":"/products/shoe",
		"payload":{"productIds":["gid://shopify/Product/7"],"variantIds":["70"],"quantity":2}}`,
		eventID, sessionID, eventType, ids)
}

func TestTrackEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, ct := range []string{"application/json", "text/plain;charset=UTF-8"} {
		id := "ev-" + strings.SplitN(ct, "/", 2)[0]
		r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, ct, eventBody(id, "product_added_to_cart", "101", "102"))
		if r.status != http.StatusAccepted || r.body["accepted"] != true {
			t.Fatalf("%s: status %d body %s, want 202 accepted", ct, r.status, r.raw)
		}
	}
	// Two events × two experiments = four rows; each event id once per test.
	b.count(t, 4, "SELECT count() FROM events WHERE shop_id = ?", b.shop.ID)
	var (
		productIDs []string
		quantity   uint32
		path       string
		bot        uint8
	)
	row := b.wh.Conn().QueryRow(context.Background(),
		"SELECT product_ids, quantity, page_path, is_bot FROM events WHERE event_id = 'ev-text' AND experiment_id = '102'")
	if err := row.Scan(&productIDs, &quantity, &path, &bot); err != nil {
		t.Fatal(err)
	}
	if len(productIDs) != 1 || productIDs[0] != "7" || quantity != 2 || path != "/products/shoe" || bot != 0 {
		t.Errorf("row = %v %d %q %d", productIDs, quantity, path, bot)
	}
}

func TestTrackEventReplayedIDCountsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 3 { // a beacon retried by the browser
		if r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, "text/plain", eventBody("same-id", "checkout_completed", "101")); r.status != http.StatusAccepted {
			t.Fatalf("status %d %s", r.status, r.raw)
		}
	}
	b.count(t, 3, "SELECT count() FROM events WHERE shop_id = ?", b.shop.ID)
	b.count(t, 1, "SELECT uniqExact(event_id) FROM events WHERE shop_id = ?", b.shop.ID)
	b.count(t, 1, "SELECT count() FROM events FINAL WHERE shop_id = ?", b.shop.ID)
}

func TestTrackEventBotIsStoredAndMarked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, "application/json", eventBody("bot-1", "page_viewed"), "User-Agent", googlebotUA)
	if r.status != http.StatusAccepted {
		t.Fatalf("status %d %s", r.status, r.raw)
	}
	b.count(t, 1, "SELECT count() FROM events WHERE shop_id = ? AND is_bot = 1 AND experiment_id = ''", b.shop.ID)
}

func TestTrackEventRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	valid := eventBody("x", "page_viewed", "101")
	tests := []struct {
		name, target, ct, body, field string
	}{
		{"MissingShop", "/api/track/event", "application/json", valid, "shop"},
		{"UnknownShop", "/api/track/event?shop=nope.myshopify.com", "application/json", valid, "shop"},
		{"UninstalledShop", "/api/track/event?shop=" + goneDomain, "application/json", valid, "shop"},
		{"EmptyBody", "/api/track/event?shop=" + shopDomain, "application/json", "", "body"},
		{"NotJSON", "/api/track/event?shop=" + shopDomain, "text/plain", "eventType=x", "body"},
		{"WrongContentType", "/api/track/event?shop=" + shopDomain, "application/x-www-form-urlencoded", valid, "Content-Type"},
		{"BodyTooLarge", "/api/track/event?shop=" + shopDomain, "application/json", `{"pad":"` + strings.Repeat("x", 70<<10) + `"}`, "body"},
		{"WrongType", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, `"visitorId":"v-1"`, `"visitorId":7`, 1), "visitorId"},
		{"MissingSession", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, sessionID, "", 1), "sessionId"},
		{"SessionNotUUID", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, sessionID, "s-1", 1), "sessionId"},
		{"UnknownSource", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, "webpixel", "email", 1), "source"},
		{"BadCreatedAt", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, "2026-11-21T10:00:00Z", "last tuesday", 1), "createdAt"},
		{"CreatedAtSeconds", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, `"2026-11-21T10:00:00Z"`, "1795258800", 1), "createdAt"},
		{"MissingExperimentIDs", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, `"experimentIds":["101"],`, "", 1), "experimentIds"},
		{"PagePathTooLong", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, "/products/shoe", "/"+strings.Repeat("p", 2000), 1), "pagePath"},
		{"PayloadTooLarge", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, `"quantity":2`, `"quantity":2,"pad":"`+strings.Repeat("x", 10<<10)+`"`, 1), "payload"},
		{"BadEventType", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, "page_viewed", "Page Viewed", 1), "eventType"},
		{"CustomNameTooLong", "/api/track/event?shop=" + shopDomain, "application/json", strings.Replace(valid, "page_viewed", "lift:custom_event:"+strings.Repeat("n", 78), 1), "eventType"},
		{"CustomWithoutAssignment", "/api/track/event?shop=" + shopDomain, "application/json", eventBody("c", "lift:custom_event:quiz"), "experimentIds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, b.do(t, "POST", tc.target, tc.ct, tc.body), http.StatusBadRequest, tc.field)
		})
	}
	// A body labelled compressed is not read as JSON whatever its bytes.
	wantError(t, b.send(t, "", "POST", "/api/track/event?shop="+shopDomain, "application/json", valid, "Content-Encoding", "gzip"),
		http.StatusBadRequest, "Content-Encoding")
	// Nothing half-written: a valid event after the refusals is the only row.
	if r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, "application/json", valid); r.status != http.StatusAccepted {
		t.Fatalf("valid event: %d %s", r.status, r.raw)
	}
	b.count(t, 1, "SELECT count() FROM events")
}

func TestCustomEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "POST", "/api/track/event?shop="+shopDomain, "application/json", eventBody("c-1", "svc:custom_event:quiz:step/2.done", "101"))
	if r.status != http.StatusAccepted {
		t.Fatalf("status %d %s", r.status, r.raw)
	}
	b.count(t, 1, "SELECT count() FROM events WHERE custom_name = 'quiz:step/2.done' AND experiment_id = '101'")
}

func assignmentBody(visitor string, group int) string {
	return fmt.Sprintf(`{"sessionId":%q,"visitorId":%q,"experimentId":"101","testGroup":%d,
		"createdAt":1795258800000,"assignmentReason":"random_split","country":"de","device":"mobile",
		"visitorType":"new","utmSource":"newsletter","utmMedium":"email","utmCampaign":"bf","gclid":"g-1"}`,
		sessionID, visitor, group)
}

func TestTrackAssignmentFirstStands(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.do(t, "POST", "/api/track/assignment?shop="+shopDomain, "application/json", assignmentBody("v-9", 1))
	if first.status != http.StatusOK || first.body["success"] != true || first.body["assignmentId"] == "" {
		t.Fatalf("status %d body %s", first.status, first.raw)
	}
	second := b.do(t, "POST", "/api/track/assignment?shop="+shopDomain, "text/plain", assignmentBody("v-9", 0))
	if second.status != http.StatusOK || second.body["assignmentId"] != first.body["assignmentId"] {
		t.Fatalf("second assignment %s, want the same assignmentId as %s", second.raw, first.raw)
	}
	b.count(t, 2, "SELECT count() FROM assignments")
	b.count(t, 1, "SELECT toUInt64(argMax(test_group, version)) FROM assignments WHERE visitor_id = 'v-9'")
	b.count(t, 1, "SELECT toUInt64(any(test_group)) FROM assignments FINAL WHERE visitor_id = 'v-9'")
	b.count(t, 1, "SELECT count() FROM assignments FINAL WHERE country = 'DE' AND device = 'mobile' AND utm_campaign = 'bf' AND gclid = 'g-1' AND is_bot = 0")
}

func TestTrackAssignmentRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	valid := assignmentBody("v", 1)
	tests := []struct{ name, target, body, field string }{
		{"UnknownShop", "/api/track/assignment?shop=nope.myshopify.com", valid, "shop"},
		{"GroupBelowMinusOne", "/api/track/assignment?shop=" + shopDomain, strings.Replace(valid, `"testGroup":1`, `"testGroup":-2`, 1), "testGroup"},
		{"GroupMissing", "/api/track/assignment?shop=" + shopDomain, strings.Replace(valid, `"testGroup":1,`, ``, 1), "testGroup"},
		{"BadReason", "/api/track/assignment?shop=" + shopDomain, strings.Replace(valid, "random_split", "luck", 1), "assignmentReason"},
		{"BadCountry", "/api/track/assignment?shop=" + shopDomain, strings.Replace(valid, `"de"`, `"deu"`, 1), "country"},
		{"BadDevice", "/api/track/assignment?shop=" + shopDomain, strings.Replace(valid, "mobile", "fridge", 1), "device"},
		{"BadVisitorType", "/api/track/assignment?shop=" + shopDomain, strings.Replace(valid, `"new"`, `"old"`, 1), "visitorType"},
		{"MissingExperiment", "/api/track/assignment?shop=" + shopDomain, strings.Replace(valid, `"experimentId":"101",`, ``, 1), "experimentId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, b.do(t, "POST", tc.target, "application/json", tc.body), http.StatusBadRequest, tc.field)
		})
	}
	// An excluded visitor (-1) is a valid assignment.
	if r := b.do(t, "POST", "/api/track/assignment?shop="+shopDomain, "application/json", strings.Replace(valid, `"testGroup":1`, `"testGroup":-1`, 1)); r.status != http.StatusOK {
		t.Fatalf("excluded: %d %s", r.status, r.raw)
	}
	b.count(t, 1, "SELECT count() FROM assignments WHERE test_group = -1")
}

func TestObserve(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, "GET", "/api/observe?shop="+shopDomain+"&productId=gid://shopify/Product/55&experimentId=101&sessionId="+sessionID, "", "")
	if r.status != http.StatusAccepted {
		t.Fatalf("status %d %s", r.status, r.raw)
	}
	b.count(t, 1, "SELECT count() FROM page_views WHERE product_id = '55' AND experiment_id = '101' AND session_id = ?", sessionID)
	for _, tc := range []struct{ name, query, field string }{
		{"MissingShop", "productId=1&experimentId=101", "shop"},
		{"MissingProduct", "shop=" + shopDomain + "&experimentId=101", "productId"},
		{"MissingExperiment", "shop=" + shopDomain + "&productId=1", "experimentId"},
		{"ProductNotNumeric", "shop=" + shopDomain + "&productId=shoe&experimentId=101", "productId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, b.do(t, "GET", "/api/observe?"+tc.query, "", ""), http.StatusBadRequest, tc.field)
		})
	}
}

func TestObserveSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := "/api/observe/session?shop=" + shopDomain + "&sessionId=" + sessionID + "&experimentId=101&pagePath=/landing&device=tablet&country=fr&utmSource=ads"
	for range 2 { // two page loads
		if r := b.do(t, "GET", q, "", ""); r.status != http.StatusAccepted {
			t.Fatalf("status %d %s", r.status, r.raw)
		}
	}
	b.count(t, 2, "SELECT uniqExact(record_id) FROM sessions WHERE session_id = ? AND country = 'FR' AND device = 'tablet' AND page_path = '/landing'", sessionID)
	for _, tc := range []struct{ name, query, field string }{
		{"MissingSession", "shop=" + shopDomain + "&experimentId=101", "sessionId"},
		{"SessionNotUUID", "shop=" + shopDomain + "&experimentId=101&sessionId=abc", "sessionId"},
		{"MissingExperiment", "shop=" + shopDomain + "&sessionId=" + sessionID, "experimentId"},
		{"UnknownShop", "shop=x.myshopify.com&experimentId=1&sessionId=" + sessionID, "shop"},
		{"BadDevice", "shop=" + shopDomain + "&experimentId=1&device=car&sessionId=" + sessionID, "device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, b.do(t, "GET", "/api/observe/session?"+tc.query, "", ""), http.StatusBadRequest, tc.field)
		})
	}
}

func TestLegacyEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ok := []struct{ path, body string }{
		{"/api/analytics/add-to-cart", `{"shop":"` + shopDomain + `","experimentId":"101","sessionId":"` + sessionID + `","productId":"12","testGroup":1}`},
		{"/api/analytics/checkout", `{"shop":"` + shopDomain + `","experimentId":"101","sessionId":"` + sessionID + `","testGroup":1,"revenue":59.5}`},
		{"/api/analytics/order", `{"shop":"` + shopDomain + `","experimentId":"101","orderId":"9001","testGroup":1,"revenue":59.5}`},
	}
	for _, c := range ok {
		if r := b.do(t, "POST", c.path, "text/plain", c.body); r.status != http.StatusAccepted || r.body["accepted"] != true {
			t.Fatalf("%s: status %d %s", c.path, r.status, r.raw)
		}
	}
	b.count(t, 1, "SELECT count() FROM events WHERE event_type = 'product_added_to_cart' AND source = 'legacy' AND test_group = 1 AND product_ids = ['12']")
	b.count(t, 1, "SELECT count() FROM events WHERE event_type = 'checkout_started' AND revenue = 59.5")
	b.count(t, 1, "SELECT count() FROM orders WHERE order_id = '9001' AND revenue = toDecimal64('59.5', 4) AND test_group = 1 AND source = 'legacy'")
	for _, tc := range []struct{ name, path, body, field string }{
		{"AddToCartNoProduct", "/api/analytics/add-to-cart", `{"shop":"` + shopDomain + `","experimentId":"1","sessionId":"` + sessionID + `","testGroup":0}`, "productId"},
		{"CheckoutNoRevenue", "/api/analytics/checkout", `{"shop":"` + shopDomain + `","experimentId":"1","sessionId":"` + sessionID + `","testGroup":0}`, "revenue"},
		{"OrderNoGroup", "/api/analytics/order", `{"shop":"` + shopDomain + `","experimentId":"1","orderId":"5","revenue":1}`, "testGroup"},
		{"OrderUnknownShop", "/api/analytics/order", `{"shop":"x.myshopify.com","experimentId":"1","orderId":"5","testGroup":0,"revenue":1}`, "shop"},
		{"OrderNoShop", "/api/analytics/order", `{"experimentId":"1","orderId":"5","testGroup":0,"revenue":1}`, "shop"},
		{"OrderInAnotherCurrency", "/api/analytics/order", `{"shop":"` + shopDomain + `","experimentId":"1","orderId":"5","testGroup":0,"revenue":1,"currency":"E12"}`, "currency must be the shop's currency"},
		{"RevenueNotNumber", "/api/analytics/order", `{"shop":"` + shopDomain + `","experimentId":"1","orderId":"5","testGroup":0,"revenue":"lots"}`, "revenue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, b.do(t, "POST", tc.path, "application/json", tc.body), http.StatusBadRequest, tc.field)
		})
	}
}

func TestGetSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r1, r2 := b.do(t, "GET", "/api/get-session", "", ""), b.do(t, "GET", "/api/get-session", "", "")
	id, _ := r1.body["sessionId"].(string)
	if r1.status != http.StatusOK || len(id) != 36 || id == r2.body["sessionId"] {
		t.Fatalf("get-session: %d %s / %s", r1.status, r1.raw, r2.raw)
	}
	// The id it hands out is accepted by observe/session.
	if r := b.do(t, "GET", "/api/observe/session?shop="+shopDomain+"&experimentId=1&sessionId="+id, "", ""); r.status != http.StatusAccepted {
		t.Fatalf("observe/session with issued id: %d %s", r.status, r.raw)
	}
}

func TestCountryCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name   string
		header []string
		want   any
	}{
		{"Cloudflare", []string{"CF-IPCountry", "de"}, "DE"},
		{"GenericHeader", []string{"X-Country-Code", "FR"}, "FR"},
		{"UnknownCountryHeader", []string{"CF-IPCountry", "XX"}, nil},
		{"NoHeaderNoDatabase", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(t, "GET", "/api/public/get-country-code", "", "", tc.header...)
			if r.status != http.StatusOK {
				t.Fatalf("status %d", r.status)
			}
			if got, present := r.body["countryCode"]; !present || got != tc.want {
				t.Fatalf("body %s, want countryCode %v", r.raw, tc.want)
			}
		})
	}
}

func TestGA4Metadata(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *storefront.Config) {
		c.Metadata = staticMetadata{"101/1": {ExperimentID: "101", ExperimentName: "Free shipping", VariantID: 1,
			VariantName: "Variant A", AnalyticsMeasurementID: "G-TEST123"}}
	})
	tests := []struct {
		name   string
		query  string
		status int
		want   string
	}{
		{"Found", "experimentId=101&groupIndex=1", 200, `{"found":true,"experimentId":"101","experimentName":"Free shipping","variantId":1,"variantName":"Variant A","analyticsMeasurementId":"G-TEST123"}`},
		{"NotFound", "experimentId=101&groupIndex=2", 200, `{"found":false,"analyticsMeasurementId":""}`},
		{"UnknownTest", "experimentId=999&groupIndex=0", 200, `{"found":false,"analyticsMeasurementId":""}`},
		{"MissingExperiment", "groupIndex=1", 400, "experimentId"},
		{"MissingGroup", "experimentId=101", 400, "groupIndex"},
		{"NegativeGroup", "experimentId=101&groupIndex=-1", 400, "groupIndex"},
		{"GroupNotInteger", "experimentId=101&groupIndex=1.5", 400, "groupIndex"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(t, "GET", "/api/ga4/metadata?"+tc.query, "", "")
			if tc.status != 200 {
				wantError(t, r, tc.status, tc.want)
				return
			}
			if r.status != 200 || r.raw != tc.want {
				t.Fatalf("got %d %s, want %s", r.status, r.raw, tc.want)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/api/track/event", "/api/track/assignment", "/api/analytics/order", "/api/observe"} {
		t.Run(path, func(t *testing.T) {
			r := b.do(t, "OPTIONS", path+"?shop="+shopDomain, "", "", "Origin", "https://demo-shop.com",
				"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
			if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.Contains(r.header.Get("Access-Control-Allow-Methods"), "POST") ||
				r.header.Get("Access-Control-Allow-Headers") != "content-type" {
				t.Fatalf("preflight: %d %v", r.status, r.header)
			}
		})
	}
}
