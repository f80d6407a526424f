package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// resultsAppChromium finds Debian's chromium. Without it the browser tests
// skip, unless LIFT_REQUIRE_BROWSER is set (make test installs chromium).
func resultsAppChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("LIFT_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is not installed and LIFT_REQUIRE_BROWSER is set: install Debian's chromium (make test does)")
	}
	t.Skip("skipping the browser test: chromium is not installed (make test installs it; set LIFT_REQUIRE_BROWSER=1 to fail instead)")
	return ""
}

// resultsAppBrowser is a headless chromium for one test. It records what
// the page should never do: throw, log an error (a CSP refusal is one) or
// send a token anywhere but this server's /v1.
type resultsAppBrowser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
	bearers  []string // URLs of requests that carried Authorization
}

func newResultsAppBrowser(t *testing.T, timeout time.Duration) *resultsAppBrowser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(resultsAppChromium(t)),
		chromedp.WindowSize(1280, 800), chromedp.Flag("lang", "en-US"))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // chromium refuses to sandbox as root
	}
	b := &resultsAppBrowser{}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	// The first Do starts the browser, bound to bctx; the timeout goes on
	// the actions only (a timeout on the first Do would end the browser).
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, timeout)
	t.Cleanup(cancel)
	b.ctx = ctx
	return b
}

// listen runs in the tab's event loop: record and return.
func (b *resultsAppBrowser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		if d.Exception != nil && d.Exception.Description != "" {
			b.problems = append(b.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, d.Exception.Description))
		} else {
			b.problems = append(b.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, d.Text))
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			b.problems = append(b.problems, "console.error")
		}
	case *cdplog.EventEntryAdded:
		// Failed requests are the API's answers (a 401 the page
		// explains); anything else logged as an error is a fault.
		if e.Entry.Level == cdplog.EntryLevelError && e.Entry.Source != cdplog.EntrySourceNetwork {
			b.problems = append(b.problems, fmt.Sprintf("%s: %s", e.Entry.Source, e.Entry.Text))
		}
	case *network.EventRequestWillBeSent:
		if _, ok := e.Request.Headers["Authorization"]; ok {
			b.bearers = append(b.bearers, e.Request.URL)
		}
	}
}

