package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/store"
)

// TestSessionAPIWired: lift serve mounts the admin panel's session API with
// the configured platform key and secret, on the same service as /v1, with
// reset analytics erasing through the warehouse, and the admin tools behind
// admin.api_key.
func TestSessionAPIWired(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(c *config.Config) {
		c.Platform.APIKey, c.Platform.APISecret, c.Admin.APIKey = "key", "secret", "admin"
	})
	shop, read, _ := s.shop(true)
	features, yes := []string{"price"}, true
	if _, err := s.app.DB.UpdateShop(t.Context(), shop.ID, store.ShopUpdate{Features: &features, SubscriptionActive: &yes}); err != nil {
		t.Fatal(err)
	}
	tok := sessionToken(t, shop.Domain)
	body := `{"name":"Wired","products":[{"productId":"8101","variants":[{"variantId":"44001","price":"19.00"}]}],
		"testGroups":[{"name":"Control","weight":50},{"name":"Variant","weight":50}]}`
	if r := s.do("POST", "/api/price-experiments/v1/create", tok, body); r.status != 200 || string(r.raw) != `"success"` {
		t.Fatalf("session create = %d %s", r.status, r.raw)
	}
	r := s.do("GET", "/v1/experiments", read, "")
	items, _ := r.body["data"].([]any)
	if r.status != 200 || len(items) != 1 {
		t.Fatalf("v1 list = %d %s", r.status, r.raw)
	}
	id := items[0].(map[string]any)["id"].(string)
	if r := s.do("POST", "/api/experiments/reset-analytics/"+id, tok, ""); r.status != 200 {
		t.Fatalf("reset analytics = %d %s", r.status, r.raw)
	}
	if r := s.do("GET", "/api/experiments", "wrong", ""); r.status != http.StatusUnauthorized || r.body["status"] != "error" {
		t.Fatalf("bad token = %d %s", r.status, r.raw)
	}
	order := fmt.Sprintf(`{"shop":%q,"orderId":"1"}`, shop.Domain)
	if r := s.do("POST", "/api/get-order", "", order, "x-api-key", "admin"); r.status != http.StatusNotFound || r.body["status"] != "error" {
		t.Fatalf("get-order of an unknown order = %d %s", r.status, r.raw)
	}
	if r := s.do("POST", "/api/get-order", "", order, "x-api-key", "nope"); r.status != http.StatusUnauthorized {
		t.Fatalf("get-order with a wrong key = %d %s", r.status, r.raw)
	}
}
