package session_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/liftab/lift/api/session"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/warehouse"
)

// TestGetOrder: the admin tool answers an order's attribution from the
// warehouse behind x-api-key, and is off without a configured key.
func TestGetOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, other := e.newShop(), e.newShop()
	at := epoch.Add(-time.Hour)
	rows := []experiment.SignedOrder{
		{ShopID: s.shop.ID, ExperimentID: "7", OrderID: "5001", Version: 1000, TestGroup: 1, Revenue: decimal.NewFromInt(40), Currency: "USD",
			LineProductIDs: []string{"8101"}, LineVariantIDs: []string{"44001"}, LineQuantities: []uint32{2}, LinePrices: []decimal.Decimal{decimal.NewFromInt(20)}, CreatedAt: at},
		{ShopID: s.shop.ID, ExperimentID: "7", OrderID: "5001", Version: 2000, TestGroup: 1, Revenue: decimal.NewFromInt(20), Currency: "USD",
			LineProductIDs: []string{"8101"}, LineVariantIDs: []string{"44001"}, LineQuantities: []uint32{1}, LinePrices: []decimal.Decimal{decimal.NewFromInt(20)}, CreatedAt: at},
	}
	if err := (warehouse.WebhookOrders{W: e.wh}).WriteSignedOrders(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
	key := []string{"x-api-key", adminKey}
	r := e.send(t, "POST", "/api/get-order", `{"shop":"`+s.shop.Domain+`","orderId":"5001"}`, key...)
	if r.Status != 200 || r.obj()["status"] != "success" {
		t.Fatalf("get-order = %d %s", r.Status, r.Raw)
	}
	d := r.data().(map[string]any)
	att := d["attributions"].([]any)
	if d["orderId"] != "5001" || d["shop"] != s.shop.Domain || len(att) != 1 {
		t.Fatalf("order: %s", r.Raw)
	}
	a := att[0].(map[string]any)
	vs := a["versions"].([]any)
	if a["experimentId"] != "7" || a["testGroup"] != 1.0 || a["revenue"] != 20.0 || len(vs) != 2 ||
		vs[0].(map[string]any)["revenue"] != 40.0 || vs[0].(map[string]any)["source"] != "webhook" {
		t.Fatalf("attribution: %s", r.Raw)
	}
	// A numeric orderId reads the same order.
	if r2 := e.send(t, "POST", "/api/get-order", `{"shop":"`+s.shop.Domain+`","orderId":5001}`, key...); cmp.Diff(r.Body, r2.Body) != "" {
		t.Fatalf("numeric orderId: %s", r2.Raw)
	}

	wantError(t, e.send(t, "POST", "/api/get-order", `{"shop":"`+s.shop.Domain+`","orderId":"5001"}`), http.StatusUnauthorized)
	wantError(t, e.send(t, "POST", "/api/get-order", `{"shop":"`+s.shop.Domain+`","orderId":"5001"}`, "x-api-key", "wrong"), http.StatusUnauthorized)
	wantError(t, e.send(t, "POST", "/api/get-order", `{"shop":"`+s.shop.Domain+`","orderId":"5001"}`,
		"Authorization", "Bearer "+s.session(t)), http.StatusUnauthorized)
	for _, bad := range []string{`{"shop":`, `{"orderId":"5001"}`, `{"shop":"` + s.shop.Domain + `"}`, `{"shop":"` + s.shop.Domain + `","orderId":"abc"}`, `{"shop":1,"orderId":"1"}`} {
		wantError(t, e.send(t, "POST", "/api/get-order", bad, key...), http.StatusBadRequest)
	}
	// Another shop, an unknown shop or an unknown order: not found.
	for _, body := range []string{`{"shop":"` + other.shop.Domain + `","orderId":"5001"}`, `{"shop":"nobody.myshopify.com","orderId":"5001"}`,
		`{"shop":"` + s.shop.Domain + `","orderId":"5002"}`} {
		wantError(t, e.send(t, "POST", "/api/get-order", body, key...), http.StatusNotFound)
	}

	// Without a configured key the tools are off.
	g := gin.New()
	(&session.API{Shops: e.db, Orders: warehouse.OrderLookup{W: e.wh}}).Mount(g)
	off := httptest.NewServer(g)
	t.Cleanup(off.Close)
	res, err := http.Post(off.URL+"/api/get-order", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("tools without a key = %d", res.StatusCode)
	}
	res, err = http.Get(off.URL + "/api/enable-script?shop=" + s.shop.Domain)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("enable-script without a key = %d, want 404", res.StatusCode)
	}
}

// TestEnableScript: the admin tool puts the storefront script on an
// installed shop through the platform, once however often it is called,
// behind x-api-key; shops it cannot serve are refused in the envelope.
func TestEnableScript(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	domain := fmt.Sprintf("script-%d.myshopify.com", time.Now().UnixNano())
	shop, err := e.install.Install(t.Context(), experiment.InstallRequest{Domain: domain, Grant: experiment.AccessGrant{AccessToken: "shpat_x"}})
	if err != nil {
		t.Fatal(err)
	}
	key := []string{"x-api-key", adminKey}
	path := "/api/enable-script?shop=" + domain
	var first any
	for range 2 {
		r := e.send(t, "GET", path, "", key...)
		d, _ := r.data().(map[string]any)
		if r.Status != 200 || r.obj()["status"] != "success" || d["shop"] != shop.Domain || d["src"] != scriptURL || d["scriptTagId"] == "" {
			t.Fatalf("enable-script = %d %s", r.Status, r.Raw)
		}
		if first != nil && d["scriptTagId"] != first {
			t.Fatalf("enabling again made tag %v, want %v", d["scriptTagId"], first)
		}
		first = d["scriptTagId"]
	}
	if tags := e.fake.ScriptTags(domain); len(tags) != 1 || tags[0] != scriptURL {
		t.Fatalf("script tags on the platform: %v", tags)
	}

	wantError(t, e.send(t, "GET", path, ""), http.StatusUnauthorized)
	wantError(t, e.send(t, "GET", path, "", "x-api-key", "wrong"), http.StatusUnauthorized)
	wantError(t, e.send(t, "GET", "/api/enable-script", "", key...), http.StatusBadRequest)
	wantError(t, e.send(t, "GET", "/api/enable-script?shop=nobody.myshopify.com", "", key...), http.StatusNotFound)
	// A shop with no platform token (created without the install) cannot be served.
	wantError(t, e.send(t, "GET", "/api/enable-script?shop="+e.newShop().shop.Domain, "", key...), http.StatusBadRequest)
	e.fake.Fail(domain, platform.OpScriptTags, http.StatusForbidden)
	wantError(t, e.send(t, "GET", path, "", key...), http.StatusServiceUnavailable)
}
