// Package platform talks to the commerce platform's admin API on a shop's
// behalf: the side effects a launch needs before visitors can see a test.
// Admin is the interface the rest of Lift uses; Client implements it over
// HTTP, and Fake (fake.go) is a faithful in-process server of the same API
// for tests and `lift dev`.
package platform

import (
	"context"
	"net/http"
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
	Token   string // app credential sent as X-Platform-Access-Token when Tokens has none
	HTTP    *http.Client
	// Tokens returns a shop's own access token (the one its install
	// stored); "" or nil falls back to Token.
	Tokens func(ctx context.Context, shop *experiment.Shop) (string, error)

	// The app's OAuth credentials (platform.api_key, platform.api_secret),
	// for the install's code exchange (install.go).
	APIKey, APISecret string
	// RatesURL is Lift's carrier service callback (http.public_url +
	// /api/carrier/rates) a shipping test's launch registers; required
	// to launch one.
	RatesURL string
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
