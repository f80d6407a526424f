package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

// moneyShop is one currency's shop in TestMoneyMinorUnitsEndToEnd: the
// orders it receives and what results and the export must show.
type moneyShop struct {
	currency string
	signed   []string // order totals sent by signed ORDERS_CREATE, group 1
	legacy   float64  // one legacy order (a JSON number), group 0
	// Per group: the revenue amount the v1 results must show.
	wantRevenue [2]string
	// The revenue column of the export, order by order (sorted).
	wantCSV []string
	// The cost column of an order: zero with the currency's decimals.
	wantZero string

	shop *experiment.Shop
	read string
	test *experiment.Test
}

// TestMoneyMinorUnitsEndToEnd: a JPY shop and a KWD shop each receive
// signed order webhooks (and one legacy order); the v1 results and the CSV
// export show exactly the totals sent, with the currency's ISO 4217 minor
// units (JPY none, KWD three), through the real program (webhooks, worker,
// ingest, ClickHouse, snapshot, v1 API, export).
func TestMoneyMinorUnitsEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const secret = "money-test-secret"
	s := newServer(t, func(c *config.Config) {
		c.Role = "all"
		c.Platform.WebhookSecret, c.SigningSecret = secret, secret
	})
	app, stopIngest := s.app, s.stop

	shops := []*moneyShop{
		{currency: "JPY", signed: []string{"1500", "2300"}, legacy: 990,
			wantRevenue: [2]string{"990", "3800"}, wantCSV: []string{"1500", "2300", "990"}, wantZero: "0"},
		{currency: "KWD", signed: []string{"12.345", "7.501"}, legacy: 0.125,
			wantRevenue: [2]string{"0.125", "19.846"}, wantCSV: []string{"0.125", "12.345", "7.501"}, wantZero: "0.000"},
	}
	started := time.Now().UTC().Add(-time.Minute)
	for _, m := range shops {
		var err error
		m.shop, err = app.DB.CreateShop(ctx, experiment.Shop{Domain: lifttest.Name("money-") + ".myshopify.com", Currency: m.currency})
		if err != nil {
			t.Fatal(err)
		}
		on := true
		if _, err := app.DB.UpdateShop(ctx, m.shop.ID, store.ShopUpdate{APIEnabled: &on}); err != nil {
			t.Fatal(err)
		}
		if _, m.read, err = app.DB.CreateToken(ctx, m.shop.ID, experiment.ScopeRead); err != nil {
			t.Fatal(err)
		}
		m.test = lifttest.RunningTest(m.shop.ID, "money "+m.currency, started)
		lifttest.PutTest(t, app.DB, m.test)
	}
	stopWorker, err := app.startWorker(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer stopWorker()

	for i, m := range shops {
		exp := strconv.FormatInt(m.test.ID, 10)
		for k, total := range m.signed {
			id := strconv.Itoa(8_000_000 + 10*i + k)
			sendSignedOrder(t, s.url, secret, m.shop.Domain, exp, id, total, m.currency)
		}
		body, _ := json.Marshal(map[string]any{"shop": m.shop.Domain, "experimentId": exp,
			"orderId": strconv.Itoa(8_100_000 + i), "testGroup": 0, "revenue": m.legacy, "visitorId": "legacy-" + exp})
		r := s.do("POST", "/api/analytics/order", "", string(body), "Content-Type", "application/json",
			"User-Agent", browserUA)
		if r.status >= 300 {
			t.Fatalf("legacy order = %d %s", r.status, r.raw)
		}
	}
	for _, m := range shops {
		waitSignedOrders(t, app.Warehouse, strconv.FormatInt(m.test.ID, 10), int64(len(m.signed)))
	}
	if err := stopIngest(ctx); err != nil { // drains the legacy orders into ClickHouse
		t.Fatal(err)
	}

	for _, m := range shops {
		t.Run(m.currency, func(t *testing.T) {
			exp := strconv.FormatInt(m.test.ID, 10)
			if err := app.results().TakeSnapshot(ctx, m.shop.ID, m.test.ID, false); err != nil {
				t.Fatal(err)
			}
			r := s.do("GET", "/v1/experiments/"+exp+"/results", m.read, "")
			if r.status != 200 {
				t.Fatalf("GET results = %d %s", r.status, r.raw)
			}
			var doc struct {
				TestGroups []struct {
					TestGroupIndex    int              `json:"test_group_index"`
					Orders            int64            `json:"orders"`
					Revenue           experiment.Money `json:"revenue"`
					AverageOrderValue experiment.Money `json:"average_order_value"`
				} `json:"test_groups"`
			}
			if err := json.Unmarshal(r.raw, &doc); err != nil || len(doc.TestGroups) != 2 {
				t.Fatalf("results %v: %s", err, r.raw)
			}
			for g, row := range doc.TestGroups {
				want := experiment.Money{Amount: m.wantRevenue[g], Currency: m.currency}
				if row.Revenue != want {
					t.Errorf("group %d revenue = %+v, want %+v", g, row.Revenue, want)
				}
				// Derived amounts carry the currency's minor units too.
				if decimals(row.AverageOrderValue.Amount) != decimals(m.wantZero) {
					t.Errorf("group %d average_order_value %q: want %d decimals", g, row.AverageOrderValue.Amount, decimals(m.wantZero))
				}
			}
			if doc.TestGroups[1].Orders != int64(len(m.signed)) || doc.TestGroups[0].Orders != 1 {
				t.Errorf("orders = %d, %d; want 1, %d", doc.TestGroups[0].Orders, doc.TestGroups[1].Orders, len(m.signed))
			}

			rows := exportCSV(t, s, m.read, exp)
			var revenues []string
			for _, row := range rows[1:] {
				revenues = append(revenues, row[6])
				if row[7] != m.wantZero || row[8] != row[6] || row[9] != m.currency {
					t.Errorf("export row %v: cost %q, profit %q, currency %q; want %s, the revenue, %s",
						row, row[7], row[8], row[9], m.wantZero, m.currency)
				}
			}
			sort.Strings(revenues)
			if strings.Join(revenues, " ") != strings.Join(m.wantCSV, " ") {
				t.Errorf("export revenues = %v, want %v", revenues, m.wantCSV)
			}
		})
	}
}

