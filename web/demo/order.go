package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"
)

// orderBody is the ORDERS_CREATE payload the platform would send for a
// cart: the fields attribution reads (session document 6.2: id, line items'
// product and variant ids, total_price; plus the cart attributes the
// platform copies into note_attributes, and each line's properties, the
// tracker's _lift_assignments among them while a shipping test runs), and
// the shipping charged as the platform lists it: shipping_lines, [] for
// none (present: "no shipping charged", not "unknown"), with total_price
// the lines and the shipping.
func orderBody(id string, c Cart, ship *shippingRate, currency string, now time.Time) ([]byte, error) {
	type attr struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type line struct {
		ProductID int64  `json:"product_id"`
		VariantID int64  `json:"variant_id"`
		Title     string `json:"title"`
		Quantity  int    `json:"quantity"`
		Price     string `json:"price"`
		// Properties are the cart line's, as the platform's order
		// payload lists them: [{name, value}], by name.
		Properties []attr `json:"properties"`
	}
	names := make([]string, 0, len(c.Attributes))
	for k := range c.Attributes {
		names = append(names, k)
	}
	sort.Strings(names)
	attrs := make([]attr, 0, len(names))
	for _, k := range names {
		attrs = append(attrs, attr{Name: k, Value: c.Attributes[k]})
	}
	lines := make([]line, 0, len(c.Lines))
	for _, l := range c.Lines {
		p, _ := strconv.ParseInt(l.ProductID, 10, 64)
		v, _ := strconv.ParseInt(l.VariantID, 10, 64)
		props := []attr{}
		for _, k := range slices.Sorted(maps.Keys(l.Properties)) {
			props = append(props, attr{Name: k, Value: l.Properties[k]})
		}
		lines = append(lines, line{ProductID: p, VariantID: v, Title: l.Title, Quantity: l.Quantity,
			Price: strconv.FormatFloat(l.Price, 'f', 2, 64), Properties: props})
	}
	type shippingLine struct {
		Title           string `json:"title"`
		Code            string `json:"code"`
		Source          string `json:"source"`
		Price           string `json:"price"`
		DiscountedPrice string `json:"discounted_price"`
	}
	shipping := []shippingLine{}
	if ship != nil {
		// Source lift: the rate came from the shop's carrier service.
		shipping = append(shipping, shippingLine{Title: ship.Name, Code: ship.Code, Source: "lift",
			Price: cents(ship.Cents), DiscountedPrice: cents(ship.Cents)})
	}
	n, _ := strconv.ParseInt(id, 10, 64)
	return json.Marshal(map[string]any{
		"id": n, "admin_graphql_api_id": "gid://shopify/Order/" + id, "name": "#" + id,
		"created_at": now.Format(time.RFC3339), "updated_at": now.Format(time.RFC3339),
		"currency": currency, "total_price": cents(orderTotal(c, ship)),
		"note_attributes": attrs, "line_items": lines, "shipping_lines": shipping,
	})
}

// orderTotal is what the order charges in hundredths: the cart's lines and
// the shipping (ship nil: none).
func orderTotal(c Cart, ship *shippingRate) int64 {
	t := int64(math.Round(c.Total() * 100))
	if ship != nil {
		t += ship.Cents
	}
	return t
}

// cents writes hundredths as the platform writes an amount: "5.00".
func cents(c int64) string {
	return strconv.FormatFloat(float64(c)/100, 'f', 2, 64)
}

// signedPost sends body to Lift at url as the platform calls it
// (docs/webhooks-exports.md): HMAC-SHA256 of the raw body with the webhook
// secret, the shop domain, and for a webhook its topic and delivery id, set
// by the configured SignWebhook. It returns the answer's body (what names
// the call in an error); anything but 200 is an error.
func (h *Handler) signedPost(ctx context.Context, what, url, shop, topic, id string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	h.cfg.SignWebhook(req.Header, topic, shop, id, body)
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("demo: %s: %w", what, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("demo: %s: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("demo: %s answered %d %.512s", what, resp.StatusCode, out)
	}
	return out, nil
}

// liftURL is configured, or path on the host the request reached (the
// demo is served by Lift itself).
func liftURL(r *http.Request, configured, path string) string {
	if configured != "" {
		return configured
	}
	return "http://" + r.Host + path
}
