package storefront_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/liftab/lift/api/storefront"
)

// FuzzTrackingHTTP sends arbitrary shop parameters, media types and bodies
// to the tracking endpoints of the real surface (Postgres shops, ingester
// with its WAL, ClickHouse): no 5xx, the session envelope on a refusal, and
// nothing appended to the WAL on a refusal.
func FuzzTrackingHTTP(f *testing.F) {
	event := eventBody("fz-1", "page_viewed", "101")
	assignment := `{"sessionId":"` + sessionID + `","visitorId":"v-1","experimentId":"101","testGroup":1,"createdAt":"2026-11-21T10:00:00Z"}`
	legacy := `{"shop":"` + shopDomain + `","experimentId":"101","sessionId":"` + sessionID + `","productId":"7","orderId":9,"testGroup":0,"revenue":12.5}`
	for _, sd := range []struct {
		route             uint8
		shop, contentType string
		body              string
	}{
		{0, shopDomain, "text/plain", event},
		{0, "demo\xff.myshopify.com", "text/plain", event},
		{0, "demo\x00.myshopify.com", "application/json", event},
		{0, shopDomain, "application/json", strings.Replace(event, `"v-1"`, `"v\u0000"`, 1)},
		{0, shopDomain, "application/json", strings.Replace(event, `"/products/shoe"`, `"`+strings.Repeat("p", 2001)+`"`, 1)},
		{1, shopDomain, "application/json", assignment},
		{1, shopDomain, "application/json", strings.Replace(assignment, `"testGroup":1`, `"testGroup":1099511627776`, 1)},
		{2, "", "application/json", legacy},
		{3, "", "application/json", strings.Replace(legacy, shopDomain, "x\\u0000", 1)},
		{4, "", "text/plain", strings.Replace(legacy, shopDomain, "\xff", 1)},
		{5, shopDomain, "", "experimentId=101&groupIndex=1099511627776"},
		{5, shopDomain, "", "experimentId=%00&groupIndex=0"},
		{6, "\xff", "", "productId=7&experimentId=101"},
		{7, shopDomain, "", "sessionId=" + sessionID + "&experimentId=%FF"},
	} {
		f.Add(sd.route, sd.shop, sd.contentType, []byte(sd.body))
	}
	b := setup(f, func(c *storefront.Config) { c.Metadata = staticMetadata{} })
	paths := []string{storefront.PathTrackEvent, storefront.PathTrackAssign, storefront.PathAddToCart,
		storefront.PathCheckout, storefront.PathOrder, storefront.PathGA4Metadata, storefront.PathObserve, storefront.PathObserveSess}
	f.Fuzz(func(t *testing.T, route uint8, shop, contentType string, body []byte) {
		path := paths[int(route)%len(paths)]
		method, target := "POST", path+"?shop="+url.QueryEscape(shop)
		var reqBody string
		if strings.HasPrefix(path, "/api/observe") || path == storefront.PathGA4Metadata {
			q, err := url.ParseQuery(string(body))
			if err != nil {
				return
			}
			q.Set("shop", shop)
			method, target = "GET", path+"?"+q.Encode()
		} else {
			reqBody = string(body)
		}
		req := httptest.NewRequest(method, target, strings.NewReader(reqBody))
		if contentType != "" {
			req.Header["Content-Type"] = []string{contentType}
		}
		before := b.in.Stats().Appended
		w := httptest.NewRecorder()
		b.srv.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		if w.Code < 400 {
			return
		}
		var env struct{ Status, Message string }
		if json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Status != "error" || env.Message == "" {
			t.Fatalf("%d without the session envelope: %s", w.Code, w.Body)
		}
		if after := b.in.Stats().Appended; after != before && w.Code != http.StatusOK {
			t.Fatalf("refused with %d, yet %d rows were appended", w.Code, after-before)
		}
	})
}
