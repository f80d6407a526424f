package results

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
)

// Session analytics (session document 2.3, 2.4, 4.3; docs/session-api.md):
// the admin panel's per-test, storewide, per-type and timeseries views of a
// test. They read the same per-group sums as snapshots, custom queries and
// exports (Warehouse.GroupMetrics), so the same population gives the same
// visitors, orders and revenue on every surface; only what no snapshot
// holds (store events outside the test, the cache's data version) comes
// through AnalyticsWarehouse.

// AnalyticsWarehouse is the warehouse port of session analytics beyond
// Warehouse.GroupMetrics. The warehouse package implements it on ClickHouse.
type AnalyticsWarehouse interface {
	// StorewideActivity counts, per group, every store event (whatever
	// test, if any, it carries) of the visitors q's test assigned in q's
	// window, filtered by f. Errors are the store's.
	StorewideActivity(ctx context.Context, q MetricsQuery, f AudienceFilter) ([]ActivityRow, error)
	// DataVersion is a cheap fingerprint of a test's rows (row counts and
	// newest receipt per table of its key range; with storewide, of the
	// shop's other events too): it changes whenever data for the test
	// arrives or is erased. Errors are the store's.
	DataVersion(ctx context.Context, shopID int64, experimentID string, storewide bool) (string, error)
}

// AudienceFilter narrows the visitors of an analytics request by what
// their assignment recorded; empty fields keep everyone.
type AudienceFilter struct {
	Countries   []string // two-letter codes, upper case
	Device      string   // desktop, mobile or tablet
	VisitorType string   // new or returning
}

// dimensions are the breakdown dimensions GroupMetrics must split by so the
// filter can keep the matching cells, in a fixed order.
func (f AudienceFilter) dimensions() []Dimension {
	var dims []Dimension
	if f.Device != "" {
		dims = append(dims, "device")
	}
	if len(f.Countries) > 0 {
		dims = append(dims, "country")
	}
	if f.VisitorType != "" {
		dims = append(dims, "visitor_type")
	}
	return dims
}

// keeps reports whether a breakdown cell (its values in dims' order) passes.
func (f AudienceFilter) keeps(dims []Dimension, key string) bool {
	values := strings.Split(key, KeySeparator)
	if len(values) != len(dims) {
		return false
	}
	for i, d := range dims {
		v := values[i]
		switch d {
		case "device":
			if v != f.Device {
				return false
			}
		case "country":
			if !slices.Contains(f.Countries, strings.ToUpper(v)) {
				return false
			}
		case "visitor_type":
			if v != f.VisitorType {
				return false
			}
		}
	}
	return true
}

// ActivityRow is one group's store-wide activity: units (visitors) that did
// something and how many distinct events they sent.
type ActivityRow struct {
	TestGroup       int
	ProductViewers  int64
	ProductViews    int64
	CartAdders      int64
	AddToCarts      int64
	CheckoutStarter int64
	CheckoutStarts  int64
	// StartersOrdered are the checkout starters whose own order counts
	// for the group: the overlap of starters and buyers.
	StartersOrdered int64
}

// AnalyticsConfig is what an Analytics service runs on.
type AnalyticsConfig struct {
	Tests     Tests
	Warehouse Warehouse
	Activity  AnalyticsWarehouse
	// CacheEntries bounds the response cache (default 512); CacheTTL is the
	// longest an answer is reused even when no new data arrived (default
	// 10 minutes), so a cache can never pin an answer forever.
	CacheEntries int
	CacheTTL     time.Duration
	Now          func() time.Time
}

// Analytics is the session analytics domain service.
type Analytics struct {
	cfg   AnalyticsConfig
	cache *responseCache
}

// NewAnalytics returns the service with defaults filled in.
func NewAnalytics(cfg AnalyticsConfig) *Analytics {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.CacheEntries = cmp.Or(cfg.CacheEntries, 512)
	cfg.CacheTTL = cmp.Or(cfg.CacheTTL, 10*time.Minute)
	return &Analytics{cfg: cfg, cache: newResponseCache(cfg.CacheEntries, cfg.CacheTTL, cfg.Now)}
}

// View names one analytics endpoint family of part 4.3.
type View string

const (
	ViewProduct     View = "product"
	ViewV1          View = "v1"
	ViewV2          View = "v2"
	ViewStorewideV1 View = "storewide_v1"
	ViewStorewideV2 View = "storewide_v2"
	ViewShipping    View = "shipping"
	ViewRedirect    View = "redirect"
	ViewTemplate    View = "template"
	ViewTheme       View = "theme"
	ViewCheckout    View = "checkout"
	ViewTimeseries  View = "timeseries"
)

