// Package demo is a small storefront served at /demo/: home, product pages,
// cart and checkout, loading /lift.js like a real shop's theme would. Its
// checkout places the order the way the commerce platform does: the cart's
// attributes become the order's note_attributes and the order arrives at
// Lift as a signed ORDERS_CREATE webhook. `lift dev` prints its address, so
// a started test can be watched working end to end.
package demo

import (
	"cmp"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Path is the demo store's root.
const Path = "/demo/"

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"money": formatMoney, "image": productImage,
}).ParseFS(assets, "assets/*.html"))

// productImage is a product's picture on its page: the asset named by its
// handle (assets/<handle>.svg), else a plain placeholder. The page marks it
// data-lift-product-image, so an image test shows its group's in its place
// (docs/image-tests.md); tee-b.svg and tee-c.svg are other pictures of the
// tee for trying one.
func productImage(p *Product) string {
	if _, err := fs.Stat(assets, "assets/"+p.Handle+".svg"); p.Handle != "" && err == nil {
		return "/demo/assets/" + p.Handle + ".svg"
	}
	return "/demo/assets/product.svg"
}

// Config wires the demo store.
type Config struct {
	Catalog     *Catalog // required: what the store sells
	DefaultShop string   // the shop of /demo/ without ?shop=
	// SignWebhook sets the platform's headers of an ORDERS_CREATE delivery
	// (topic, shop, delivery id, HMAC of body with platform.webhook_secret);
	// cmd/lift passes api/webhooks' own, so the store stays free of Lift's
	// packages. nil: checkout answers 503, as Lift would refuse the orders.
	SignWebhook func(h http.Header, topic, shop, deliveryID string, body []byte)
	// MinorUnits is a currency's ISO 4217 exponent (cmd/lift passes
	// money.MinorUnits, Lift's one table of them); nil: 2 for every one.
	MinorUnits func(currency string) int32
	// WebhookURL receives the orders; default http://<request host>/api/webhooks.
	WebhookURL string
	// RatesURL is the carrier service the checkout asks for shipping rates
	// (shipping.go); default http://<request host>/api/carrier/rates.
	RatesURL   string
	TrackerURL string // default /lift.js
	// AntiFlicker renders the snippet that hides what the tracker changes
	// until it has run (tracker.AntiFlicker), put before the tracker's tag;
	// nil: none. A page's deadline is 2 s, or ?lift_timeout=<ms> (1-60000,
	// kept on the store's links) to see what a slow network does.
	// ?lift_sync=1 (also kept) loads the tracker without async, as a theme
	// that pastes the tag without it does: lift.js then runs before the
	// page's body is parsed.
	AntiFlicker func(timeout time.Duration) string
	Client      *http.Client
	Now         func() time.Time
	Logger      *slog.Logger
}

// Handler serves the demo store.
type Handler struct {
	cfg   Config
	mux   *http.ServeMux
	carts carts
	seq   atomic.Int64
}

// New builds the store.
func New(cfg Config) (*Handler, error) {
	if cfg.Catalog == nil || len(cfg.Catalog.Products) == 0 {
		return nil, fmt.Errorf("demo.New: a catalog with products is required")
	}
	cfg.TrackerURL = cmp.Or(cfg.TrackerURL, "/lift.js")
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), carts: carts{m: map[string]*Cart{}}}
	// Order ids: unique across restarts of one database (they are the
	// webhook's dedupe key), readable as the platform's numeric ids.
	h.seq.Store(cfg.Now().UnixMilli() * 1000)
	static, _ := fs.Sub(assets, "assets")
	h.mux.Handle("GET /demo/assets/", http.StripPrefix("/demo/assets/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /demo/{$}", h.home)
	h.mux.HandleFunc("GET /demo/products/{id}", h.product)
	h.mux.HandleFunc("GET /demo/cart", h.cartPage)
	h.mux.HandleFunc("GET /demo/checkout", h.checkoutPage)
	h.mux.HandleFunc("GET /demo/cart.js", h.cartJSON)
	h.mux.HandleFunc("POST /demo/cart/add.js", h.add)
	h.mux.HandleFunc("POST /demo/cart/add", h.addForm)
	h.mux.HandleFunc("POST /demo/cart/update.js", h.updateAttributes)
	h.mux.HandleFunc("POST /demo/checkout", h.placeOrder)
	h.mux.HandleFunc("GET /demo/checkout/rates", h.rates)
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/demo" {
		http.Redirect(w, r, "/demo/?"+r.URL.RawQuery, http.StatusFound)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// view is what every page template gets.
type view struct {
	Shop, Query, TrackerURL, Currency, PageType string
	Sync                                        bool // the tracker's tag without async
	// PreviewTheme is the theme the page renders in when it is not the
	// published one: the platform keeps ?preview_theme_id in a cookie for
	// the session and tells page scripts through Shopify.theme.id.
	PreviewTheme string
	Head         template.HTML // the anti-flicker snippet
	Products     []Product
	Product      *Product
	Cart         Cart
	Countries    []string // the checkout's destinations
}

func (h *Handler) shop(r *http.Request) string {
	return cmp.Or(strings.TrimSpace(r.URL.Query().Get("shop")), h.cfg.DefaultShop)
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, name string, v view) {
	v.Shop, v.TrackerURL, v.Currency = h.shop(r), h.cfg.TrackerURL, h.cfg.Catalog.Currency
	q := url.Values{"shop": {v.Shop}}
	timeout := 2 * time.Second
	if ms, err := strconv.Atoi(r.URL.Query().Get("lift_timeout")); err == nil && ms >= 1 && ms <= 60000 {
		timeout = time.Duration(ms) * time.Millisecond
		q.Set("lift_timeout", strconv.Itoa(ms))
	}
	if r.URL.Query().Get("lift_sync") == "1" {
		v.Sync = true
		q.Set("lift_sync", "1")
	}
	if h.cfg.AntiFlicker != nil {
		v.Head = template.HTML(h.cfg.AntiFlicker(timeout)) // Lift's own markup
	}
	v.Query = "?" + q.Encode()
	v.PreviewTheme = previewTheme(w, r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pages.ExecuteTemplate(w, name, v); err != nil {
		h.cfg.Logger.Error("demo: render", "page", name, "err", err)
	}
}

func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, "home.html", view{PageType: "index", Products: h.cfg.Catalog.Products})
}