func (b *resultsAppBrowser) do(t *testing.T, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// resultsAppRun runs one action that answers a value.
func resultsAppRun[T any](t *testing.T, b *resultsAppBrowser, step string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return v
}

// resultsAppSnapshot is what the test reads of GET …/results.
type resultsAppSnapshot struct {
	Outcome               string `json:"outcome"`
	WinningTestGroupIndex *int   `json:"winning_test_group_index"`
	SRMStatus             string `json:"srm_status"`
	TestGroups            []struct {
		Index          int              `json:"test_group_index"`
		SampleSize     int64            `json:"sample_size"`
		Orders         int64            `json:"orders"`
		ConversionRate float64          `json:"conversion_rate"`
		Revenue        experiment.Money `json:"revenue"`
		RPV            experiment.Money `json:"revenue_per_visitor"`
		VsControl      map[string]*struct {
			Lift     *float64 `json:"lift"`
			Bayesian *struct {
				ProbBeatControl float64 `json:"prob_beat_control"`
			} `json:"bayesian"`
		} `json:"vs_control"`
	} `json:"test_groups"`
}

// resultsAppDOM is what the page shows, read out of its DOM as text.
type resultsAppDOM struct {
	Outcome, Winner, OutcomeText, SRM string
	Days                              string
	Groups                            []struct {
		Group                              int
		Name, Visitors, Orders, Conversion string
		Revenue                            string
	}
	Comparison []struct {
		Group      int
		Lift, Prob string
	}
	Breakdown []struct {
		Value    string
		Group    int
		Visitors string
	}
}

const resultsAppReadDOM = `(() => {
  const txt = (root, sel) => { const el = sel ? root.querySelector(sel) : root; return el ? el.textContent.trim() : ''; };
  const rows = (sel) => [...document.querySelectorAll(sel)];
  const o = document.getElementById('outcome');
  return {
    Outcome: o.dataset.outcome, Winner: o.dataset.winner, OutcomeText: txt(o), SRM: document.getElementById('srm').dataset.status,
    Days: document.getElementById('chart').dataset.days || '',
    Groups: rows('#groups tbody tr').map((tr) => ({ Group: +tr.dataset.group, Name: txt(tr, 'th'),
      Visitors: txt(tr, '[data-metric=sample_size]'), Orders: txt(tr, '[data-metric=orders]'),
      Conversion: txt(tr, '[data-metric=conversion_rate]'), Revenue: txt(tr, '[data-metric=revenue]') })),
    Comparison: rows('#comparison tbody tr').map((tr) => ({ Group: +tr.dataset.group,
      Lift: txt(tr, '[data-metric=lift]'), Prob: txt(tr, '[data-metric=prob_beat_control]') })),
    Breakdown: rows('#breakdown-table tbody tr').map((tr) => ({ Value: tr.dataset.value, Group: +tr.dataset.group,
      Visitors: txt(tr, '[data-metric=sample_size]') })),
  };
})()`

// resultsAppPainted counts the chart canvas's pixels that are not blank.
const resultsAppPainted = `(() => {
  const c = document.querySelector('#chart canvas');
  if (!c || !c.width || !c.height) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
  return n;
})()`

var nonNumber = regexp.MustCompile(`[^0-9.+-]`)

// number reads a figure as the page prints it ("1,234", "5.12%", "+12.3%",
// "$1,234.56").
func number(t *testing.T, what, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(nonNumber.ReplaceAllString(s, ""), 64)
	if err != nil {
		t.Fatalf("%s: the page shows %q, not a number", what, s)
	}
	return f
}

// near checks a printed figure against the API's to the printed precision.
func near(t *testing.T, what, shown string, want float64, halfUnit float64) {
	t.Helper()
	if got := number(t, what, shown); math.Abs(got-want) > halfUnit+1e-9 {
		t.Errorf("%s: the page shows %q, the API says %v", what, shown, want)
	}
}

// TestResultsAppShowsThePlantedWinner opens /app/ in headless chromium
// with a read token on a test whose variant converts 4× as often, and
// holds what the page shows to GET /v1/experiments/{id}/results: the
// winner, the split check, every group's visitors, orders, conversion and
// revenue, each variant's lift and chance to beat the control; that the
// daily chart is drawn, the device breakdown adds up to the groups, the
// export link downloads the orders; that at a 390 px phone width nothing
// overflows; that the token leaves the URL and goes only to /v1; and that
// a refused token is explained in plain words. Screenshots at desktop and
// phone width (and of the list of tests) land in .lift/screenshots/.
func TestResultsAppShowsThePlantedWinner(t *testing.T) {
	t.Parallel()
	resultsAppChromium(t) // skip before setting up stores
	ctx := context.Background()
	s := newServer(t, func(c *config.Config) { c.SigningSecret = "results-app-test-secret" })
	shop, read, _ := s.shop(true)
	started := time.Now().UTC().Add(-3*24*time.Hour - time.Hour)
	tt := &experiment.Test{ShopID: shop.ID, Type: experiment.TypeURLRedirect, Status: experiment.StatusActive, Name: "Free shipping banner",
		TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Groups:    []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Banner", Split: 50}},
		CreatedAt: started, UpdatedAt: started, StartedAt: &started}
	lifttest.PutTest(t, s.app.DB, tt)
	draft := &experiment.Test{ShopID: shop.ID, Type: experiment.TypeURLRedirect, Status: experiment.StatusDraft,
		Name: "Next idea", TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Groups:    []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}},
		CreatedAt: started, UpdatedAt: started}
	lifttest.PutTest(t, s.app.DB, draft)
	failed := &experiment.Test{ShopID: shop.ID, Type: experiment.TypeURLRedirect, Status: experiment.StatusFailed,
		Name: "Blocked launch", TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Groups:    []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}},
		CreatedAt: started, UpdatedAt: started,
		FailureReason: `The scheduled start was refused: Test 7 ("Tee at $24", active) already changes the price of product gid://shopify/Product/8101 for the visitors this test would reach.`}
	lifttest.PutTest(t, s.app.DB, failed)
	lifttest.PlantVisitorsDaily(t, s.app.Warehouse, shop.ID, tt.ID, started, 4, 200, []float64{0.03, 0.12}, 60)
	if err := s.app.results().TakeSnapshot(ctx, shop.ID, tt.ID, false); err != nil {
		t.Fatal(err)
	}
	stopWorker, err := s.app.startWorker(ctx, time.Second) // computes the page's custom queries and export
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopWorker)
	exp := strconv.FormatInt(tt.ID, 10)
	r := s.do("GET", "/v1/experiments/"+exp+"/results", read, "")
	var api resultsAppSnapshot
	if err := json.Unmarshal(r.raw, &api); r.status != 200 || err != nil {
		t.Fatalf("GET results = %d %s (%v)", r.status, r.raw, err)
	}
	if api.Outcome != "winner" || api.WinningTestGroupIndex == nil || *api.WinningTestGroupIndex != 1 {
		t.Fatalf("the API does not find the planted winner: outcome %s %v", api.Outcome, api.WinningTestGroupIndex)
	}

	b := newResultsAppBrowser(t, 4*time.Minute)
	testLink := chromedp.CSS(`#tests a[data-test-id="` + exp + `"]`)
	b.do(t, "open the app with #token=", chromedp.Navigate(s.url+"/app/#token="+read), chromedp.WaitVisible(testLink))
	if href := resultsAppRun(t, b, "read the URL", chromedp.Evaluate[string](`location.href`)); strings.Contains(href, read) {
		t.Errorf("after sign-in the URL is %q: the token must leave the address bar", href)
	}
	if kept := resultsAppRun(t, b, "read sessionStorage", chromedp.Evaluate[string](`sessionStorage.getItem('lift.token')`)); kept != read {
		t.Errorf("sessionStorage holds %q, want the token", kept)
	}
	resultsAppScreenshot(t, b, "results-app-tests.png")
	b.do(t, "open the test", chromedp.Click(testLink), chromedp.WaitVisible(chromedp.ID("outcome")),
		chromedp.WaitVisible(chromedp.CSS(`#chart[data-state="drawn"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#breakdown[data-state="ready"]`)))
	resultsAppCompare(t, api, resultsAppRun(t, b, "read the page", chromedp.Evaluate[resultsAppDOM](resultsAppReadDOM)))
	// The chart cumulates the daily rows of a custom query by date: its
	// last point is the whole run, so it must land on the snapshot's rate.
	last := resultsAppRun(t, b, "read the chart's series", chromedp.Evaluate[[]float64](
		`document.getElementById('chart')._plot.data.slice(1).map((s) => s[s.length - 1])`))
	for i, g := range api.TestGroups {
		if i >= len(last) || math.Abs(last[i]-g.ConversionRate) > 1e-9 {
			t.Errorf("the chart ends at %v for group %d, the results' conversion is %v", last, g.Index, g.ConversionRate)
		}
	}

	// The keyboard reaches what the mouse does: focus moved to the test's
	// heading (the link that led there is gone), and the chart's figures
	// are also a table, whose last row is the chart's last point. Times
	// name their zone, as the date ranges beside them are the shop's days.
	type access struct {
		Focused, Days, Started string
		Rows                   int
		Last                   []string
	}
	a := resultsAppRun(t, b, "read focus and the chart's table", chromedp.Evaluate[access](`({
  Focused: document.activeElement.id, Days: document.getElementById('chart').dataset.days,
  Started: document.querySelector('.test-head .meta').textContent,
  Rows: document.querySelectorAll('#chart-figures tbody tr').length,
  Last: [...document.querySelectorAll('#chart-figures tbody tr:last-child td')].map((td) => td.textContent)})`))
	if a.Focused != "test-name" {
		t.Errorf("after opening the test the focus is on %q, want the heading #test-name", a.Focused)
	}
	if strconv.Itoa(a.Rows) != a.Days || len(a.Last) != len(api.TestGroups) {
		t.Errorf("the chart's table has %d rows (last %q) for %s days and %d groups", a.Rows, a.Last, a.Days, len(api.TestGroups))
	} else {
		for i, g := range api.TestGroups {
			near(t, "the table's last conversion rate", a.Last[i], g.ConversionRate*100, 0.005)
		}
	}
	if !regexp.MustCompile(`Started .*\d [AP]M (UTC|GMT)`).MatchString(a.Started) {
		t.Errorf("the test's start %q names no zone", a.Started)
	}

	b.do(t, "desktop width", chromedp.EmulateViewport(1280, 800))
	resultsAppScreenshot(t, b, "results-app-desktop.png")
	if painted := resultsAppRun(t, b, "count painted pixels", chromedp.Evaluate[int](resultsAppPainted)); painted < 500 {
		t.Errorf("the chart canvas has %d painted pixels at desktop width: not drawn", painted)
	}

	b.do(t, "phone width", chromedp.EmulateViewport(390, 844),
		chromedp.Poll[chromedp.Void](`document.querySelector('#chart canvas').getBoundingClientRect().width <= 390`,
			chromedp.WithPollingTimeout(20*time.Second)))
	resultsAppScreenshot(t, b, "results-app-phone.png")
	if w := resultsAppRun(t, b, "page width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
		t.Errorf("at 390 px the page is %d px wide: something overflows", w)
	}
	chartWidth := resultsAppRun(t, b, "chart width", chromedp.Evaluate[int](`Math.round(document.querySelector('#chart canvas').getBoundingClientRect().width)`))
	if painted := resultsAppRun(t, b, "count painted pixels", chromedp.Evaluate[int](resultsAppPainted)); painted < 500 || chartWidth < 200 {
		t.Errorf("at 390 px the chart is %d px wide with %d painted pixels", chartWidth, painted)
	}

	t.Run("Pickers", func(t *testing.T) {
		pick := func(id, value string) chromedp.Action[chromedp.Void] {
			return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
				`(() => { const s = document.getElementById(%q); s.value = %q; s.dispatchEvent(new Event('change')); })()`, id, value))
		}
		// The comparison on another metric: the API's lift of revenue per visitor.
		b.do(t, "compare on revenue per visitor", pick("metric", "revenue_per_visitor"))
		for _, g := range api.TestGroups[1:] {
			vs := g.VsControl["revenue_per_visitor"]
			if vs == nil || vs.Lift == nil {
				t.Fatalf("group %d: the API has no revenue-per-visitor lift (%+v)", g.Index, vs)
			}
			shown := resultsAppRun(t, b, "read the lift", chromedp.Text(chromedp.CSS(fmt.Sprintf(`#comparison tr[data-group="%d"] [data-metric=lift]`, g.Index))))
			near(t, fmt.Sprintf("group %d revenue per visitor lift", g.Index), shown, *vs.Lift*100, 0.05)
		}
		// The chart of revenue per visitor ends on the snapshot's (its
		// revenue is summed from rows in cents, so to the cent).
		b.do(t, "chart revenue per visitor", pick("chart-metric", "revenue_per_visitor"), chromedp.WaitVisible(chromedp.CSS(`#chart[data-state="drawn"]`)))
		last := resultsAppRun(t, b, "read the chart's series", chromedp.Evaluate[[]float64](
			`document.getElementById('chart')._plot.data.slice(1).map((s) => s[s.length - 1])`))
		for i, g := range api.TestGroups {
			if rpv, _ := strconv.ParseFloat(g.RPV.Amount, 64); i >= len(last) || math.Abs(last[i]-rpv) > 0.005+1e-9 {
				t.Errorf("the revenue-per-visitor chart ends at %v for group %d, the results say %s", last, g.Index, g.RPV.Amount)
			}
		}
		// Another breakdown: a second custom query, every visitor in the US.
		b.do(t, "break down by country", pick("dimension", "country"),
			chromedp.WaitVisible(chromedp.CSS(`#breakdown[data-state="ready"][data-dimension="country"]`)))
		rows := resultsAppRun(t, b, "read the breakdown", chromedp.Evaluate[resultsAppDOM](resultsAppReadDOM)).Breakdown
		if len(rows) != len(api.TestGroups) {
			t.Fatalf("country breakdown rows %+v, want one per group (every planted visitor is in the US)", rows)
		}
		for i, r := range rows {
			if r.Value != "US" || r.Group != api.TestGroups[i].Index {
				t.Errorf("country row %+v", r)
			}
			near(t, "country row visitors", r.Visitors, float64(api.TestGroups[i].SampleSize), 0)
		}
	})

	t.Run("DraftSaysWhy", func(t *testing.T) {
		b.do(t, "open the draft", chromedp.Navigate(s.url+"/app/#/tests/"+strconv.FormatInt(draft.ID, 10)),
			chromedp.WaitVisible(chromedp.CSS(`main .error`)))
		if msg := resultsAppRun(t, b, "read the error", chromedp.Text(chromedp.CSS(`main .error`))); !strings.Contains(msg, "this test has not started") {
			t.Errorf("a draft's page says %q; want the 422 results_not_available in plain words", msg)
		}
		b.do(t, "back to the test", chromedp.Navigate(s.url+"/app/#/tests/"+exp), chromedp.WaitVisible(chromedp.ID("export")))
	})

	t.Run("FailedSaysWhy", func(t *testing.T) {
		b.do(t, "open the failed test", chromedp.Navigate(s.url+"/app/#/tests/"+strconv.FormatInt(failed.ID, 10)),
			chromedp.WaitVisible(chromedp.ID("failure-reason")))
		if msg := resultsAppRun(t, b, "read the reason", chromedp.Text(chromedp.ID("failure-reason"))); msg != "This test did not launch. "+failed.FailureReason {
			t.Errorf("a failed test's page says %q; want its failure_reason %q", msg, failed.FailureReason)
		}
		b.do(t, "back to the test", chromedp.Navigate(s.url+"/app/#/tests/"+exp), chromedp.WaitVisible(chromedp.ID("export")))
	})

	t.Run("Export", func(t *testing.T) {
		b.do(t, "export", chromedp.Click(chromedp.ID("export")), chromedp.WaitVisible(chromedp.ID("download")))
		link := resultsAppRun(t, b, "read the link", chromedp.AttributeValue(chromedp.ID("download"), "href")).Value
		u := strings.TrimPrefix(link, s.url)
		if u == link || !strings.Contains(u, "/download?") {
			t.Fatalf("download link %q, want this server's signed download", link)
		}
		csv := s.do("GET", u, "", "")
		var orders int64
		for _, g := range api.TestGroups {
			orders += g.Orders
		}
		if lines := strings.Count(strings.TrimSpace(string(csv.raw)), "\n"); csv.status != 200 || int64(lines) != orders {
			t.Errorf("download = %d with %d order lines, the results count %d orders", csv.status, lines, orders)
		}
	})

	b.mu.Lock()
	for _, u := range b.bearers {
		if !strings.HasPrefix(u, s.url+"/v1/") {
			t.Errorf("the token was sent to %s, not this server's /v1", u)
		}
	}
	if len(b.bearers) == 0 {
		t.Error("no request carried the token")
	}
	if len(b.problems) > 0 {
		t.Errorf("the page reported errors: %v", b.problems)
	}
	b.mu.Unlock()

	t.Run("RefusedToken", func(t *testing.T) {
		b.do(t, "sign in with a bad token", chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), "lift_not-a-real-token"), chromedp.Click(chromedp.CSS(`#signin button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#signin .error`)))
		msg := resultsAppRun(t, b, "read the error", chromedp.Text(chromedp.CSS(`#signin .error`)))
		kept := resultsAppRun(t, b, "read sessionStorage", chromedp.Evaluate[*string](`sessionStorage.getItem('lift.token')`))
		if !strings.Contains(msg, "token was not accepted") || kept != nil {
			t.Errorf("a refused token shows %q and leaves %v in sessionStorage", msg, kept)
		}
	})
}

