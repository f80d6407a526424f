package webhooks_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
)

// TestHeadersThatAreNotTextAreRefused: a shop domain or delivery id holding
// bytes Postgres cannot store reached the shop lookup or the delivery
// record and answered 500; now the delivery is a 400 and nothing is
// recorded.
func TestHeadersThatAreNotTextAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	body := `{"id":1,"name":"x","domain":"x.example"}`
	tests := []struct{ name, domain, id string }{
		{"InvalidUTF8InShop", "demo\xff.myshopify.com", "d-1"},
		{"InvalidUTF8InID", shop.Domain, "d-\xff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := b.deliver(t, &experiment.Shop{Domain: tc.domain}, experiment.TopicShopUpdate, tc.id, body, "")
			if status != http.StatusBadRequest || !strings.Contains(raw, `"status":"error"`) {
				t.Fatalf("got %d %s, want 400 in the session envelope", status, raw)
			}
			if _, err := b.db.FindDelivery(context.Background(), shop.ID, strings.ToValidUTF8(tc.id, "")); err == nil {
				t.Fatal("a refused delivery was recorded")
			}
		})
	}
}
