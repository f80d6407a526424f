package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// TestMCPStartRefusesAFreeProduct: MCP creates no tests, so what reaches it
// of the content rules is a launch, which re-runs them on today's catalog.
// An offer test stored before the rule that no price becomes zero (session
// audit 2, F6), on a product or on a collection, is refused by start_test
// with v1's code and message, as v1 itself refuses it, and stays a draft.
func TestMCPStartRefusesAFreeProduct(t *testing.T) {
	s := newServer(t)
	shop, _, write := s.shop(true)
	features, active := []string{"offer"}, true
	if _, err := s.app.DB.UpdateShop(context.Background(), shop.ID, store.ShopUpdate{Features: &features, SubscriptionActive: &active}); err != nil {
		t.Fatal(err)
	}
	// experiment/catalogdata/demo.json: the sweater costs 98.00; Tops'
	// cheapest item 28.00, Accessories' (socks, S/M) 22.00.
	const sweater, tops, accessories = "gid://shopify/Product/8102", "gid://shopify/Collection/301", "gid://shopify/Collection/302"
	cs := httpSession(t, s, write)
	for _, tc := range []struct {
		name, discount, conditions string
		want                       []string
	}{
		{"Product", `{"type":"fixed_amount","value":"500"}`, fmt.Sprintf(`{"product_ids":[%q]}`, sweater),
			[]string{`Test group "Variant" takes 500 off product Merino Crew Sweater (` + sweater + `)`, "costs 98.00", "above zero"}},
		{"Collection", `{"type":"fixed_amount","value":"25.00"}`, fmt.Sprintf(`{"collection_ids":[%q,%q]}`, tops, accessories),
			[]string{`Test group "Variant" takes 25.00 off collection Accessories (` + accessories + `)`,
				"cheapest variant (S/M) of product Recycled Running Sock (3-pack) (gid://shopify/Product/8107) costs 22.00", "above zero"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := putStoredOffer(t, s, shop.ID, fmt.Sprintf(`{"offers":[{"key":"price-change","title":"Variant","discount":%s,"conditions":%s}]}`,
				tc.discount, tc.conditions))
			texts, isErr := call(t, cs, "start_test", map[string]any{"id": id})
			if !isErr || len(texts) == 0 || !strings.HasPrefix(texts[0], "invalid_configuration: ") {
				t.Fatalf("start_test: error=%v %v, want a tool error invalid_configuration", isErr, texts)
			}
			for _, w := range tc.want {
				if !strings.Contains(texts[0], w) {
					t.Errorf("start_test says %q, not %q", texts[0], w)
				}
			}

			r := s.do("POST", "/v1/experiments/"+id+"/start", write, "")
			if r.status != 422 || r.errField("type") != "validation_error" || r.errField("code") != "invalid_configuration" ||
				r.errField("param") != "test_groups[1].content.offers[0].discount.value" {
				t.Fatalf("v1 start: %d %s", r.status, r.raw)
			}
			if msg, _ := r.errField("message").(string); !strings.HasPrefix(texts[0], "invalid_configuration: "+msg) {
				t.Errorf("MCP and v1 differ:\n%s\n%s", texts[0], msg)
			}
			if got := s.do("GET", "/v1/experiments/"+id, write, ""); got.status != 200 || got.body["status"] != "draft" {
				t.Fatalf("after the refused starts: %d %s", got.status, got.raw)
			}
		})
	}
}

// putStoredOffer stores a draft offer test whose group "Variant" holds
// content, as a test saved before today's rules, and returns its id.
func putStoredOffer(t *testing.T, s *server, shopID int64, content string) string {
	t.Helper()
	now := time.Now().UTC()
	tt := &experiment.Test{ShopID: shopID, Type: experiment.TypeOffer, Status: experiment.StatusDraft, Name: "Stored before F6",
		TrafficAllocation: 100, AssignmentVersion: 1, Bucketing: experiment.CurrentBucketing, Shared: map[string]json.RawMessage{},
		Groups: []experiment.Group{{Index: 0, Name: "Control", Split: 50, Content: json.RawMessage(`{}`)},
			{Index: 1, Name: "Variant", Split: 50, Content: json.RawMessage(content)}},
		CreatedAt: now, UpdatedAt: now}
	lifttest.PutTest(t, s.app.DB, tt)
	return strconv.FormatInt(tt.ID, 10)
}