func (h *Handler) product(w http.ResponseWriter, r *http.Request) {
	p := h.cfg.Catalog.product(r.PathValue("id"))
	if p == nil {
		http.NotFound(w, r)
		return
	}
	h.render(w, r, "product.html", view{PageType: "product", Product: p})
}

func (h *Handler) cartPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, "cart.html", view{PageType: "cart", Cart: h.carts.update(h.cartKey(w, r), func(*Cart) {})})
}

func (h *Handler) checkoutPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, "checkout.html", view{PageType: "checkout", Cart: h.carts.update(h.cartKey(w, r), func(*Cart) {}),
		Countries: shipCountries})
}

// cartKey is the visitor's cart of the shop; the cart token is a cookie,
// as on the platform.
func (h *Handler) cartKey(w http.ResponseWriter, r *http.Request) string {
	token := ""
	if c, err := r.Cookie("demo_cart"); err == nil && len(c.Value) == 32 {
		token = c.Value
	} else {
		b := make([]byte, 16)
		rand.Read(b)
		token = hex.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: "demo_cart", Value: token, Path: "/demo/", MaxAge: 14 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	return h.shop(r) + "/" + token
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]string{"status": "error", "message": fmt.Sprintf(format, args...)})
}

func (h *Handler) cartJSON(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.carts.update(h.cartKey(w, r), func(*Cart) {}))
}

// add puts a variant in the cart at the price the page showed. A price test
// changes what the storefront shows (lift.price); the platform would charge
// it through its cart transform, which the demo stands in for by taking the
// shown price within sane bounds of the catalog's.
// The line's properties are kept (the tracker's lift.lineProperties()
// while a shipping test runs); one without a value is dropped, as the
// platform drops it.
func (h *Handler) add(w http.ResponseWriter, r *http.Request) {
	var req struct {
		VariantID  string            `json:"variant_id"`
		Quantity   int               `json:"quantity"`
		Price      *float64          `json:"price"`
		Properties map[string]string `json:"properties"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "body must be JSON: {variant_id, quantity, price, properties}")
		return
	}
	cart, err := h.addLine(w, r, req.VariantID, req.Quantity, req.Price, req.Properties)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, cart)
}

// addForm is the platform's native add to cart: a theme's product form
// posted as it is (id, quantity, properties[name] fields), answered with
// the cart page. Its price is the catalog's: only the page's own script
// knows the price a test showed (add, lift.price). The tracker puts
// properties[_lift_assignments] in such forms while a shipping test runs.
func (h *Handler) addForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		fail(w, http.StatusBadRequest, "body must be a form: id, quantity, properties[name]")
		return
	}
	props := map[string]string{}
	for k, vs := range r.PostForm {
		if name, ok := strings.CutPrefix(k, "properties["); ok && strings.HasSuffix(name, "]") && len(vs) > 0 {
			props[strings.TrimSuffix(name, "]")] = vs[len(vs)-1]
		}
	}
	n, err := strconv.Atoi(cmp.Or(r.PostForm.Get("quantity"), "1"))
	if err == nil {
		_, err = h.addLine(w, r, r.PostForm.Get("id"), n, nil, props)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	http.Redirect(w, r, "/demo/cart?"+url.Values{"shop": {h.shop(r)}}.Encode(), http.StatusSeeOther)
}

// maxProperties bounds what one line keeps.
const maxProperties = 20

// addLine puts quantity of a variant in the visitor's cart at price (nil:
// the catalog's), on the line of the same variant, price and properties.
func (h *Handler) addLine(w http.ResponseWriter, r *http.Request, variant string, quantity int, shown *float64,
	props map[string]string) (Cart, error) {
	p, v := h.cfg.Catalog.variant(variant)
	if v == nil || quantity < 1 || quantity > 99 {
		return Cart{}, fmt.Errorf("unknown variant_id or quantity outside 1..99")
	}
	if len(props) > maxProperties {
		return Cart{}, fmt.Errorf("more than %d properties", maxProperties)
	}
	price := v.Price
	if shown != nil && *shown > 0 && *shown <= 10*v.Price {
		price = math.Round(*shown*100) / 100
	}
	kept := map[string]string{}
	for k, val := range props {
		if k != "" && val != "" {
			kept[k] = val
		}
	}
	return h.carts.update(h.cartKey(w, r), func(c *Cart) {
		for i := range c.Lines {
			if c.Lines[i].same(v.ID, price, kept) {
				c.Lines[i].Quantity += quantity
				return
			}
		}
		c.Lines = append(c.Lines, Line{ProductID: p.ID, VariantID: v.ID, Title: p.Title + " – " + v.Title,
			Quantity: quantity, Price: price, Properties: kept})
	}), nil
}

// updateAttributes is the platform's cart update: the tracker writes the
// attributes attribution reads here (data-cart-update-url).
func (h *Handler) updateAttributes(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Attributes map[string]string `json:"attributes"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<10)).Decode(&req); err != nil || len(req.Attributes) > 20 {
		fail(w, http.StatusBadRequest, "body must be JSON: {attributes: {name: value}}")
		return
	}
	cart := h.carts.update(h.cartKey(w, r), func(c *Cart) {
		for k, v := range req.Attributes {
			if v == "" {
				delete(c.Attributes, k)
			} else {
				c.Attributes[k] = v
			}
		}
	})
	writeJSON(w, http.StatusOK, cart)
}

