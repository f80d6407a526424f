package jobs

import (
	"errors"
	"math"
	"testing"

	"github.com/liftab/lift/store"
)

// FuzzWebhookBodies feeds arbitrary delivery bodies to the decoders of
// every webhook topic and to what each topic computes from the decoded
// body: no panic, and a body a topic cannot use is *unreadable (recorded,
// never retried), not an error that would retry the job forever.
func FuzzWebhookBodies(f *testing.F) {
	for _, s := range []string{
		`{"id":820982911946154508,"created_at":"2026-06-01T10:00:00Z","total_price":"19.00","currency":"USD",` +
			`"note_attributes":[{"name":"_lift_visitor_id","value":"v-1"},{"name":"_lift_assignments","value":"42:1,57:0"}],` +
			`"line_items":[{"product_id":8101,"variant_id":"gid://shopify/ProductVariant/44001","quantity":2,"price":"9.50"}],` +
			`"refunds":[{"transactions":[{"kind":"refund","amount":"1.00","status":"success"}]}]}`,
		`{"id":"gid://shopify/Order/","total_price":1e400,"note_attributes":[{"name":"_lift_assignments","value":"42:1099511627776,:,9:-1"}]}`,
		`{"id":1,"line_items":[{"quantity":-9223372036854775808,"price":"-1e308"}]}`,
		`{"id":12,"name":"Dawn\u0000","role":"main","domain":"x\u0000.myshopify.com"}`,
		"{\"id\":12,\"name\":\"\xff\",\"role\":\"main\"}",
		`{"inventory_item_id":null,"location_id":{},"available":1e30}`,
		`{"created_at":"2026-13-01T00:00:00Z"}`,
		`[]`, `null`, `"x"`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d := &store.Delivery{ShopID: 1, ID: "d-1", Body: body}
		readable := func(err error) bool {
			var u *unreadable
			if err != nil && !errors.As(err, &u) {
				t.Fatalf("decode error that is not unreadable: %v", err)
			}
			return err == nil
		}
		var o orderPayload
		if readable(decodeDelivery(d, &o)) {
			if r := o.revenue(); math.IsNaN(r) {
				t.Fatalf("revenue NaN from %s", body)
			}
			o.lines()
			parseAssignments(o.attribute(AttrAssignments))
		}
		var th themePayload
		if readable(decodeDelivery(d, &th)) {
			themeNumber(string(th.ID))
		}
		readable(decodeDelivery(d, &shopUpdatePayload{}))
		readable(decodeDelivery(d, &inventoryPayload{}))
	})
}
