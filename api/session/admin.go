package session

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	isomoney "github.com/liftab/lift/money"
)

// adminRoutes mounts the admin tools of part 4.5 on g (behind x-api-key).
func (a *API) adminRoutes(g gin.IRouter) {
	if a.Orders != nil {
		g.POST("/get-order", handle(a.getOrder))
	}
	if a.Scripts != nil {
		g.GET("/enable-script", api.Query("shop"), handle(a.enableScript))
	}
}

// enableScript turns the storefront script on for ?shop=: 400 without a
// shop or for a shop not installed, 404 for an unknown shop, 503 when the
// platform refused.
func (a *API) enableScript(c *gin.Context) error {
	domain := c.Query("shop")
	if domain == "" {
		return badRequest("shop (a shop domain) is required.")
	}
	st, err := a.Scripts.EnableScript(c.Request.Context(), domain)
	if err != nil {
		return err
	}
	data(c, gin.H{"shop": st.Shop.Domain, "scriptTagId": st.ScriptTagID, "src": st.Src})
	return nil
}

// orderWire is a stored order with its attribution to each test.
type orderWire struct {
	Shop         string            `json:"shop"`
	OrderID      string            `json:"orderId"`
	Attributions []attributionWire `json:"attributions"`
}

// attributionWire is the standing version of the order for one test, with
// every version stored.
type attributionWire struct {
	ExperimentID string        `json:"experimentId"`
	TestGroup    int16         `json:"testGroup"`
	Revenue      json.Number   `json:"revenue"` // a number with the currency's minor units
	Currency     string        `json:"currency"`
	Versions     []versionWire `json:"versions"`
}

type versionWire struct {
	Version   uint64      `json:"version"`
	TestGroup int16       `json:"testGroup"`
	Revenue   json.Number `json:"revenue"`
	Source    string      `json:"source"`
	CreatedAt string      `json:"createdAt"`
	LineItems int         `json:"lineItems"`
}

// getOrder answers the order orderId of shop as the warehouse holds it: 404
// for an unknown shop or an order never attributed.
func (a *API) getOrder(c *gin.Context) error {
	var in struct {
		Shop    string          `json:"shop"`
		OrderID json.RawMessage `json:"orderId"`
	}
	if err := api.DecodeJSON(c, &in); err != nil {
		return err
	}
	orderID := strings.Trim(string(in.OrderID), `"`)
	if in.Shop == "" || !number.MatchString(numericID(orderID)) {
		return badRequest("shop (a shop domain) and orderId (the platform's order number) are required.")
	}
	shop, err := a.Shops.FindShopByDomain(c.Request.Context(), in.Shop)
	if err != nil {
		return err
	}
	versions, err := a.Orders.FindOrder(c.Request.Context(), shop.ID, numericID(orderID))
	if err != nil {
		return err
	}
	data(c, orderOf(shop, numericID(orderID), versions))
	return nil
}

// orderOf groups the versions per test; the highest version stands.
func orderOf(shop *experiment.Shop, orderID string, versions []experiment.OrderVersion) orderWire {
	w := orderWire{Shop: shop.Domain, OrderID: orderID, Attributions: []attributionWire{}}
	at := map[string]int{}
	for _, v := range versions {
		i, ok := at[v.ExperimentID]
		if !ok {
			i = len(w.Attributions)
			at[v.ExperimentID] = i
			w.Attributions = append(w.Attributions, attributionWire{ExperimentID: v.ExperimentID, Versions: []versionWire{}})
		}
		aw := &w.Attributions[i]
		// The contract types revenue as a number: written from the decimal
		// with the currency's minor units (JPY 1500, KWD 12.345).
		revenue := json.Number(isomoney.Format(v.Revenue, cmp.Or(v.Currency, shop.Currency)))
		aw.TestGroup, aw.Revenue, aw.Currency = v.TestGroup, revenue, v.Currency
		aw.Versions = append(aw.Versions, versionWire{Version: v.Version, TestGroup: v.TestGroup, Revenue: revenue,
			Source: v.Source, CreatedAt: isoTime(v.CreatedAt), LineItems: v.LineItems})
	}
	return w
}
