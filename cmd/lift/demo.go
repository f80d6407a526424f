package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// demoPriceTest is the walkthrough's price test: the tee at $24 against its
// regular price.
const demoPriceTest = `{"type":"price","name":"Organic Cotton Tee at $24","hypothesis":"A lower price lifts revenue per visitor",
 "primary_metric":"revenue_per_visitor","shared":{"price":{"product_ids":["gid://shopify/Product/8101"]}},
 "test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"$24","split":50,"content":{"prices":[
  {"product_variant_id":"gid://shopify/ProductVariant/44001","price":{"amount":"24.00","currency":"USD"}},
  {"product_variant_id":"gid://shopify/ProductVariant/44002","price":{"amount":"24.00","currency":"USD"}}]}}]}`

// demoTraffic gives a fresh demo shop something to look at: when it has no
// test yet, it creates and starts the walkthrough's price test through the
// API and plays loadgen's visitors against the storefront endpoints, with a
// planted effect (the variant converts better at a lower order value). When
// the visitors are done it takes a snapshot at once (snapshot), so the demo's
// results are there to read without waiting for the scheduler's first one.
func demoTraffic(ctx context.Context, base string, t demoTokens, visitors int, webhookSecret string,
	snapshot func(ctx context.Context, testID string) error, out io.Writer) error {
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := demoCall(ctx, "GET", base+"/v1/experiments?limit=1", t.Read, "", http.StatusOK, &list); err != nil || len(list.Data) > 0 {
		return err
	}
	var test struct {
		ID string `json:"id"`
	}
	if err := demoCall(ctx, "POST", base+"/v1/experiments", t.Write, demoPriceTest, http.StatusCreated, &test); err != nil {
		return err
	}
	if err := demoCall(ctx, "POST", base+"/v1/experiments/"+test.ID+"/start", t.Write, "", http.StatusOK, nil); err != nil {
		return err
	}
	fmt.Fprintf(out, "demo: started test %s, sending %d simulated visitors (lift loadgen) at a real browsing pace; this takes about 10 minutes…\n", test.ID, visitors)
	// Visitors browse for minutes (pages a minute apart on average), so many
	// browse at once; orders come as webhooks, costed from the catalog.
	lg := &loadgen{target: base, shop: demoDomain, experiment: test.ID, visitors: visitors, concurrency: 1500,
		duration: 10 * time.Minute, dwell: time.Minute, split: []float64{50, 50}, conversion: []float64{0.03, 0.04},
		addToCart: []float64{0.10, 0.12}, aov: []float64{80, 76}, botShare: 0.02, seed: 1, webhookSecret: webhookSecret}
	res, err := lg.run()
	if err != nil {
		return err
	}
	res.print(out)
	if err := snapshot(ctx, test.ID); err != nil {
		return fmt.Errorf("demo snapshot: %w", err)
	}
	fmt.Fprintf(out, "demo: results are ready: curl -s -H \"Authorization: Bearer %s\" %s/v1/experiments/%s/results\n", t.Read, base, test.ID)
	return nil
}

func demoCall(ctx context.Context, method, url, token, body string, want int, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("demo: %s %s = %d %s", method, url, resp.StatusCode, b)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(b, into)
}
