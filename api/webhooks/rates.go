package webhooks

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/shopspring/decimal"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/money"
)

// RatesPath is the carrier service's callback: the platform asks it for a
// checkout's shipping rates (docs/install.md, "Shipping rates").
const RatesPath = "/api/carrier/rates"

// RateQuoter answers a checkout's rates; *experiment.Service is one.
type RateQuoter interface {
	QuoteRates(ctx context.Context, shop *experiment.Shop, req experiment.RateRequest) ([]experiment.QuotedRate, error)
}

// ShopFinder finds the shop a rate request names, however its domain is
// cased or spaced; *store.DB is one.
type ShopFinder interface {
	FindShopByDomain(ctx context.Context, domain string) (*experiment.Shop, error)
}

// rateRequest is the platform's question: the destination and the cart's
// lines, each with its price (in the currency's minor units), quantity,
// weight and properties (the tracker's _lift_assignments).
type rateRequest struct {
	Rate struct {
		Destination struct {
			Country string `json:"country"`
		} `json:"destination"`
		Items []struct {
			Price      int64          `json:"price"`
			Quantity   int64          `json:"quantity"`
			Grams      int64          `json:"grams"`
			Properties map[string]any `json:"properties"`
		} `json:"items"`
		Currency string `json:"currency"`
	} `json:"rate"`
}

// cart is the request's subtotal, as a decimal in the shop's currency (""
// when the request is in another), and weight, for the zone rates'
// conditions.
func (in *rateRequest) cart(shopCurrency string) (subtotal string, grams int64) {
	var minor int64
	for _, it := range in.Rate.Items {
		q := max(it.Quantity, 1)
		minor += it.Price * q
		grams += it.Grams * q
	}
	if in.Rate.Currency != "" && !strings.EqualFold(in.Rate.Currency, shopCurrency) {
		return "", grams
	}
	return decimal.New(minor, -int32(money.MinorUnits(shopCurrency))).String(), grams
}

type quotedRate struct {
	ServiceName string `json:"service_name"`
	ServiceCode string `json:"service_code"`
	TotalPrice  string `json:"total_price"` // in the currency's minor units, as the platform reads it
	Currency    string `json:"currency"`
	Description string `json:"description"`
}

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

// rates answers the platform's rate request, signed as its webhooks are
// (X-Platform-Hmac-Sha256 under platform.webhook_secret) and naming the
// shop in X-Platform-Shop-Domain: 200 {"rates":[…]} (none for a
// destination no zone ships to), 401 for a bad signature, 400 for a body
// without a destination country, 404 for a shop Lift does not serve.
func (h *Handler) rates(c *gin.Context) error {
	body, err := h.signedBody(c, "request")
	if err != nil {
		return err
	}
	var in rateRequest
	if err := json.Unmarshal(body, &in); err != nil || !countryCode.MatchString(in.Rate.Destination.Country) {
		return experiment.Errorf(experiment.KindInvalidRequest, "invalid_request",
			"The body must be a rate request whose rate.destination.country is a two-letter country code.")
	}
	shop, err := h.Shops.FindShopByDomain(c.Request.Context(), c.GetHeader(HeaderShop))
	if err == nil && !shop.Installed() {
		err = experiment.Errorf(experiment.KindNotFound, "shop_not_found", "No installed shop has this domain.")
	}
	if err != nil {
		return err
	}
	req := experiment.RateRequest{Country: in.Rate.Destination.Country}
	req.Subtotal, req.Grams = in.cart(shop.Currency)
	for _, it := range in.Rate.Items {
		if s, ok := it.Properties["_lift_assignments"].(string); ok && s != "" {
			req.Assignments = s
			break
		}
	}
	quoted, err := h.Rates.QuoteRates(c.Request.Context(), shop, req)
	if err != nil {
		return err
	}
	out := make([]quotedRate, 0, len(quoted))
	for _, q := range quoted {
		d, err := money.Parse(q.Price.Amount)
		if err != nil {
			return err // the mirror and saved tests hold parsed amounts: a fault of ours
		}
		minor := d.Shift(money.MinorUnits(q.Price.Currency)).Round(0)
		out = append(out, quotedRate{ServiceName: q.Name, ServiceCode: q.Code, TotalPrice: minor.String(), Currency: q.Price.Currency})
	}
	c.JSON(http.StatusOK, gin.H{"rates": out})
	return nil
}