// decimals counts the digits after the point of a decimal string.
func decimals(s string) int {
	if _, frac, ok := strings.Cut(s, "."); ok {
		return len(frac)
	}
	return 0
}

// sendSignedOrder delivers a signed ORDERS_CREATE of total in currency,
// attributed to group 1 of exp by its cart attributes. Its one line names a
// variant the catalog does not know, so the order costs nothing.
func sendSignedOrder(t *testing.T, base, secret, shop, exp, id, total, currency string) {
	t.Helper()
	now := time.Now().UTC()
	body, _ := json.Marshal(map[string]any{
		"id": id, "created_at": now, "updated_at": now, "total_price": total, "currency": currency,
		"line_items": []map[string]any{{"product_id": "1", "variant_id": "1", "quantity": 1, "price": total}},
		"note_attributes": []map[string]string{{"name": experiment.AttrVisitorID, "value": "v-" + id},
			{"name": experiment.AttrAssignments, "value": exp + ":1"}},
	})
	req, _ := http.NewRequest("POST", base+"/api/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooks.HeaderTopic, experiment.TopicOrdersCreate)
	req.Header.Set(webhooks.HeaderShop, shop)
	req.Header.Set(webhooks.HeaderID, "money-"+id)
	req.Header.Set(webhooks.HeaderSignature, webhooks.Sign([]byte(secret), body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("webhook for order %s = %d", id, res.StatusCode)
	}
}

// exportCSV runs a v1 export of the test and returns its CSV rows, header
// first.
func exportCSV(t *testing.T, s *server, token, exp string) [][]string {
	t.Helper()
	r := s.do("POST", "/v1/experiments/"+exp+"/exports", token, "")
	if r.status != 202 {
		t.Fatalf("POST exports = %d %s", r.status, r.raw)
	}
	raw := waitFor(t, s, token, "/v1/exports/"+r.body["id"].(string), "completed")
	var x struct {
		DownloadURL string `json:"download_url"`
	}
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(x.DownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	d := s.do("GET", u.RequestURI(), "", "")
	rows, err := csv.NewReader(bytes.NewReader(d.raw)).ReadAll()
	if d.status != 200 || err != nil || len(rows) < 2 {
		t.Fatalf("download = %d, %v: %s", d.status, err, d.raw)
	}
	if fmt.Sprint(rows[0][6:10]) != "[revenue cost profit currency]" {
		t.Fatalf("export header = %v", rows[0])
	}
	return rows
}
