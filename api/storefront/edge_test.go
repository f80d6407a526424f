package storefront_test

import (
	"strings"
	"testing"

	"github.com/liftab/lift/api/storefront"
)

// TestShopThatIsNotTextIsRefused: a shop parameter (query or legacy body)
// holding bytes Postgres cannot store reached the shop lookup and answered
// 500; now it is a 400 naming shop, and nothing is tracked.
func TestShopThatIsNotTextIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *storefront.Config) { c.Metadata = staticMetadata{} })
	legacy := `{"shop":"SHOP","experimentId":"101","sessionId":"` + sessionID + `","productId":"7","testGroup":0}`
	tests := []struct {
		name, target, contentType, body, field string
	}{
		{"InvalidUTF8InQuery", storefront.PathTrackEvent + "?shop=demo%FF.myshopify.com", "text/plain", eventBody("e-1", "page_viewed", "101"), "shop"},
		{"NULInQuery", storefront.PathTrackAssign + "?shop=demo%00.myshopify.com", "application/json",
			`{"sessionId":"` + sessionID + `","visitorId":"v","experimentId":"101","testGroup":1,"createdAt":"2026-11-21T10:00:00Z"}`, "shop"},
		{"NULInLegacyBody", storefront.PathAddToCart, "application/json", strings.Replace(legacy, "SHOP", `demo\u0000.myshopify.com`, 1), "shop"},
		{"InvalidUTF8InObserve", storefront.PathObserve + "?shop=%C3%28&productId=7&experimentId=101", "", "", "shop"},
		{"ShopLongerThanAnyDomain", storefront.PathObserve + "?shop=" + strings.Repeat("a", 300) + ".myshopify.com&productId=7&experimentId=101", "", "", "shop must be a shop domain"},
		{"NULInMetadataExperiment", storefront.PathGA4Metadata + "?experimentId=1%00&groupIndex=0", "", "", "experimentId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := "POST"
			if tc.body == "" {
				method = "GET"
			}
			wantError(t, b.do(t, method, tc.target, tc.contentType, tc.body), 400, tc.field)
		})
	}
	if n := b.in.Stats().Appended; n != 0 {
		t.Fatalf("refused requests appended %d rows", n)
	}
}