// placeOrder turns the cart into an order and delivers it as the platform
// would: a signed ORDERS_CREATE carrying the cart attributes and the
// shipping rate the shopper chose ({"country", "service_code"}; an empty
// body or none chosen: no shipping).
func (h *Handler) placeOrder(w http.ResponseWriter, r *http.Request) {
	if h.cfg.SignWebhook == nil {
		fail(w, http.StatusServiceUnavailable, "the demo cannot sign orders: platform.webhook_secret is empty")
		return
	}
	var choice shippingChoice
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&choice); err != nil && err != io.EOF {
		fail(w, http.StatusBadRequest, "body must be JSON: {country, service_code}")
		return
	}
	if choice.Country != "" && !slices.Contains(shipCountries, choice.Country) {
		fail(w, http.StatusBadRequest, "country must be one of %v", shipCountries)
		return
	}
	key := h.cartKey(w, r)
	cart := h.carts.take(key)
	if len(cart.Lines) == 0 {
		fail(w, http.StatusBadRequest, "the cart is empty")
		return
	}
	keep := func() { h.carts.update(key, func(c *Cart) { *c = cart }) } // to try again
	ship, err := h.chosenRate(r, cart, choice)
	if err != nil {
		keep()
		fail(w, http.StatusBadRequest, "shipping %q is not offered to %s for this cart: choose one of the listed rates",
			choice.ServiceCode, choice.Country)
		return
	}
	id := fmt.Sprint(h.seq.Add(1))
	body, err := orderBody(id, cart, ship, h.cfg.Catalog.Currency, h.cfg.Now().UTC())
	if err != nil {
		keep()
		fail(w, http.StatusInternalServerError, "order: %v", err)
		return
	}
	target := liftURL(r, h.cfg.WebhookURL, "/api/webhooks")
	if _, err := h.signedPost(r.Context(), "order webhook", target, h.shop(r), "ORDERS_CREATE", "demo-order-"+id, body); err != nil {
		h.cfg.Logger.Error("demo: order not delivered", "order", id, "err", err)
		keep()
		fail(w, http.StatusBadGateway, "%v", err)
		return
	}
	shipping := 0.0
	if ship != nil {
		shipping = float64(ship.Cents) / 100
	}
	writeJSON(w, http.StatusOK, map[string]any{"order_id": id, "total_price": float64(orderTotal(cart, ship)) / 100,
		"shipping_price": shipping, "attributes": cart.Attributes})
}

var symbols = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "CAD": "CA$", "AUD": "A$", "JPY": "¥"}

func formatMoney(amount float64, currency string) string {
	if s, ok := symbols[currency]; ok {
		return fmt.Sprintf("%s%.2f", s, amount)
	}
	return fmt.Sprintf("%.2f %s", amount, currency)
}

var themeNumber = regexp.MustCompile(`^[0-9]{1,19}$`)

// previewTheme is the theme a page renders in, as the platform does it: a
// ?preview_theme_id is kept in a session cookie, so the next pages render
// in that theme without the parameter ("" is the published theme).
func previewTheme(w http.ResponseWriter, r *http.Request) string {
	if id := r.URL.Query().Get("preview_theme_id"); themeNumber.MatchString(id) {
		http.SetCookie(w, &http.Cookie{Name: "preview_theme", Value: id, Path: "/demo", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return id
	}
	if c, err := r.Cookie("preview_theme"); err == nil && themeNumber.MatchString(c.Value) {
		return c.Value
	}
	return ""
}
