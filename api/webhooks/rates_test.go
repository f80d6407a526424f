package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// TestCarrierRates: the carrier service's callback over real HTTP and
// Postgres answers the destination zone's rates, with the group's changes
// for the visitor a cart line's _lift_assignments names, and refuses what
// the platform never sends with the session envelope's statuses.
func TestCarrierRates(t *testing.T) {
	t.Parallel()
	url, domain, testID := ratesServer(t)
	cart := func(country, props string, quantity, grams int, currency string) string {
		return fmt.Sprintf(`{"rate":{"origin":{"country":"US"},"destination":{"country":%q,"postal_code":"10001"},`+
			`"items":[{"name":"Tee","quantity":%d,"grams":%d,"price":2400,"variant_id":44001,"properties":%s}],"currency":%q,"locale":"en"}}`,
			country, quantity, grams, props, currency)
	}
	body := func(country, props string) string { return cart(country, props, 1, 800, "USD") }
	const intl = `{"service_name":"International Standard","service_code":"gid://shopify/DeliveryMethodDefinition/5021","total_price":"1900","currency":"USD","description":""}`
	const freeIntl = `{"service_name":"Free international","service_code":"gid://shopify/DeliveryMethodDefinition/5023","total_price":"0","currency":"USD","description":""}`
	const light = `{"service_name":"Light parcel","service_code":"gid://shopify/DeliveryMethodDefinition/5024","total_price":"900","currency":"USD","description":""}`
	in := fmt.Sprintf(`{"_lift_assignments":"999:1,%d:1"}`, testID)
	for _, c := range []struct {
		name, domain, body, sig string
		status                  int
		want                    string
	}{
		{"the group's rate replaces the zone's", domain, body("US", in), "", 200,
			`{"rates":[{"service_name":"Standard","service_code":"gid://shopify/DeliveryMethodDefinition/5011","total_price":"495","currency":"USD","description":""},` +
				`{"service_name":"Express","service_code":"gid://shopify/DeliveryMethodDefinition/5012","total_price":"1495","currency":"USD","description":""}]}`},
		{"a line without assignments sees the zone's own", domain, body("US", "null"), "", 200,
			`{"rates":[{"service_name":"Standard","service_code":"gid://shopify/DeliveryMethodDefinition/5011","total_price":"695","currency":"USD","description":""},` +
				`{"service_name":"Express","service_code":"gid://shopify/DeliveryMethodDefinition/5012","total_price":"1495","currency":"USD","description":""}]}`},
		{"a property that is not text is no assignment", domain, body("US", `{"_lift_assignments":7}`), "", 200,
			`{"rates":[{"service_name":"Standard","service_code":"gid://shopify/DeliveryMethodDefinition/5011","total_price":"695","currency":"USD","description":""},` +
				`{"service_name":"Express","service_code":"gid://shopify/DeliveryMethodDefinition/5012","total_price":"1495","currency":"USD","description":""}]}`},
		{"another zone keeps its rates", domain, body("CA", in), "", 200, `{"rates":[` + intl + `]}`},
		// The zone's conditional rates: free from 100.00 (5 × 24.00 = 120.00),
		// a light parcel up to 500 g (2 × 200 g); a cart in another currency
		// is not judged on its subtotal.
		{"a subtotal at which a rate is free", domain, cart("CA", "null", 5, 800, "USD"), "", 200, `{"rates":[` + intl + `,` + freeIntl + `]}`},
		{"a weight a rate is for", domain, cart("CA", "null", 2, 200, "USD"), "", 200, `{"rates":[` + intl + `,` + light + `]}`},
		{"a subtotal in another currency", domain, cart("CA", "null", 1, 800, "CAD"), "", 200, `{"rates":[` + intl + `,` + freeIntl + `]}`},
		{"no zone ships there", domain, body("JP", in), "", 200, `{"rates":[]}`},
		{"bad signature", domain, body("US", in), "AAAA", 401, ""},
		{"not JSON", domain, `{"rate":`, "", 400, ""},
		{"no destination country", domain, `{"rate":{"items":[]}}`, "", 400, ""},
		{"a country that is no code", domain, body("us", in), "", 400, ""},
		{"unknown shop", "nope.myshopify.com", body("US", in), "", 404, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", url+webhooks.RatesPath, bytes.NewBufferString(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(webhooks.HeaderShop, c.domain)
			sig := webhooks.Sign([]byte(secret), []byte(c.body))
			if c.sig != "" {
				sig = c.sig
			}
			req.Header.Set(webhooks.HeaderSignature, sig)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status {
				t.Fatalf("status %d %s, want %d", res.StatusCode, raw, c.status)
			}
			if c.want != "" && string(raw) != c.want {
				t.Fatalf("body %s\nwant %s", raw, c.want)
			}
			var env struct{ Status, Message string }
			if c.status != 200 && (json.Unmarshal(raw, &env) != nil || env.Status != "error" || env.Message == "") {
				t.Fatalf("refusal %s is not the session envelope", raw)
			}
		})
	}
}

