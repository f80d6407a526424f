package results

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
)

// cellWarehouse is an in-memory fake of the analytics ports: fixed cells
// keyed by device::country::visitor_type and date, reduced to the
// breakdown asked for, a settable data version, and call counts.
type cellWarehouse struct {
	mu      sync.Mutex
	cells   []cell
	version string
	calls   int
	during  func(*cellWarehouse) // runs inside GroupMetrics, as rows landing mid-query
}

type cell struct {
	device, country, vtype, date string
	group                        int
	sums                         Sums
}

func (w *cellWarehouse) GroupMetrics(_ context.Context, q MetricsQuery) ([]GroupRow, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	if w.during != nil {
		w.during(w)
	}
	byKey := map[[2]string]*GroupRow{}
	var out []*GroupRow
	for _, c := range w.cells {
		if c.date < q.From || c.date > q.To {
			continue
		}
		var parts []string
		for _, d := range q.Breakdown {
			parts = append(parts, map[Dimension]string{"device": c.device, "country": c.country, "visitor_type": c.vtype, "date": c.date}[d])
		}
		key := strings.Join(parts, KeySeparator)
		k := [2]string{key, string(rune('0' + c.group))}
		if byKey[k] == nil {
			byKey[k] = &GroupRow{Key: key, TestGroup: c.group}
			out = append(out, byKey[k])
		}
		byKey[k].Add(c.sums)
	}
	rows := make([]GroupRow, len(out))
	for i, r := range out {
		rows[i] = *r
	}
	return rows, nil
}

func (w *cellWarehouse) CustomEvents(context.Context, MetricsQuery) ([]CustomEventRow, error) {
	return nil, nil
}
func (w *cellWarehouse) WinsorCaps(context.Context, MetricsQuery, float64) (Caps, error) {
	return Caps{}, nil
}
func (w *cellWarehouse) Covariates(context.Context, MetricsQuery) ([]CovariateRow, error) {
	return nil, nil
}
func (w *cellWarehouse) ExportOrders(context.Context, int64, string, func(*ExportRow) error) (int64, error) {
	return 0, nil
}

func (w *cellWarehouse) StorewideActivity(context.Context, MetricsQuery, AudienceFilter) ([]ActivityRow, error) {
	return []ActivityRow{{TestGroup: 0, ProductViewers: 7, CartAdders: 4}, {TestGroup: 1, ProductViewers: 9, CartAdders: 6}}, nil
}

func (w *cellWarehouse) DataVersion(context.Context, int64, string, bool) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version, nil
}

type oneTest struct{ t *experiment.Test }

func (o oneTest) FindTestByID(_ context.Context, shopID, id int64) (*experiment.Test, error) {
	if shopID != o.t.ShopID || id != o.t.ID {
		return nil, experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test.")
	}
	return o.t, nil
}
func (o oneTest) FindShopByID(context.Context, int64) (*experiment.Shop, error) { return nil, nil }
func (o oneTest) CollectionProducts(context.Context, int64, string) ([]string, error) {
	return nil, nil
}

func analyticsFixture() (*Analytics, *cellWarehouse, *experiment.Shop, *experiment.Test) {
	shop := &experiment.Shop{ID: 7, Timezone: "UTC"}
	tt := &experiment.Test{ID: 42, ShopID: 7, Type: experiment.TypeURLRedirect,
		Groups: []experiment.Group{{Index: 0, Name: "Control"}, {Index: 1, Name: "Variant"}}}
	w := &cellWarehouse{version: "v1", cells: []cell{
		{"desktop", "US", "new", "2026-06-01", 0, Sums{N: 100, Converted: 10, Orders: 10, Revenue: 500}},
		{"mobile", "DE", "returning", "2026-06-01", 0, Sums{N: 50, Converted: 2, Orders: 2, Revenue: 80}},
		{"desktop", "US", "new", "2026-06-02", 1, Sums{N: 90, Converted: 18, Orders: 19, Revenue: 950}},
		{"mobile", "US", "returning", "2026-06-02", 1, Sums{N: 60, Converted: 3, Orders: 3, Revenue: 90}},
	}}
	a := NewAnalytics(AnalyticsConfig{Tests: oneTest{tt}, Warehouse: w, Activity: w})
	return a, w, shop, tt
}

