package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
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
// tracker's _lift_assignments among them while a shipping test runs).
func orderBody(id string, c Cart, currency string, now time.Time) ([]byte, error) {
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
	n, _ := strconv.ParseInt(id, 10, 64)
	return json.Marshal(map[string]any{
		"id": n, "admin_graphql_api_id": "gid://shopify/Order/" + id, "name": "#" + id,
		"created_at": now.Format(time.RFC3339), "updated_at": now.Format(time.RFC3339),
		"currency": currency, "total_price": strconv.FormatFloat(c.Total(), 'f', 2, 64),
		"note_attributes": attrs, "line_items": lines,
	})
}

// deliver posts a signed ORDERS_CREATE to Lift's webhook endpoint, exactly
// as the platform does (docs/webhooks-exports.md): HMAC-SHA256 of the raw
// body with the webhook secret, topic, shop domain and delivery id headers,
// set by the configured SignWebhook.
func (h *Handler) deliver(ctx context.Context, url, shop, orderID string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	h.cfg.SignWebhook(req.Header, "ORDERS_CREATE", shop, "demo-order-"+orderID, body)
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("demo: deliver order webhook: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("demo: order webhook answered %d %s", resp.StatusCode, msg)
	}
	return nil
}