// AnalyticsRequest is the standard analytics request of part 2.3 as sent;
// Report validates it. Empty Device and VisitorType mean ALL.
type AnalyticsRequest struct {
	DateStart   string   `json:"dateStart"`
	DateFinish  string   `json:"dateFinish"`
	Countries   []string `json:"countries,omitempty"`
	ProductIDs  []string `json:"productIds,omitempty"`
	DeviceType  string   `json:"deviceType,omitempty"`
	VisitorType string   `json:"visitorType,omitempty"`
}

// TimeseriesRequest is the timeseries body of part 4.3.
type TimeseriesRequest struct {
	DateStart  string  `json:"dateStart"`
	DateFinish string  `json:"dateFinish"`
	TotalViews []int64 `json:"totalViews"`
	Type       string  `json:"type,omitempty"` // "sales" or "" (conversion rate)
}

func invalid(format string, args ...any) error {
	return experiment.Errorf(experiment.KindInvalidRequest, "invalid_request", format, args...)
}

// analyticsWindow turns dateStart and dateFinish (an ISO 8601 date, or a
// date-time read in the shop's zone) into inclusive local dates.
func analyticsWindow(shop *experiment.Shop, start, finish string) (from, to string, err error) {
	loc := shop.Location()
	if from, err = localDate("dateStart", start, loc); err != nil {
		return "", "", err
	}
	if to, err = localDate("dateFinish", finish, loc); err != nil {
		return "", "", err
	}
	if from > to {
		return "", "", invalid("dateStart (%s) is after dateFinish (%s).", from, to)
	}
	return from, to, nil
}

func localDate(field, v string, loc *time.Location) (string, error) {
	d, err := parseLocalDate(field, v, loc)
	if err != nil {
		return "", err
	}
	return clampDate(d).Format(time.DateOnly), nil
}

// parseLocalDate reads v (a date, or a date-time taken to loc) as it was
// sent, before any clamping.
func parseLocalDate(field, v string, loc *time.Location) (time.Time, error) {
	if v == "" {
		return time.Time{}, invalid("%s is required: an ISO 8601 date such as 2026-06-01 or a date-time.", field)
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.In(loc), nil
	}
	// A date, or a date-time without an offset (what a date picker
	// gives): the shop's local time (analytics audit A7), whose date is
	// the one written. Read at noon: midnight may not exist on a day the
	// clocks jump (Santiago's 2026-09-06 read as September 5: review-3 R5).
	for _, layout := range localLayouts {
		if d, err := time.Parse(layout, v); err == nil {
			return time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, loc), nil
		}
	}
	return time.Time{}, invalid("%s must be an ISO 8601 date (2026-06-01) or date-time (2026-06-01T00:00:00Z, or 2026-06-01T00:00 in the shop's time); got %q.", field, v)
}