func TestAnalyticsFiltersAddMatchingCells(t *testing.T) {
	t.Parallel()
	a, _, shop, tt := analyticsFixture()
	for _, tc := range []struct {
		name      string
		req       AnalyticsRequest
		views     []int64
		orders    []int64
		revenue   []float64
		hasSignif bool
	}{
		{"All", AnalyticsRequest{}, []int64{150, 150}, []int64{12, 22}, []float64{580, 1040}, true},
		{"Desktop", AnalyticsRequest{DeviceType: "DESKTOP"}, []int64{100, 90}, []int64{10, 19}, []float64{500, 950}, true},
		{"Countries", AnalyticsRequest{Countries: []string{"de"}}, []int64{50, 0}, []int64{2, 0}, []float64{80, 0}, false},
		{"Customers", AnalyticsRequest{VisitorType: "CUSTOMER", Countries: []string{"US", "DE"}}, []int64{50, 60}, []int64{2, 3}, []float64{80, 90}, false},
		{"OneDay", AnalyticsRequest{DateFinish: "2026-06-01T23:59:59Z"}, []int64{150, 0}, []int64{12, 0}, []float64{580, 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.DateStart = "2026-06-01"
			if tc.req.DateFinish == "" {
				tc.req.DateFinish = "2026-06-02"
			}
			body, err := a.Report(context.Background(), shop, tt.ID, ViewV1, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got VisitorReport
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.views, got.TotalViews); diff != "" {
				t.Errorf("totalViews (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.orders, got.TotalOrders); diff != "" {
				t.Errorf("totalOrders (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.revenue, got.TotalRevenue); diff != "" {
				t.Errorf("totalRevenue (-want +got):\n%s", diff)
			}
			if ok := got.Significance != nil && got.Significance.PValue != nil && got.Significance.TStat != nil; ok != tc.hasSignif {
				t.Errorf("significance %+v, want computable %v", got.Significance, tc.hasSignif)
			}
			if !tc.hasSignif && (got.Significance == nil || got.Significance.Reason == "") {
				t.Errorf("significance %+v: a comparison not computed says why", got.Significance)
			}
		})
	}
}

func TestAnalyticsCacheInvalidatesOnNewData(t *testing.T) {
	t.Parallel()
	a, w, shop, tt := analyticsFixture()
	ctx := context.Background()
	req := AnalyticsRequest{DateStart: "2026-06-01", DateFinish: "2026-06-02", Countries: []string{"us", "de"}}
	first, err := a.Report(ctx, shop, tt.ID, ViewV2, req)
	if err != nil {
		t.Fatal(err)
	}
	// The same request normalized differently (order, case) is the same entry.
	req.Countries = []string{"DE", "US"}
	again, err := a.Report(ctx, shop, tt.ID, ViewV2, req)
	if err != nil || string(again) != string(first) || w.calls != 1 {
		t.Fatalf("second answer: calls %d, err %v", w.calls, err)
	}
	w.mu.Lock()
	w.version = "v2"
	w.cells = append(w.cells, cell{"tablet", "US", "new", "2026-06-02", 1, Sums{N: 10, Converted: 1, Orders: 1, Revenue: 5}})
	w.mu.Unlock()
	fresh, err := a.Report(ctx, shop, tt.ID, ViewV2, req)
	if err != nil || w.calls != 2 || string(fresh) == string(first) {
		t.Fatalf("after new data: calls %d, same answer %v, err %v", w.calls, string(fresh) == string(first), err)
	}
}

// TestAnalyticsCacheSkipsAnAnswerNewerThanItsVersion: rows that land while
// an answer is computed must not be kept under the version read before,
// or a reset-analytics (back to that version) serves them again.
func TestAnalyticsCacheSkipsAnAnswerNewerThanItsVersion(t *testing.T) {
	t.Parallel()
	a, w, shop, tt := analyticsFixture()
	ctx := context.Background()
	before := slices.Clone(w.cells)
	w.during = func(w *cellWarehouse) { // the first rows of the day arrive mid-query
		w.cells = append(w.cells, cell{"tablet", "US", "new", "2026-06-02", 1, Sums{N: 10, Converted: 1, Orders: 1, Revenue: 5}})
		w.version, w.during = "v2", nil
	}
	req := AnalyticsRequest{DateStart: "2026-06-01", DateFinish: "2026-06-02"}
	if _, err := a.Report(ctx, shop, tt.ID, ViewV2, req); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.cells, w.version = before, "v1" // reset-analytics: the rows go, the version returns
	w.mu.Unlock()
	got, err := a.Report(ctx, shop, tt.ID, ViewV2, req)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, _, _ := analyticsFixture()
	want, err := fresh.Report(ctx, shop, tt.ID, ViewV2, req)
	if err != nil {
		t.Fatal(err)
	}
	if w.calls != 2 || string(got) != string(want) {
		t.Fatalf("after the reset: %d queries, answer\n%s\nwant\n%s", w.calls, got, want)
	}
}

func TestResponseCacheBoundsAndExpires(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	c := newResponseCache(2, time.Minute, func() time.Time { return now })
	c.put("a", json.RawMessage(`1`))
	c.put("b", json.RawMessage(`2`))
	c.get("a") // a is now the most recent; b goes first
	c.put("c", json.RawMessage(`3`))
	if _, ok := c.get("b"); ok || c.len() != 2 {
		t.Fatalf("b kept or %d entries", c.len())
	}
	if v, ok := c.get("a"); !ok || string(v) != "1" {
		t.Fatal("a evicted")
	}
	now = now.Add(time.Minute)
	if _, ok := c.get("a"); ok {
		t.Fatal("a outlived its TTL")
	}
}

func TestAnalyticsBadRequests(t *testing.T) {
	t.Parallel()
	a, _, shop, tt := analyticsFixture()
	priced := *tt
	priced.ID = 43
	priced.Shared = map[string]json.RawMessage{string(experiment.TypePrice): json.RawMessage(`{"product_ids":["gid://shopify/Product/8101"]}`)}
	ok := AnalyticsRequest{DateStart: "2026-06-01", DateFinish: "2026-06-02"}
	with := func(f func(r *AnalyticsRequest)) AnalyticsRequest { r := ok; f(&r); return r }
	for _, tc := range []struct {
		name string
		t    *experiment.Test
		req  AnalyticsRequest
		want string
	}{
		{"NoStart", tt, with(func(r *AnalyticsRequest) { r.DateStart = "" }), "dateStart is required"},
		{"BadFinish", tt, with(func(r *AnalyticsRequest) { r.DateFinish = "06/02/2026" }), "dateFinish must be an ISO 8601"},
		{"Reversed", tt, with(func(r *AnalyticsRequest) { r.DateStart = "2026-06-03" }), "is after dateFinish"},
		{"Device", tt, with(func(r *AnalyticsRequest) { r.DeviceType = "PHONE" }), "deviceType is ALL"},
		{"VisitorType", tt, with(func(r *AnalyticsRequest) { r.VisitorType = "new" }), "visitorType is ALL"},
		{"Country", tt, with(func(r *AnalyticsRequest) { r.Countries = []string{"USA"} }), "two-letter"},
		{"ProductID", tt, with(func(r *AnalyticsRequest) { r.ProductIDs = []string{"tee"} }), "numeric product ids"},
		{"NotEnrolled", &priced, with(func(r *AnalyticsRequest) { r.ProductIDs = []string{"8102"} }), "not in this test"},
		// Thousands of ids overflowed ClickHouse's query size: a 500 (analytics audit A2).
		{"TooManyProducts", tt, with(func(r *AnalyticsRequest) {
			for i := range maxFilterProducts + 1 {
				r.ProductIDs = append(r.ProductIDs, strconv.Itoa(9000000+i))
			}
		}), "at most 500 different products"},
		{"ManyTimesTheSameProduct", tt, with(func(r *AnalyticsRequest) {
			for range 10 * maxFilterProducts {
				r.ProductIDs = append(r.ProductIDs, "8101")
			}
			r.DeviceType = "PHONE" // refused for this, not for the products
		}), "deviceType is ALL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scopeOf(shop, tc.t, tc.req)
			e, isErr := experiment.AsError(err)
			if !isErr || e.Kind != experiment.KindInvalidRequest || e.Code != "invalid_request" || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("err = %v, want invalid_request %q", err, tc.want)
			}
		})
	}
	if _, err := scopeOf(shop, &priced, with(func(r *AnalyticsRequest) { r.ProductIDs = []string{"8101"} })); err != nil {
		t.Fatalf("an enrolled product: %v", err)
	}
	if _, err := a.Report(context.Background(), shop, 999, ViewV1, ok); !experiment.IsNotFound(err) {
		t.Fatalf("unknown test: %v", err)
	}
}

