package demo

import (
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The checkout shows the shipping rates the shop's carrier service quotes
// for the cart, asked as the platform asks Lift's (POST /api/carrier/rates):
// the destination and the cart's lines with their properties, signed with
// the webhook secret. So a shipping test's visitor sees its group's rates.
// The shopper picks one, and the order charges it in its shipping_lines,
// priced from a second quote at placing, never from the browser.

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
	out, err := h.quote(r, h.carts.update(h.cartKey(w, r), func(*Cart) {}), country)
	if err != nil {
		fail(w, http.StatusBadGateway, "%v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(out)
}

// quote asks the carrier service for cart's rates to country and returns
// its answer as it is.
func (h *Handler) quote(r *http.Request, cart Cart, country string) ([]byte, error) {
	currency := h.cfg.Catalog.Currency
	body, err := rateRequest(cart, country, currency, h.exponent(currency))
	if err != nil {
		return nil, err
	}
	// A rate request has no topic or delivery id: the signature and the shop.
	return h.signedPost(r.Context(), "carrier service", liftURL(r, h.cfg.RatesURL, "/api/carrier/rates"), h.shop(r), "", "", body)
}

// rateRequest is the platform's carrier rate request for cart: prices in
// the currency's minor units, each line with its properties.
func rateRequest(c Cart, country, currency string, exp int) ([]byte, error) {
	items := []map[string]any{}
	for _, l := range c.Lines {
		p, _ := strconv.ParseInt(l.ProductID, 10, 64)
		v, _ := strconv.ParseInt(l.VariantID, 10, 64)
		var props any // the platform sends null for a line without any
		if len(l.Properties) > 0 {
			props = l.Properties
		}
		items = append(items, map[string]any{"name": l.Title, "quantity": l.Quantity, "price": minorUnits(l.Price, exp),
			"product_id": p, "variant_id": v, "requires_shipping": true, "properties": props})
	}
	return json.Marshal(map[string]any{"rate": map[string]any{"origin": map[string]string{"country": "US"},
		"destination": map[string]string{"country": country}, "items": items, "currency": currency, "locale": "en"}})
}

// shippingChoice is what the checkout posts with the order: the
// destination and the chosen rate's service_code (both empty: none).
type shippingChoice struct {
	Country     string `json:"country"`
	ServiceCode string `json:"service_code"`
}

// shippingRate is the rate an order charges: its cents are hundredths of
// the order's currency, as the demo writes every amount with 2 decimals.
type shippingRate struct {
	Name, Code string
	Cents      int64
}

// errNotOffered: the chosen service_code is not among the rates the
// carrier service quotes for the cart now (forged, or the quote changed,
// as when a shipping test ends between the page and the order).
var errNotOffered = errors.New("not offered")

// chosenRate quotes the cart again and finds the shopper's choice, so the
// price comes from the carrier service, not from the browser. nil, nil:
// nothing was chosen, or the carrier service gave no usable answer; the
// order then goes through without shipping, as a checkout does not hang
// on the rate call. errNotOffered: the code is not among the rates.
func (h *Handler) chosenRate(r *http.Request, cart Cart, choice shippingChoice) (*shippingRate, error) {
	if choice.Country == "" || choice.ServiceCode == "" {
		return nil, nil
	}
	out, err := h.quote(r, cart, choice.Country)
	var quoted struct {
		Rates []struct {
			Name       string `json:"service_name"`
			Code       string `json:"service_code"`
			TotalPrice string `json:"total_price"` // minor units of its currency
			Currency   string `json:"currency"`
		} `json:"rates"`
	}
	if err == nil {
		err = json.Unmarshal(out, &quoted)
	}
	if err != nil {
		h.cfg.Logger.Warn("demo: order placed without shipping: no quote", "err", err)
		return nil, nil
	}
	currency := h.cfg.Catalog.Currency
	for _, q := range quoted.Rates {
		if q.Code != choice.ServiceCode {
			continue
		}
		minor, err := strconv.ParseInt(q.TotalPrice, 10, 64)
		if err != nil || minor < 0 || !strings.EqualFold(cmp.Or(q.Currency, currency), currency) {
			h.cfg.Logger.Warn("demo: order placed without shipping: unusable rate", "code", q.Code,
				"total_price", q.TotalPrice, "currency", q.Currency)
			return nil, nil
		}
		return &shippingRate{Name: q.Name, Code: q.Code, Cents: hundredths(minor, h.exponent(currency))}, nil
	}
	return nil, errNotOffered
}

// The carrier API speaks amounts in the currency's minor units, whose
// exponent (ISO 4217: 0 for JPY, 3 for KWD) Config.MinorUnits gives; the
// demo keeps hundredths.

// exponent is the currency's ISO 4217 exponent: Config.MinorUnits', else 2.
func (h *Handler) exponent(currency string) int {
	if h.cfg.MinorUnits == nil {
		return 2
	}
	return int(h.cfg.MinorUnits(currency))
}

// hundredths is an amount in minor units of exponent exp as hundredths.
func hundredths(minor int64, exp int) int64 {
	return int64(math.Round(float64(minor) * math.Pow10(2-exp)))
}

// minorUnits is a price as the carrier API writes it, in minor units of
// exponent exp.
func minorUnits(price float64, exp int) int64 {
	return int64(math.Round(price * math.Pow10(exp)))
}