var localLayouts = []string{time.DateOnly, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"}

// The dates a window can hold: ClickHouse's Date ends at 2105-12-31 on
// 18.16 (2149 on current servers) and reads a date outside its range as
// 1970-01-01, so "since 1900" or "until 2200" would silently select nothing;
// no event is dated before 1970 or after 2105 either.
var (
	firstDate = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	lastDate  = time.Date(2105, 12, 31, 0, 0, 0, 0, time.UTC)
)

// clampDate keeps d's calendar date within [firstDate, lastDate], so an
// open-ended window (year 0, year 9999, an offset that crosses year 1)
// means "everything" instead of an error or nothing.
func clampDate(d time.Time) time.Time {
	day := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	switch {
	case day.Before(firstDate):
		return firstDate
	case day.After(lastDate):
		return lastDate
	}
	return day
}

var (
	countryCode   = regexp.MustCompile(`^[A-Za-z]{2}$`)
	productNumber = regexp.MustCompile(`^[0-9]{1,19}$`)
	devices       = map[string]string{"": "", "ALL": "", "DESKTOP": "desktop", "MOBILE": "mobile", "TABLET": "tablet"}
	visitorTypes  = map[string]string{"": "", "ALL": "", "VISITOR": "new", "CUSTOMER": "returning"}
)

// scope is a validated request: the metrics query (window, products) and
// the audience filter.
type scope struct {
	q        MetricsQuery
	filter   AudienceFilter
	currency string // the shop's: amounts round to its minor units
}

// scopeOf validates req against the test and the shop. Products of a test
// that enrolls products must be among them.
func scopeOf(shop *experiment.Shop, t *experiment.Test, req AnalyticsRequest) (scope, error) {
	from, to, err := analyticsWindow(shop, req.DateStart, req.DateFinish)
	if err != nil {
		return scope{}, err
	}
	s := scope{currency: shop.Currency, q: MetricsQuery{ShopID: shop.ID, ExperimentID: strconv.FormatInt(t.ID, 10), Timezone: shop.Location().String(),
		From: from, To: to, Basis: BasisVisitors}}
	var ok bool
	if s.filter.Device, ok = devices[req.DeviceType]; !ok {
		return scope{}, invalid("deviceType is ALL, DESKTOP, MOBILE or TABLET; got %q.", req.DeviceType)
	}
	if s.filter.VisitorType, ok = visitorTypes[req.VisitorType]; !ok {
		return scope{}, invalid("visitorType is ALL, VISITOR or CUSTOMER; got %q.", req.VisitorType)
	}
	for _, c := range req.Countries {
		if !countryCode.MatchString(c) {
			return scope{}, invalid("filterParams.countries holds two-letter country codes such as \"US\"; got %q.", c)
		}
		if c = strings.ToUpper(c); !slices.Contains(s.filter.Countries, c) {
			s.filter.Countries = append(s.filter.Countries, c)
		}
	}
	slices.Sort(s.filter.Countries)
	enrolled := EnrolledProducts(t)
	seen := map[string]bool{}
	for _, p := range req.ProductIDs {
		id := strings.TrimPrefix(p, "gid://shopify/Product/")
		if !productNumber.MatchString(id) {
			return scope{}, invalid("filterParams.productIds holds numeric product ids such as \"8101\"; got %q.", p)
		}
		if len(enrolled) > 0 && !slices.Contains(enrolled, id) {
			return scope{}, invalid("Product %q is not in this test.", p)
		}
		if !seen[id] {
			seen[id] = true
			s.q.ProductIDs = append(s.q.ProductIDs, id)
		}
		// The ids become literals of the queries: thousands of them took
		// ClickHouse past its query size, a 500 (analytics audit A2). No
		// test enrolls more products than this.
		if len(s.q.ProductIDs) > maxFilterProducts {
			return scope{}, invalid("filterParams.productIds names at most %d different products.", maxFilterProducts)
		}
	}
	slices.Sort(s.q.ProductIDs)
	return s, nil
}

// maxFilterProducts bounds the different products of filterParams.productIds:
// the most a price test may enroll, on shops with the raised limit.
const maxFilterProducts = experiment.RaisedProductLimit

// EnrolledProducts is the numeric ids of the products a test is about: a
// price test's products, an offer test's conditions, the products a content
// (visual_editor) part names; none for the other types, which act on the
// whole store.
func EnrolledProducts(t *experiment.Test) []string {
	var ids []string
	var price experiment.PriceShared
	if raw, ok := t.Shared[string(experiment.TypePrice)]; ok && json.Unmarshal(raw, &price) == nil {
		ids = price.ProductIDs
	}
	var visual experiment.VisualEditorShared
	if raw, ok := t.Shared[string(experiment.TypeVisualEditor)]; ok && json.Unmarshal(raw, &visual) == nil {
		ids = append(ids, visual.ProductIDs...)
	}
	if t.Type == experiment.TypeOffer {
		for _, g := range t.Groups {
			var oc experiment.OfferContent
			if g.Index > 0 && json.Unmarshal(g.Content, &oc) == nil && len(oc.Offers) > 0 && oc.Offers[0].Conditions != nil {
				ids = oc.Offers[0].Conditions.ProductIDs
				break
			}
		}
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if i := strings.LastIndexByte(id, '/'); i >= 0 {
			id = id[i+1:]
		}
		// A combined test may name a product in more than one part; the
		// product view's query takes each once.
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// groupSums reads the per-group sums of q for the audience of f: one
// GroupMetrics call split by the dimensions f filters on, its matching
// cells added up (sums over units add up, so with no filter this is
// exactly what a snapshot reads).
func (a *Analytics) groupSums(ctx context.Context, q MetricsQuery, f AudienceFilter, groups int) ([]Sums, error) {
	q.Breakdown = f.dimensions()
	rows, err := a.cfg.Warehouse.GroupMetrics(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("results.Analytics %s: %w", q.ExperimentID, err)
	}
	sums := make([]Sums, groups)
	for _, r := range rows {
		if r.TestGroup >= 0 && r.TestGroup < groups && (len(q.Breakdown) == 0 || f.keeps(q.Breakdown, r.Key)) {
			sums[r.TestGroup].Add(r.Sums)
		}
	}
	return sums, nil
}
