package demo_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/liftab/lift/api/webhooks"
)

// TestOrderChargesTheChosenRate: the order charges the rate the shopper
// chose, priced from the carrier service's quote at placing (a price the
// browser sends is ignored), in the platform's shipping_lines, with
// total_price the lines and the shipping. No choice, or a carrier service
// that cannot answer, places the order with "shipping_lines": [] (no
// shipping charged); a rate it does not quote, or a destination the store
// does not ship to, is refused and the cart is kept.
func TestOrderChargesTheChosenRate(t *testing.T) {
	t.Parallel()
	const quote = `{"rates":[{"service_name":"Standard","service_code":"gid://shopify/DeliveryMethodDefinition/5011","total_price":"695","currency":"USD"},` +
		`{"service_name":"Express","service_code":"gid://shopify/DeliveryMethodDefinition/5012","total_price":"1495","currency":"USD"}]}`
	for _, c := range []struct {
		name, body string
		carrier    int    // the carrier service's status
		want       int    // the checkout's status
		asked      string // the destination quoted at placing ("": none)
		shipping   string // the order's shipping_lines, as JSON
		total      string // the order's total_price
	}{
		{name: "chosen", body: `{"country":"US","service_code":"gid://shopify/DeliveryMethodDefinition/5012","total_price":"1"}`,
			carrier: 200, want: 200, asked: "US", total: "160.95",
			shipping: `[{"title":"Express","code":"gid://shopify/DeliveryMethodDefinition/5012","source":"lift","price":"14.95","discounted_price":"14.95"}]`},
		{name: "none chosen", body: `{}`, carrier: 200, want: 200, shipping: `[]`, total: "146.00"},
		{name: "empty body", body: ``, carrier: 200, want: 200, shipping: `[]`, total: "146.00"},
		{name: "carrier fails", body: `{"country":"US","service_code":"gid://shopify/DeliveryMethodDefinition/5011"}`,
			carrier: 500, want: 200, asked: "US", shipping: `[]`, total: "146.00"},
		{name: "forged code", body: `{"country":"US","service_code":"FREE","price":"0.00"}`, carrier: 200, want: 400, asked: "US"},
		{name: "rate of another destination", body: `{"country":"JP","service_code":"gid://shopify/DeliveryMethodDefinition/5011"}`,
			carrier: 200, want: 400, asked: "JP"},
		{name: "unknown country", body: `{"country":"XX","service_code":"gid://shopify/DeliveryMethodDefinition/5011"}`, carrier: 200, want: 400},
		{name: "not JSON", body: `country=US`, carrier: 200, want: 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			asked, orders := make(chan string, 1), make(chan []byte, 1)
			lift := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if r.Header.Get(webhooks.HeaderSignature) != webhooks.Sign([]byte("s"), b) {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				if r.Header.Get(webhooks.HeaderTopic) == "ORDERS_CREATE" {
					orders <- b
					return
				}
				var req struct {
					Rate struct{ Destination struct{ Country string } } `json:"rate"`
				}
				json.Unmarshal(b, &req)
				asked <- req.Rate.Destination.Country
				w.WriteHeader(c.carrier)
				if req.Rate.Destination.Country == "US" {
					w.Write([]byte(quote))
				} else {
					w.Write([]byte(`{"rates":[]}`))
				}
			}))
			defer lift.Close()
			jar, _ := cookiejar.New(nil)
			call := caller(t, demoStore(t, []byte("s"), lift.URL).URL, &http.Client{Jar: jar})
			const js = "application/json"
			call("POST", "/demo/cart/add.js", js, `{"variant_id":"44001","quantity":2,"price":24}`, 200)
			call("POST", "/demo/cart/add.js", js, `{"variant_id":"44005","quantity":1}`, 200)

			answer := call("POST", "/demo/checkout", js, c.body, c.want)
			if got := receivedOr(asked, ""); got != c.asked {
				t.Errorf("the carrier service was asked for %q at placing, want %q", got, c.asked)
			}
			if c.want != 200 {
				if !strings.Contains(answer, `"status":"error"`) || len(orders) != 0 {
					t.Errorf("refused checkout answered %s, %d orders sent", answer, len(orders))
				}
				if cart := call("GET", "/demo/cart.js", "", "", 200); strings.Contains(cart, `"items":[]`) {
					t.Errorf("the cart after a refused checkout = %s, want it kept", cart)
				}
				return
			}
			var order struct {
				TotalPrice    string          `json:"total_price"`
				ShippingLines json.RawMessage `json:"shipping_lines"`
				LineItems     []struct {
					Quantity int    `json:"quantity"`
					Price    string `json:"price"`
				} `json:"line_items"`
			}
			body := <-orders
			if err := json.Unmarshal(body, &order); err != nil {
				t.Fatal(err)
			}
			if string(order.ShippingLines) != c.shipping || order.TotalPrice != c.total || len(order.LineItems) != 2 {
				t.Errorf("order shipping_lines %s, total_price %s; want %s, %s\n%s", order.ShippingLines, order.TotalPrice,
					c.shipping, c.total, body)
			}
			var placed struct {
				TotalPrice float64 `json:"total_price"`
			}
			json.Unmarshal([]byte(answer), &placed)
			if got := fmt.Sprintf("%.2f", placed.TotalPrice); got != c.total {
				t.Errorf("the checkout answered total_price %s, want %s", got, c.total)
			}
		})
	}
}

// receivedOr is what ch holds, or none when it is empty.
func receivedOr(ch chan string, none string) string {
	select {
	case s := <-ch:
		return s
	default:
		return none
	}
}