// timeseries answers req and decodes the answer.
func timeseries(t *testing.T, a *Analytics, shop *experiment.Shop, tt *experiment.Test, req TimeseriesRequest) TimeseriesReport {
	t.Helper()
	body, err := a.Timeseries(context.Background(), shop, tt.ID, req)
	if err != nil {
		t.Fatal(err)
	}
	var got TimeseriesReport
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTimeseriesIsCumulative(t *testing.T) {
	t.Parallel()
	a, _, shop, tt := analyticsFixture()
	got := timeseries(t, a, shop, tt, TimeseriesRequest{DateStart: "2026-05-31", DateFinish: "2026-06-02", TotalViews: []int64{150, 150}})
	if len(got.TimeSeriesData) != 3 || got.TimeSeriesData[0].Date != "2026-05-31" || got.TimeSeriesData[2].Date != "2026-06-02" {
		t.Fatalf("dates: %+v", got.TimeSeriesData)
	}
	// Nothing to compare before the variant has visitors; the last day is the whole range.
	if got.TimeSeriesData[1].Significance != 0 || got.TimeSeriesData[2].Significance != got.OverallSignificance ||
		!(got.OverallSignificance > 0.8 && got.OverallSignificance < 1) {
		t.Fatalf("significance: %+v", got)
	}
	for _, bad := range []TimeseriesRequest{
		{DateStart: "2026-06-01", DateFinish: "2026-06-02"},
		{DateStart: "2026-06-01", DateFinish: "2026-06-02", TotalViews: []int64{1}},
		{DateStart: "2026-06-01", DateFinish: "2026-06-02", TotalViews: []int64{1, -1}},
		{DateStart: "2026-06-01", DateFinish: "2026-06-02", TotalViews: []int64{1, 1}, Type: "revenue"},
		// Dates the warehouse cannot hold: other views clamp them, a
		// timeseries would plot dates nobody asked for.
		{DateStart: "1969-12-30", DateFinish: "1970-01-02", TotalViews: []int64{1, 1}},
		{DateStart: "0001-01-01", DateFinish: "0001-01-02", TotalViews: []int64{1, 1}},
		{DateStart: "2105-12-30", DateFinish: "2106-01-02", TotalViews: []int64{1, 1}},
	} {
		if _, err := a.Timeseries(context.Background(), shop, tt.ID, bad); !isInvalid(err) {
			t.Errorf("%+v: want invalid_request, got %v", bad, err)
		}
	}
}

// TestTimeseriesEndsToday: no point after the shop's today, which is a
// calendar date of the shop's timezone (analytics audit A9: days to come
// carried today's value forward).
func TestTimeseriesEndsToday(t *testing.T) {
	t.Parallel()
	_, w, _, tt := analyticsFixture()
	now := time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC)
	a := NewAnalytics(AnalyticsConfig{Tests: oneTest{tt}, Warehouse: w, Activity: w, Now: func() time.Time { return now }})
	for _, tc := range []struct {
		timezone string
		want     []string
	}{
		{"UTC", []string{"2026-05-31", "2026-06-01"}},
		{"Pacific/Auckland", []string{"2026-05-31", "2026-06-01", "2026-06-02"}}, // 01:00 on June 2 there
		{"America/Los_Angeles", []string{"2026-05-31", "2026-06-01"}},
	} {
		shop := &experiment.Shop{ID: 7, Timezone: tc.timezone}
		got := timeseries(t, a, shop, tt, TimeseriesRequest{DateStart: "2026-05-31", DateFinish: "2026-06-30", TotalViews: []int64{1, 1}})
		var dates []string
		for _, p := range got.TimeSeriesData {
			dates = append(dates, p.Date)
		}
		if !slices.Equal(dates, tc.want) {
			t.Errorf("%s: dates %v, want %v", tc.timezone, dates, tc.want)
		}
	}
}

