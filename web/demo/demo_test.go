package demo_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/web/demo"
)

// TestCheckoutDeliversASignedOrder: the cart's lines and attributes become
// an ORDERS_CREATE the webhook surface accepts (signature, headers, fields
// attribution reads). The receiving end here checks what api/webhooks
// checks; cmd/lift's browser test runs the real one.
func TestCheckoutDeliversASignedOrder(t *testing.T) {
	t.Parallel()
	secret := []byte("s3cret")
	type delivery struct {
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 1)
	platform := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), b}
	}))
	defer platform.Close()
	srv := demoStore(t, secret, platform.URL)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	send := caller(t, srv.URL, c)
	call := func(method, path, body string, want int) string {
		t.Helper()
		return send(method, path, "", body, want)
	}
	for _, p := range []string{"/demo/", "/demo/products/8101", "/demo/cart", "/demo/checkout"} {
		if page := call("GET", p+"?shop=a.myshopify.com", "", 200); !strings.Contains(page, `data-shop="a.myshopify.com"`) ||
			!strings.Contains(page, `src="/lift.js"`) {
			t.Errorf("%s does not load lift.js for the shop", p)
		}
	}
	call("GET", "/demo/products/1", "", 404)
	call("POST", "/demo/checkout", "{}", 400) // empty cart
	call("POST", "/demo/cart/add.js", `{"variant_id":"44001","quantity":2,"price":24}`, 200)
	call("POST", "/demo/cart/add.js", `{"variant_id":"44005","quantity":1}`, 200)
	call("POST", "/demo/cart/add.js", `{"variant_id":"1","quantity":1}`, 400)
	call("POST", "/demo/cart/update.js", `{"attributes":{"_lift_visitor_id":"v1","_lift_assignments":"42:1"}}`, 200)
	for _, p := range []string{"/demo/cart", "/demo/checkout"} {
		if page := call("GET", p, "", 200); !strings.Contains(page, "$146.00") || !strings.Contains(page, "Organic Cotton Tee – S") {
			t.Errorf("%s does not show the cart's lines and total $146.00:\n%s", p, page)
		}
	}
	var placed struct {
		OrderID    string  `json:"order_id"`
		TotalPrice float64 `json:"total_price"`
	}
	json.Unmarshal([]byte(call("POST", "/demo/checkout", "{}", 200)), &placed)
	d := <-got
	if d.header.Get(webhooks.HeaderSignature) != webhooks.Sign(secret, d.body) || d.header.Get(webhooks.HeaderTopic) != "ORDERS_CREATE" ||
		d.header.Get(webhooks.HeaderShop) != "demo-shop.myshopify.com" || d.header.Get(webhooks.HeaderID) != "demo-order-"+placed.OrderID {
		t.Errorf("headers = %v", d.header)
	}
	var order struct {
		ID             json.Number                    `json:"id"`
		TotalPrice     string                         `json:"total_price"`
		NoteAttributes []struct{ Name, Value string } `json:"note_attributes"`
		LineItems      []struct {
			ProductID json.Number `json:"product_id"`
			VariantID json.Number `json:"variant_id"`
			Quantity  int         `json:"quantity"`
			Price     string      `json:"price"`
		} `json:"line_items"`
	}
	if err := json.Unmarshal(d.body, &order); err != nil {
		t.Fatal(err)
	}
	if order.ID.String() != placed.OrderID || order.TotalPrice != "146.00" || placed.TotalPrice != 146 || len(order.LineItems) != 2 ||
		order.LineItems[0].ProductID != "8101" || order.LineItems[0].VariantID != "44001" || order.LineItems[0].Price != "24.00" ||
		order.LineItems[1].Price != "98.00" {
		t.Errorf("order = %s", d.body)
	}
	if len(order.NoteAttributes) != 2 || order.NoteAttributes[0].Name != "_lift_assignments" || order.NoteAttributes[0].Value != "42:1" {
		t.Errorf("note_attributes = %+v", order.NoteAttributes)
	}
	if cart := call("GET", "/demo/cart.js", "", 200); !strings.Contains(cart, `"items":[]`) {
		t.Errorf("cart after the order = %s, want empty", cart)
	}
}

