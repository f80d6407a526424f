package experiment

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzWebhookBodies feeds arbitrary delivery bodies through what Receive
// checks (checkWebhookBody) and then to the decoder of every topic and what
// each topic computes from the decoded body: no panic; a body a topic cannot
// use is unreadableBody (recorded, never retried), not an error that would
// retry the job; and a body Receive accepted yields names Postgres can store.
func FuzzWebhookBodies(f *testing.F) {
	for _, s := range []string{
		`{"id":820982911946154508,"created_at":"2026-06-01T10:00:00Z","total_price":"19.00","currency":"USD",` +
			`"note_attributes":[{"name":"_lift_visitor_id","value":"v-1"},{"name":"_lift_assignments","value":"42:1,57:0"}],` +
			`"line_items":[{"product_id":8101,"variant_id":"gid://shopify/ProductVariant/44001","quantity":2,"price":"9.50"}],` +
			`"refunds":[{"transactions":[{"kind":"refund","amount":"1.00","status":"success"}]}]}`,
		`{"id":"gid://shopify/Order/","total_price":1e400,"note_attributes":[{"name":"_lift_assignments","value":"42:1099511627776,:,9:-1"}]}`,
		`{"id":1,"line_items":[{"quantity":-9223372036854775808,"price":"-1e308"}]}`,
		`{"id":2,"note_attributes":[{"name":"_lift_assignments","value":"42:1"}],"shipping_lines":[{"price":"99999999999999.9999",` +
			`"discounted_price":null},{"price":"-5"}],"refunds":[{"order_adjustments":[{"kind":"shipping_refund","amount":"1e3"}]}]}`,
		`{"id":3,"shipping_lines":{},"refunds":[{"order_adjustments":null}]}`,
		`{"id":12,"name":"Dawn\u0000","role":"main","domain":"x\u0000.myshopify.com"}`,
		`{"id":12,"name":"Dawn\\u0000","role":"main"}`,
		`{"id":12,"name":"\ud800","role":"main"}`,
		"{\"id\":12,\"name\":\"\xff\",\"role\":\"main\"}",
		`{"inventory_item_id":null,"location_id":{},"available":1e30}`,
		`{"created_at":"2026-13-01T00:00:00Z"}`,
		`[]`, `null`, `"x"`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if checkWebhookBody(body) != nil {
			return // Receive's 400: never recorded
		}
		d := &WebhookDelivery{ShopID: 1, ID: "d-1", Body: body}
		readable := func(err error) bool {
			var u *unreadableBody
			if err != nil && !errors.As(err, &u) {
				t.Fatalf("decode error that is not unreadable: %v", err)
			}
			return err == nil
		}
		var o orderPayload
		if readable(decodeDelivery(d, &o)) {
			if r := o.revenue(); r.IsNegative() {
				t.Fatalf("revenue %s below zero from %s", r, body)
			}
			o.lines()
			parseAssignments(o.attribute(AttrAssignments))
		}
		var th themePayload
		if readable(decodeDelivery(d, &th)) {
			themeNumber(string(th.ID))
			storable(t, "theme name", th.Name)
		}
		var sh shopUpdatePayload
		if readable(decodeDelivery(d, &sh)) {
			storable(t, "shop name", sh.Name)
		}
		readable(decodeDelivery(d, &inventoryPayload{}))
	})
}

func storable(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		t.Fatalf("%s %q would fail Postgres on every try", what, s)
	}
}