func isInvalid(err error) bool {
	e, ok := experiment.AsError(err)
	return ok && e.Kind == experiment.KindInvalidRequest
}

// TestSignificanceIsStatsWelch: the desktop cells are 10/100 against
// 18/90; stats' Welch comparison of the difference gives p, the interval
// around 0.1, and t = 0.1 / sqrt(0.1·0.9/100 + 0.2·0.8/90).
func TestSignificanceIsStatsWelch(t *testing.T) {
	t.Parallel()
	a, _, shop, tt := analyticsFixture()
	body, err := a.Report(context.Background(), shop, tt.ID, ViewRedirect,
		AnalyticsRequest{DateStart: "2026-06-01", DateFinish: "2026-06-02", DeviceType: "DESKTOP"})
	if err != nil {
		t.Fatal(err)
	}
	var got TypeReport
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	s := got.Significance
	wantT := 0.1 / math.Sqrt(0.1*0.9/100+0.2*0.8/90)
	if s == nil || s.TStat == nil || math.Abs(*s.TStat-wantT) > 1e-9 || len(s.ConfidenceInterval) != 2 ||
		!(s.ConfidenceInterval[0] < 0.1 && 0.1 < s.ConfidenceInterval[1]) || !(*s.PValue > 0.05 && *s.PValue < 0.07) {
		t.Fatalf("significance %+v, want t %.4f", s, wantT)
	}
	if diff := cmp.Diff([]int64{100, 90}, got.LandingVisitors); diff != "" {
		t.Errorf("landingVisitors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{10, 18}, got.LandingConversions); diff != "" {
		t.Errorf("landingConversions (-want +got):\n%s", diff)
	}
}

// TestSignificanceFollowsTheTestsOptions: a sequential test's admin-panel
// significance is the always-valid one, as its snapshot's is: the panel and
// its daily timeseries are read every day, the peeking the option guards
// against (stats audit S4). Same data, so the p-value and the interval grow
// and the timeseries' confidence falls.
func TestSignificanceFollowsTheTestsOptions(t *testing.T) {
	t.Parallel()
	read := func(opts experiment.AnalysisOptions) (*Significance, float64) {
		a, w, shop, tt := analyticsFixture() // its own cache
		tt.Analysis = opts
		for i := range w.cells { // ten times the visitors: a control rate sequential can bound
			c := &w.cells[i].sums
			c.N, c.Converted, c.Orders, c.Revenue = 10*c.N, 10*c.Converted, 10*c.Orders, 10*c.Revenue
		}
		body, err := a.Report(context.Background(), shop, tt.ID, ViewV1, AnalyticsRequest{DateStart: "2026-06-01", DateFinish: "2026-06-02"})
		if err != nil {
			t.Fatal(err)
		}
		var got VisitorReport
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		ts, err := a.Timeseries(context.Background(), shop, tt.ID,
			TimeseriesRequest{DateStart: "2026-06-01", DateFinish: "2026-06-02", TotalViews: []int64{1500, 1500}})
		if err != nil {
			t.Fatal(err)
		}
		var series TimeseriesReport
		if err := json.Unmarshal(ts, &series); err != nil {
			t.Fatal(err)
		}
		return got.Significance, series.OverallSignificance
	}
	fixed, fixedConf := read(experiment.DefaultAnalysis())
	seq, seqConf := read(experiment.AnalysisOptions{Sequential: true, Winsorize: 0.99, Correction: experiment.CorrectionNone})
	if fixed == nil || seq == nil || fixed.PValue == nil || seq.PValue == nil {
		t.Fatalf("significance fixed %+v, sequential %+v", fixed, seq)
	}
	wide := func(s *Significance) float64 { return s.ConfidenceInterval[1] - s.ConfidenceInterval[0] }
	if !(*seq.PValue > *fixed.PValue) || !(wide(seq) > wide(fixed)) || !(seqConf < fixedConf) {
		t.Errorf("sequential p %v, width %v, confidence %v; fixed p %v, width %v, confidence %v: want the sequential ones more cautious",
			*seq.PValue, wide(seq), seqConf, *fixed.PValue, wide(fixed), fixedConf)
	}
}

// TestEnrolledProductsPerType: the productIds filter and the product view
// scope to the products a test names, whichever part names them; a test
// naming none leaves the filter open.
func TestEnrolledProductsPerType(t *testing.T) {
	t.Parallel()
	_, _, shop, base := analyticsFixture()
	test := func(typ experiment.Type, shared string) *experiment.Test {
		x := *base
		x.Type = typ
		if shared != "" {
			if err := json.Unmarshal([]byte(shared), &x.Shared); err != nil {
				t.Fatal(err)
			}
		}
		return &x
	}
	offer := test(experiment.TypeOffer, "")
	offer.Groups = []experiment.Group{{Index: 0}, {Index: 1, Content: json.RawMessage(
		`{"offers":[{"key":"k","title":"T","discount":{"type":"percentage","value":"10"},"conditions":{"product_ids":["gid://shopify/Product/8102"]}}]}`)}}
	ok := AnalyticsRequest{DateStart: "2026-06-01", DateFinish: "2026-06-02"}
	for _, tc := range []struct {
		name string
		t    *experiment.Test
		want []string
		// refused is a product the filter must refuse; empty when any passes.
		refused string
	}{
		{"Price", test(experiment.TypePrice, `{"price":{"product_ids":["gid://shopify/Product/8101"]}}`), []string{"8101"}, "8107"},
		{"Offer", offer, []string{"8102"}, "8101"},
		{"Content", test(experiment.TypeVisualEditor, `{"visual_editor":{"product_ids":["gid://shopify/Product/8107","gid://shopify/Product/8108"]}}`),
			[]string{"8107", "8108"}, "8101"},
		{"ContentWithoutProducts", test(experiment.TypeVisualEditor, `{"visual_editor":{}}`), []string{}, ""},
		{"ContentWithoutShared", test(experiment.TypeVisualEditor, ""), []string{}, ""},
		{"CombinedOnceEach", test(experiment.TypeCombined, `{"price":{"product_ids":["gid://shopify/Product/8101"]},
			"visual_editor":{"product_ids":["gid://shopify/Product/8101","gid://shopify/Product/8107"]}}`), []string{"8101", "8107"}, "8102"},
		{"Redirect", test(experiment.TypeURLRedirect, `{"url_redirect":{"source_path":"/"}}`), []string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := EnrolledProducts(tc.t)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("enrolled products mismatch (-want +got):\n%s", diff)
			}
			for _, id := range got {
				if _, err := scopeOf(shop, tc.t, AnalyticsRequest{DateStart: ok.DateStart, DateFinish: ok.DateFinish, ProductIDs: []string{id}}); err != nil {
					t.Fatalf("filter on enrolled product %s: %v", id, err)
				}
			}
			if tc.refused == "" {
				return
			}
			_, err := scopeOf(shop, tc.t, AnalyticsRequest{DateStart: ok.DateStart, DateFinish: ok.DateFinish, ProductIDs: []string{tc.refused}})
			if e, isErr := experiment.AsError(err); !isErr || e.Code != "invalid_request" || !strings.Contains(e.Message, "not in this test") {
				t.Fatalf("filter on %s: err = %v, want it refused as not in this test", tc.refused, err)
			}
		})
	}
}