// resultsAppCompare holds the page's figures to the API's, each to the
// precision the page prints.
func resultsAppCompare(t *testing.T, api resultsAppSnapshot, dom resultsAppDOM) {
	t.Helper()
	if dom.Outcome != "winner" || dom.Winner != "1" || !strings.Contains(dom.OutcomeText, "Winner: Banner") {
		t.Errorf("the page shows outcome %q winner %q (%q); the API says the planted winner 1 (Banner)", dom.Outcome, dom.Winner, dom.OutcomeText)
	}
	if dom.SRM != api.SRMStatus {
		t.Errorf("the page shows SRM %q, the API %q", dom.SRM, api.SRMStatus)
	}
	if days, _ := strconv.Atoi(dom.Days); days < 4 {
		t.Errorf("the chart has %q days, the test ran on at least 4", dom.Days)
	}
	if len(dom.Groups) != len(api.TestGroups) || len(dom.Comparison) != len(api.TestGroups)-1 {
		t.Fatalf("the page shows %d groups and %d comparisons; the API has %d groups", len(dom.Groups), len(dom.Comparison), len(api.TestGroups))
	}
	visitors := map[int]float64{}
	for _, row := range dom.Breakdown {
		visitors[row.Group] += number(t, "breakdown "+row.Value, row.Visitors)
	}
	for i, g := range api.TestGroups {
		shown := dom.Groups[i]
		what := fmt.Sprintf("group %d", g.Index)
		if shown.Group != g.Index {
			t.Fatalf("row %d is group %d, the API's is %d", i, shown.Group, g.Index)
		}
		near(t, what+" visitors", shown.Visitors, float64(g.SampleSize), 0)
		near(t, what+" orders", shown.Orders, float64(g.Orders), 0)
		near(t, what+" conversion", shown.Conversion, g.ConversionRate*100, 0.005)
		amount, _ := strconv.ParseFloat(g.Revenue.Amount, 64)
		near(t, what+" revenue", shown.Revenue, amount, 0.005)
		if visitors[g.Index] != float64(g.SampleSize) {
			t.Errorf("%s: the device breakdown adds up to %v visitors, the results say %d", what, visitors[g.Index], g.SampleSize)
		}
		if g.Index == 0 {
			continue
		}
		cmp, vs := dom.Comparison[i-1], g.VsControl["conversion_rate"]
		if cmp.Group != g.Index || vs == nil || vs.Lift == nil || vs.Bayesian == nil {
			t.Fatalf("comparison row %+v for API group %d (%+v)", cmp, g.Index, vs)
		}
		near(t, what+" lift", cmp.Lift, *vs.Lift*100, 0.05)
		resultsAppChance(t, what, cmp.Prob, vs.Bayesian.ProbBeatControl)
	}
}

