// Package platform talks to the commerce platform's admin API on a shop's
// behalf: the side effects a launch needs before visitors can see a test.
// Admin is the interface the rest of Lift uses; Client implements it over
// HTTP, and Fake (fake.go) is a faithful in-process server of the same API
// for tests and `lift dev`.
package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
)

// Admin is what a launch needs from the platform: the domain's Platform
// port, which Client implements.
type Admin = experiment.Platform

// Error is a refused or failed platform call. It is the domain's
// PlatformError, so a launch can tell a platform refusal (the test fails,
// recorded) from a fault of ours without importing this package.
type Error = experiment.PlatformError

// Client calls the platform's admin API at BaseURL.
type Client struct {
	BaseURL string // e.g. https://admin.platform.example or the fake's URL
	Token   string // app credential sent as X-Platform-Access-Token
	HTTP    *http.Client

	// The app's OAuth credentials (platform.api_key, platform.api_secret),
	// for the install's code exchange (install.go).
	APIKey, APISecret string
	// Retry bounds retries of GraphQL calls on throttling and 5xx.
	Retry Retry
	// ProductInterval spaces a shop's product queries (part 8: one per
	// second). Default 1 s.
	ProductInterval time.Duration
	// BulkThreshold: a catalog of more products is read with one bulk
	// operation (bulk.go) instead of pages. Default DefaultBulkThreshold.
	BulkThreshold int
	// BulkPollInterval spaces the polls of a running bulk operation.
	// Default 2 s.
	BulkPollInterval time.Duration
	// Sleep and Now replace the clock in tests; nil uses the real one.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time

	throttle throttle
	bulk     bulkQueue
}

// NewClient returns a Client whose calls give up after 4 s: a launch runs
// inside a write that times out at 10 s, and a platform that does not answer
// must end the launch in `failed`, not roll it back unrecorded.
func NewClient(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimSuffix(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 4 * time.Second}}
}

// PrepareLaunch implements Admin: price tests get duplicate variants and a
// cart transform, theme and template tests the Lift app block in each theme
// they show, offer tests a discount function, shipping tests a carrier
// service. Every failure is an *Error naming the failed step.
func (c *Client) PrepareLaunch(ctx context.Context, shop *experiment.Shop, t *experiment.Test) error {
	for _, k := range t.BundledTypes() {
		var err error
		switch k {
		case experiment.TypePrice:
			err = c.preparePrice(ctx, shop, t)
		case experiment.TypeShipping:
			err = c.checkCarrier(ctx, shop)
		case experiment.TypeTheme, experiment.TypeTemplate, experiment.TypeVisualEditor:
			err = c.installBlocks(ctx, shop, t, k)
		case experiment.TypeOffer:
			err = c.call(ctx, shop, "create discount function", http.MethodPost, "/discount_functions",
				map[string]any{"experiment_id": fmt.Sprint(t.ID)}, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) preparePrice(ctx context.Context, shop *experiment.Shop, t *experiment.Test) error {
	var variants []string
	seen := map[string]bool{}
	for _, g := range t.Groups {
		var content struct {
			Prices []experiment.VariantPrice `json:"prices"`
			Price  *struct {
				Prices []experiment.VariantPrice `json:"prices"`
			} `json:"price"`
		}
		_ = json.Unmarshal(g.Content, &content)
		prices := content.Prices
		if content.Price != nil {
			prices = content.Price.Prices
		}
		for _, p := range prices {
			if !seen[p.ProductVariantID] {
				seen[p.ProductVariantID] = true
				variants = append(variants, p.ProductVariantID)
			}
		}
	}
	id := fmt.Sprint(t.ID)
	if err := c.call(ctx, shop, "duplicate variants", http.MethodPost, "/variants/duplicate",
		map[string]any{"experiment_id": id, "variant_ids": variants}, nil); err != nil {
		return err
	}
	return c.call(ctx, shop, "register cart transform", http.MethodPost, "/cart_transforms",
		map[string]any{"experiment_id": id}, nil)
}

func (c *Client) checkCarrier(ctx context.Context, shop *experiment.Shop) error {
	var out struct {
		CarrierServices []struct {
			ID     string `json:"id"`
			Active bool   `json:"active"`
		} `json:"carrier_services"`
	}
	if err := c.call(ctx, shop, "check carrier service", http.MethodGet, "/carrier_services", nil, &out); err != nil {
		return err
	}
	for _, s := range out.CarrierServices {
		if s.Active {
			return nil
		}
	}
	return c.call(ctx, shop, "register carrier service", http.MethodPost, "/carrier_services",
		map[string]any{"name": "Lift rates", "active": true}, nil)
}

func (c *Client) installBlocks(ctx context.Context, shop *experiment.Shop, t *experiment.Test, k experiment.Type) error {
	themes := map[string]bool{}
	if k == experiment.TypeTemplate {
		var s experiment.TemplateShared
		_ = json.Unmarshal(t.Shared[string(k)], &s)
		themes[s.ThemeID] = true
	}
	for _, g := range t.Groups {
		var c experiment.ThemeContent
		content := g.Content
		if t.Type == experiment.TypeCombined {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(g.Content, &m)
			content = m[string(k)]
		}
		if k == experiment.TypeTheme && json.Unmarshal(content, &c) == nil && c.ThemeID != "" {
			themes[c.ThemeID] = true
		}
	}
	if len(themes) == 0 {
		themes["main"] = true // the published theme carries the block
	}
	for id := range themes {
		if err := c.call(ctx, shop, "install theme app block", http.MethodPost,
			"/themes/"+url.PathEscape(id)+"/app_blocks", map[string]any{"block": "lift-experiment"}, nil); err != nil {
			return err
		}
	}
	return nil
}

func (c *Client) call(ctx context.Context, shop *experiment.Shop, op, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return &Error{Op: op, Message: err.Error()}
		}
		body = bytes.NewReader(b)
	}
	u := c.BaseURL + "/admin/shops/" + url.PathEscape(shop.Domain) + path
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return &Error{Op: op, Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Platform-Access-Token", c.Token)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return &Error{Op: op, Message: "platform unreachable: " + err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		if e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return &Error{Op: op, Status: resp.StatusCode, Message: e.Error}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return &Error{Op: op, Status: resp.StatusCode, Message: "unreadable answer: " + err.Error()}
		}
	}
	return nil
}