// ratesServer serves the rate callback over real Postgres for a shop with
// the demo catalog and a running shipping test whose group 1 charges 4.95
// for the domestic zone's Standard rate.
func ratesServer(t testing.TB) (url, domain string, testID int64) {
	t.Helper()
	ctx := context.Background()
	db := lifttest.DB(t)
	shop, err := db.CreateShop(ctx, experiment.Shop{Domain: lifttest.Name("rates-") + ".myshopify.com", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	intl := &f.DeliveryZones[1]
	intl.Rates = append(intl.Rates,
		experiment.ZoneRate{ID: "gid://shopify/DeliveryMethodDefinition/5023", Name: "Free international", Price: "0.00", MinSubtotal: "100.00"},
		experiment.ZoneRate{ID: "gid://shopify/DeliveryMethodDefinition/5024", Name: "Light parcel", Price: "9.00", MaxGrams: 500})
	if err := db.ImportCatalog(ctx, shop.ID, f); err != nil {
		t.Fatal(err)
	}
	const domestic = "gid://shopify/DeliveryZone/501"
	tt := lifttest.RunningTest(shop.ID, "Ship", time.Now().UTC())
	tt.Type = experiment.TypeShipping
	tt.Shared = map[string]json.RawMessage{"shipping": json.RawMessage(`{"zone_ids":["` + domestic + `"]}`)}
	tt.Groups[1].Content = json.RawMessage(`{"rates":[{"zone_id":"` + domestic +
		`","rate_id":"gid://shopify/DeliveryMethodDefinition/5011","name":"Standard","price":{"amount":"4.95","currency":"USD"}}]}`)
	lifttest.PutTest(t, db, tt)

	r := gin.New()
	(&webhooks.Handler{Secret: []byte(secret), MaxBodyBytes: maxBody, Shops: db,
		Rates: experiment.NewService(experiment.ServiceConfig{Repository: store.Experiments{DB: db}})}).Mount(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv.URL, shop.Domain, tt.ID
}

// FuzzCarrierRates: whatever a signed rate request's body holds, the
// callback answers 200 with rates or 400 in the session envelope, never a
// 5xx.
func FuzzCarrierRates(f *testing.F) {
	for _, s := range []string{`{"rate":{"destination":{"country":"US"},"items":[{"properties":{"_lift_assignments":"1:1"}}]}}`,
		`{"rate":{"destination":{"country":"CA"},"items":[{"properties":null}]}}`, `{"rate":{}}`, `[]`, `{"rate":{"items":[{"properties":{"_lift_assignments":"x:y,:,1:99999999"}}],"destination":{"country":"US"}}}`} {
		f.Add(s)
	}
	url, domain, _ := ratesServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		req, _ := http.NewRequest("POST", url+webhooks.RatesPath, bytes.NewBufferString(body))
		req.Header.Set(webhooks.HeaderShop, domain)
		req.Header.Set(webhooks.HeaderSignature, webhooks.Sign([]byte(secret), []byte(body)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 && res.StatusCode != 400 {
			t.Fatalf("%q answered %d %s", body, res.StatusCode, raw)
		}
	})
}
