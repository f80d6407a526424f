package demo

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
)

// The checkout shows the shipping rates the shop's carrier service quotes
// for the cart, asked as the platform asks Lift's (POST /api/carrier/rates):
// the destination and the cart's lines with their properties, signed with
// the webhook secret. So a shipping test's visitor sees its group's rates.
// Demo orders charge no shipping: the options show what would be offered.

// shipCountries are the destinations the checkout offers: the demo
// catalog's zones' countries, and one no zone ships to.
var shipCountries = []string{"US", "CA", "GB", "DE", "FR", "NL", "AU", "JP"}

// rates answers GET /demo/checkout/rates?country=CC with the carrier
// service's {"rates":[…]} for the visitor's cart.
func (h *Handler) rates(w http.ResponseWriter, r *http.Request) {
	country := r.URL.Query().Get("country")
	if !slices.Contains(shipCountries, country) {
		fail(w, http.StatusBadRequest, "country must be one of %v", shipCountries)
		return
	}
	if h.cfg.SignWebhook == nil {
		fail(w, http.StatusServiceUnavailable, "the demo cannot sign rate requests: platform.webhook_secret is empty")
		return
	}
	cart := h.carts.update(h.cartKey(w, r), func(*Cart) {})
	body, err := rateRequest(cart, country, h.cfg.Catalog.Currency)
	if err != nil {
		fail(w, http.StatusInternalServerError, "rate request: %v", err)
		return
	}
	// A rate request has no topic or delivery id: the signature and the shop.
	out, err := h.signedPost(r.Context(), "carrier service", liftURL(r, h.cfg.RatesURL, "/api/carrier/rates"), h.shop(r), "", "", body)
	if err != nil {
		fail(w, http.StatusBadGateway, "%v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(out)
}

// rateRequest is the platform's carrier rate request for cart: prices in
// the currency's cents, each line with its properties.
func rateRequest(c Cart, country, currency string) ([]byte, error) {
	items := []map[string]any{}
	for _, l := range c.Lines {
		p, _ := strconv.ParseInt(l.ProductID, 10, 64)
		v, _ := strconv.ParseInt(l.VariantID, 10, 64)
		var props any // the platform sends null for a line without any
		if len(l.Properties) > 0 {
			props = l.Properties
		}
		items = append(items, map[string]any{"name": l.Title, "quantity": l.Quantity, "price": int64(math.Round(l.Price * 100)),
			"product_id": p, "variant_id": v, "requires_shipping": true, "properties": props})
	}
	return json.Marshal(map[string]any{"rate": map[string]any{"origin": map[string]string{"country": "US"},
		"destination": map[string]string{"country": country}, "items": items, "currency": currency, "locale": "en"}})
}