// resultsAppChance checks a printed chance: "97.3%", or "> 99.9%" and
// "< 0.1%" at the ends, which never round to a certainty.
func resultsAppChance(t *testing.T, what, shown string, p float64) {
	t.Helper()
	switch {
	case shown == "> 99.9%":
		if p < 0.9995 {
			t.Errorf("%s: the page shows a chance to beat control of %q, the API says %v", what, shown, p)
		}
	case shown == "< 0.1%":
		if p > 0.0005 {
			t.Errorf("%s: the page shows a chance to beat control of %q, the API says %v", what, shown, p)
		}
	default:
		near(t, what+" chance to beat control", shown, p*100, 0.05)
	}
}

// resultsAppScreenshot saves a full-page PNG under .lift/screenshots/ at
// the repository's root.
func resultsAppScreenshot(t *testing.T, b *resultsAppBrowser, name string) {
	t.Helper()
	png := resultsAppRun(t, b, "screenshot "+name, chromedp.FullScreenshot(100))
	dir := filepath.Join("..", "..", ".lift", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// TestWelcomeLinksResultsApp: lift dev prints the results app's address
// with the demo's read token, which the app takes from the fragment.
func TestWelcomeLinksResultsApp(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printWelcome(&b, "[::]:8080", "", demoTokens{Read: "lift_read", Write: "lift_write"})
	if want := "results app: http://localhost:8080/app/#token=lift_read "; !strings.Contains(b.String(), want) {
		t.Fatalf("welcome lacks %q:\n%s", want, b.String())
	}
}