// TestLinePropertiesReachTheOrder: a line keeps the properties it was added
// with (by JSON, as lift.lineProperties() is merged, or by a theme's form,
// as the tracker's hidden properties[_lift_assignments] input posts them),
// the same variant with other properties is a line of its own, and the
// order's line_items carry them as the platform lists them, [{name, value}].
func TestLinePropertiesReachTheOrder(t *testing.T) {
	t.Parallel()
	got := make(chan []byte, 1)
	platform := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	defer platform.Close()
	srv := demoStore(t, []byte("s"), platform.URL)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	call := caller(t, srv.URL, c)
	const js, form = "application/json", "application/x-www-form-urlencoded"
	call("POST", "/demo/cart/add.js", js, `{"variant_id":"44001","quantity":1,"price":28,"properties":{"_lift_assignments":"42:1,57:0"}}`, 200)
	call("POST", "/demo/cart/add.js", js, `{"variant_id":"44001","quantity":2,"price":28,"properties":{"_lift_assignments":"42:1,57:0"}}`, 200)
	call("POST", "/demo/cart/add.js", js, `{"variant_id":"44001","quantity":1,"price":28,"properties":{}}`, 200)
	call("POST", "/demo/cart/add.js", js, `{"variant_id":"44001","quantity":1,"price":28}`, 200)
	// A theme's form: the platform answers with the cart page.
	call("POST", "/demo/cart/add", form, "id=44005&quantity=1&properties%5B_lift_assignments%5D=42%3A0", 303)
	call("POST", "/demo/cart/add", form, "id=1&quantity=1", 400)

	var cart struct {
		Items []struct {
			VariantID  string            `json:"variant_id"`
			Quantity   int               `json:"quantity"`
			Properties map[string]string `json:"properties"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(call("GET", "/demo/cart.js", "", "", 200)), &cart); err != nil {
		t.Fatal(err)
	}
	type line struct {
		variant  string
		quantity int
		props    string
	}
	want := []line{{"44001", 3, "map[_lift_assignments:42:1,57:0]"}, {"44001", 2, "map[]"}, {"44005", 1, "map[_lift_assignments:42:0]"}}
	var lines []line
	for _, it := range cart.Items {
		lines = append(lines, line{it.VariantID, it.Quantity, fmt.Sprint(it.Properties)})
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("cart lines = %v, want %v", lines, want)
	}

	call("POST", "/demo/checkout", js, "{}", 200)
	var order struct {
		LineItems []struct {
			VariantID  json.Number     `json:"variant_id"`
			Quantity   int             `json:"quantity"`
			Properties json.RawMessage `json:"properties"`
		} `json:"line_items"`
	}
	body := <-got
	if err := json.Unmarshal(body, &order); err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range order.LineItems {
		items = append(items, fmt.Sprintf("%s×%d %s", it.VariantID, it.Quantity, it.Properties))
	}
	if w := []string{`44001×3 [{"name":"_lift_assignments","value":"42:1,57:0"}]`, `44001×2 []`,
		`44005×1 [{"name":"_lift_assignments","value":"42:0"}]`}; fmt.Sprint(items) != fmt.Sprint(w) {
		t.Errorf("order line_items = %q, want %q\n%s", items, w, body)
	}
}

// caller sends requests to the demo at base with c (its cookie jar is the
// visitor's cart) and requires each answer's status.
func caller(t *testing.T, base string, c *http.Client) func(method, path, contentType, body string, want int) string {
	return func(method, path, contentType, body string, want int) string {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, want)
		}
		return string(b)
	}
}

// TestCheckoutAsksTheCarrierService: the checkout's shipping options are
// what the carrier service answers a signed rate request for the cart,
// asked as the platform asks: the destination, and each line in cents with
// its properties (null without any).
func TestCheckoutAsksTheCarrierService(t *testing.T) {
	t.Parallel()
	asked := make(chan []byte, 1)
	var status atomic.Int32
	status.Store(http.StatusOK)
	lift := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get(webhooks.HeaderSignature) != webhooks.Sign([]byte("s"), b) || r.Header.Get(webhooks.HeaderShop) != "demo-shop.myshopify.com" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		asked <- b
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(`{"rates":[{"service_name":"Standard","service_code":"s","total_price":"100","currency":"USD","description":""}]}`))
	}))
	defer lift.Close()
	srv := demoStore(t, []byte("s"), lift.URL)
	jar, _ := cookiejar.New(nil)
	call := caller(t, srv.URL, &http.Client{Jar: jar})
	call("POST", "/demo/cart/add.js", "application/json", `{"variant_id":"44001","quantity":2,"price":24,"properties":{"_lift_assignments":"7:1"}}`, 200)
	call("POST", "/demo/cart/add.js", "application/json", `{"variant_id":"44005","quantity":1}`, 200)
	if got := call("GET", "/demo/checkout/rates?country=CA", "", "", 200); !strings.Contains(got, `"total_price":"100"`) {
		t.Fatalf("the checkout's rates = %s, want the carrier service's answer", got)
	}
	var req struct {
		Rate struct {
			Destination struct{ Country string } `json:"destination"`
			Items       []struct {
				VariantID  int64           `json:"variant_id"`
				Quantity   int             `json:"quantity"`
				Price      int64           `json:"price"`
				Properties json.RawMessage `json:"properties"`
			} `json:"items"`
			Currency string `json:"currency"`
		} `json:"rate"`
	}
	if err := json.Unmarshal(<-asked, &req); err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range req.Rate.Items {
		items = append(items, fmt.Sprintf("%d×%d %d %s", it.VariantID, it.Quantity, it.Price, it.Properties))
	}
	if req.Rate.Destination.Country != "CA" || req.Rate.Currency != "USD" || len(items) != 2 ||
		items[0] != `44001×2 2400 {"_lift_assignments":"7:1"}` || !strings.HasPrefix(items[1], "44005×1 ") || !strings.HasSuffix(items[1], " null") {
		t.Fatalf("the rate request = %s %s %q", req.Rate.Destination.Country, req.Rate.Currency, items)
	}
	call("GET", "/demo/checkout/rates?country=XX", "", "", 400)
	status.Store(http.StatusUnauthorized)
	call("GET", "/demo/checkout/rates?country=US", "", "", 502)
	<-asked
}

// demoStore serves the demo catalog's store, signing with secret what it
// sends the platform's way (orders and rate requests, both to upstream),
// until the test ends.
func demoStore(t *testing.T, secret []byte, upstream string) *httptest.Server {
	t.Helper()
	cat, err := demo.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	h, err := demo.New(demo.Config{Catalog: cat, DefaultShop: "demo-shop.myshopify.com", WebhookURL: upstream, RatesURL: upstream,
		SignWebhook: func(h http.Header, topic, shop, id string, body []byte) {
			webhooks.SetDeliveryHeaders(h, secret, topic, shop, id, body)
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestProductImages: each product page shows the product's picture marked
// for image tests (data-lift-product-image, its numeric id), an SVG the
// store serves, with a srcset as themes render it; the tee's other pictures are there to try an image test
// with, and a product without a picture of its own (another catalog) gets
// the placeholder.
func TestProductImages(t *testing.T) {
	t.Parallel()
	srv := demoStore(t, []byte("s"), "http://127.0.0.1:1")
	call := caller(t, srv.URL, http.DefaultClient)
	cat, err := demo.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	svgs := []string{"/demo/assets/tee-b.svg", "/demo/assets/tee-c.svg", "/demo/assets/product.svg"}
	for _, p := range cat.Products {
		page := call("GET", "/demo/products/"+p.ID, "", "", 200)
		src := "/demo/assets/" + p.Handle + ".svg"
		img := `<img class="product-image" data-lift-product-image="` + p.ID + `" src="` + src + `" srcset="` + src + ` 320w"`
		if strings.Count(page, "data-lift-product-image") != 1 || !strings.Contains(page, img) {
			t.Errorf("product %s: want one image, %s…>, in\n%s", p.ID, img, page)
		}
		svgs = append(svgs, "/demo/assets/"+p.Handle+".svg")
	}
	for _, u := range svgs {
		resp, err := http.Get(srv.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(string(b), "<svg ") || len(b) > 1024 {
			t.Errorf("GET %s = %d %s, %d bytes: want a small SVG", u, resp.StatusCode, resp.Header.Get("Content-Type"), len(b))
		}
	}

	other, err := demo.ParseCatalog([]byte(`{"currency":"USD","products":[{"id":"gid://shopify/Product/9","title":"Mug","handle":"mug",
		"variants":[{"id":"gid://shopify/ProductVariant/90","title":"One","price":"12.00"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := demo.New(demo.Config{Catalog: other, DefaultShop: "other.myshopify.com"})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/demo/products/9", nil))
	if !strings.Contains(w.Body.String(), `data-lift-product-image="9" src="/demo/assets/product.svg"`) {
		t.Errorf("a product without a picture of its own: want the placeholder in\n%s", w.Body)
	}
}
