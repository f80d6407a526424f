package experiment

import (
	"regexp"
	"time"
)

// Shop is a store that installed Lift, with what its plan lets it do.
type Shop struct {
	ID       int64
	Domain   string // e.g. demo-shop.myshopify.com; unique
	Name     string
	Timezone string // IANA name; local dates of results are in it
	Currency string // ISO 4217 code of the shop's money

	APIEnabled         bool
	Plan               string
	Features           []string // plan features: price, offer, multi_market, checkout_blocks, carrier_service, …
	SubscriptionActive bool
	BillingCapReached  bool
	AllowanceExhausted bool // annual plans: the month's orders are used up
	AnnualBilling      bool
	RaisedProductLimit bool
	CarrierService     bool // an existing carrier service on the platform
	// AnalyticsMeasurementID is the shop's analytics-vendor id (GA4 "G-…");
	// empty turns the storefront's analytics metadata off.
	AnalyticsMeasurementID string
	InstalledAt            time.Time
	UninstalledAt          *time.Time
}

// HasFeature reports whether the shop's plan includes the feature slug.
func (s *Shop) HasFeature(slug string) bool {
	for _, f := range s.Features {
		if f == slug {
			return true
		}
	}
	return false
}

// measurementID is a GA4 measurement id as Google issues them: "G-" and
// upper-case letters and digits (G-XXXXXXXXXX).
var measurementID = regexp.MustCompile(`^G-[A-Z0-9]{4,20}$`)

// CheckMeasurementID refuses an analytics id the storefront's GA4 tag
// cannot use: a typo would be handed to every page and silently measure
// nothing. Empty is allowed: it turns the metadata off.
func CheckMeasurementID(id string) error {
	if id != "" && !measurementID.MatchString(id) {
		return Errorf(KindInvalidRequest, "invalid_request", "%q is not a GA4 measurement id: G- and upper-case letters and digits, e.g. G-ABC123DEF4; \"\" turns the metadata off.", id)
	}
	return nil
}

// Installed reports whether Lift may still act for the shop.
func (s *Shop) Installed() bool { return s.UninstalledAt == nil }

// Location is the shop's timezone, UTC when it has none Go knows: local
// dates (results, date-only settings) are dates in it.
func (s *Shop) Location() *time.Location {
	if loc, err := time.LoadLocation(s.Timezone); err == nil && s.Timezone != "" {
		return loc
	}
	return time.UTC
}

// Scope is an API token's permission.
type Scope string

const (
	ScopeRead  Scope = "read_experiments"
	ScopeWrite Scope = "write_experiments"
)

// Allows reports whether a token holding s may do what needs required.
// Write includes read.
func (s Scope) Allows(required Scope) bool {
	return s == required || (s == ScopeWrite && required == ScopeRead)
}

// Token is a public API credential. Only a hash of its secret is stored.
type Token struct {
	ID        int64
	ShopID    int64
	Scope     Scope
	CreatedAt time.Time
	RevokedAt *time.Time
}
