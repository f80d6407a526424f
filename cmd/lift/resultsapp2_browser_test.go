package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/warehouse"
)

// resultsAppBadges answers every badge on the page with its WCAG contrast
// ratio (text colour against the badge's own, opaque, background).
const resultsAppBadges = `(() => {
  const lum = (c) => {
    const v = c.match(/[\d.]+/g).slice(0, 3).map((x) => Number(x) / 255)
      .map((x) => (x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4));
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  };
  return [...document.querySelectorAll('.badge')].map((el) => {
    const s = getComputedStyle(el), a = lum(s.color), b = lum(s.backgroundColor);
    return { Text: el.textContent, Ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
  });
})()`

type resultsAppBadge struct {
	Text  string
	Ratio float64
}

// TestResultsAppGuardrailPause opens, in headless chromium, a test that
// Lift paused because a guardrail was breached (B2-11, B2-13): the page
// says why (the test's pause_reason) and shows each guardrail's status; the
// list's badge for the control's win has the page's words and colour; time
// on site under 10 s keeps a decimal; every badge passes WCAG AA contrast;
// a results call that hangs ends, after the app's timeout, in an error with
// a "Try again" that loads the page once the API answers again.
func TestResultsAppGuardrailPause(t *testing.T) {
	t.Parallel()
	resultsAppChromium(t)
	ctx := context.Background()
	s := newServer(t)
	shop, read, write := s.shop(true)
	r := s.do("POST", "/v1/experiments", write, guardedBody)
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id, _ := strconv.ParseInt(r.body["id"].(string), 10, 64)
	exp := strconv.FormatInt(id, 10)
	started := breachGuardrail(t, s, shop.ID, id)
	plantShortVisits(t, s, shop.ID, exp, started, 300, []int{3, 4})
	if err := s.app.results().TakeSnapshot(ctx, shop.ID, id, false); err != nil {
		t.Fatal(err)
	}
	var api struct {
		Outcome     string `json:"outcome"`
		Winner      *int   `json:"winning_test_group_index"`
		PauseReason string `json:"pause_reason"`
		Guardrails  []struct {
			Metric, Status string
		} `json:"guardrails"`
		TestGroups []struct {
			Index     int                        `json:"test_group_index"`
			Staying   float64                    `json:"avg_staying_time"`
			VsControl map[string]json.RawMessage `json:"vs_control"`
		} `json:"test_groups"`
	}
	r = s.do("GET", "/v1/experiments/"+exp+"/results", read, "")
	if err := json.Unmarshal(r.raw, &api); r.status != 200 || err != nil {
		t.Fatalf("GET results = %d %s (%v)", r.status, r.raw, err)
	}
	test := s.do("GET", "/v1/experiments/"+exp, read, "")
	reason, _ := test.body["pause_reason"].(string)
	if test.body["status"] != "paused" || !strings.HasPrefix(reason, "Guardrail conversion_rate breached") ||
		len(api.Guardrails) != 1 || api.Guardrails[0].Status != "breached" || api.Outcome != "winner" || api.Winner == nil || *api.Winner != 0 {
		t.Fatalf("the planted breach did not pause the test with the control winning: test %s, results %s", test.raw, r.raw)
	}
	if g := api.TestGroups; len(g) != 2 || g[0].Staying <= 0 || g[0].Staying >= 1 || g[1].Staying <= 0 || g[1].Staying >= 1 {
		t.Fatalf("the planted short visits average %+v s, want between 0 and 1 s", g)
	}

	b := newResultsAppBrowser(t, 3*time.Minute)
	link := `#tests a[data-test-id="` + exp + `"]`
	b.do(t, "open the list", chromedp.Navigate(s.url+"/app/#token="+read), chromedp.WaitVisible(chromedp.CSS(link)))
	type shown struct{ Text, Color, Background string }
	const look = `((el) => ({ Text: el.textContent.trim(), Color: getComputedStyle(el).color, Background: getComputedStyle(el).backgroundColor }))`
	listBadge := resultsAppRun(t, b, "read the list's verdict", chromedp.Evaluate[shown](look+`(document.querySelector('`+link+` > .badge:last-child'))`))
	listContrast := resultsAppRun(t, b, "list badges' contrast", chromedp.Evaluate[[]resultsAppBadge](resultsAppBadges))

	b.do(t, "open the test", chromedp.Click(chromedp.CSS(link)), chromedp.WaitVisible(chromedp.ID("outcome")))
	t.Run("PauseReasonAndGuardrails", func(t *testing.T) {
		type page struct {
			Reason  string
			Rows    []struct{ Metric, Status, Text string }
			Outcome shown
		}
		p := resultsAppRun(t, b, "read the page", chromedp.Evaluate[page](`({
  Reason: (document.getElementById('pause-reason') || {textContent: ''}).textContent,
  Rows: [...document.querySelectorAll('#guardrails tbody tr')].map((tr) => ({ Metric: tr.dataset.metric, Status: tr.dataset.status,
    Text: tr.querySelector('[data-metric=status]').textContent })),
  Outcome: `+look+`(document.querySelector('#outcome strong')) })`))
		if !strings.Contains(p.Reason, reason) {
			t.Errorf("the paused test's page says %q; want the pause reason %q", p.Reason, reason)
		}
		if len(p.Rows) != 1 || p.Rows[0].Metric != "conversion_rate" || p.Rows[0].Status != "breached" || p.Rows[0].Text != "Breached" {
			t.Errorf("the page's guardrails %+v; the API has conversion_rate breached", p.Rows)
		}
		// The list and the page say the same of the control's win.
		if p.Outcome.Text != "The control wins" || listBadge.Text != p.Outcome.Text || listBadge.Color != p.Outcome.Color {
			t.Errorf("the list shows %+v, the page %+v: want the same words and colour", listBadge, p.Outcome)
		}
	})

	t.Run("TimeOnSiteDecimal", func(t *testing.T) {
		b.do(t, "compare on time on site", chromedp.Evaluate[chromedp.Void](
			`(() => { const s = document.getElementById('metric'); s.value = 'avg_staying_time'; s.dispatchEvent(new Event('change')); })()`))
		got := resultsAppRun(t, b, "read the value", chromedp.Text(chromedp.CSS(`#comparison tr[data-group="1"] [data-metric=value]`)))
		if want := fmt.Sprintf("%.1f s vs %.1f s", api.TestGroups[1].Staying, api.TestGroups[0].Staying); got != want {
			t.Errorf("time on site shows %q, want %q (one decimal under 10 s)", got, want)
		}
	})

	t.Run("BadgeContrast", func(t *testing.T) {
		page := resultsAppRun(t, b, "page badges' contrast", chromedp.Evaluate[[]resultsAppBadge](resultsAppBadges))
		all := append(listContrast, page...)
		if len(all) < 4 {
			t.Fatalf("only %d badges found: %+v", len(all), all)
		}
		for _, x := range all {
			if x.Ratio < 4.5 {
				t.Errorf("badge %q has contrast %.2f:1, under WCAG AA's 4.5:1", x.Text, x.Ratio)
			}
		}
	})

	t.Run("HangingCallOffersRetry", func(t *testing.T) {
		var mu sync.Mutex
		hang := true
		err := chromedp.Do(b.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/v1/experiments/" + exp + "/results"}}})
			return err
		}))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for ev, err := range chromedp.Events(b.ctx, fetch.RequestPaused) {
				if err != nil {
					return
				}
				mu.Lock()
				held := hang && ev.Request.Method == "GET"
				mu.Unlock()
				if held {
					continue // never answered: the request hangs until the page gives up
				}
				chromedp.Do(b.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
					return err
				}))
			}
		}()
		start := time.Now()
		b.do(t, "reload the test with a short timeout",
			chromedp.Evaluate[chromedp.Void](`LiftApp.config.timeoutMs = 2000; location.hash = '#/'`),
			chromedp.WaitVisible(chromedp.CSS(link)),
			chromedp.Evaluate[chromedp.Void](`location.hash = '#/tests/`+exp+`'`),
			chromedp.WaitVisible(chromedp.ID("retry")))
		msg := resultsAppRun(t, b, "read the error", chromedp.Text(chromedp.CSS(`main .error[role=alert]`)))
		if !strings.Contains(msg, "did not answer in 2 seconds") || time.Since(start) < 2*time.Second {
			t.Errorf("a hanging results call shows %q after %v; want the timeout's error", msg, time.Since(start))
		}
		mu.Lock()
		hang = false
		mu.Unlock()
		b.do(t, "try again", chromedp.Click(chromedp.ID("retry")), chromedp.WaitVisible(chromedp.ID("outcome")))
	})

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		t.Errorf("the page reported errors: %v", b.problems)
	}
}

// plantShortVisits adds n visitors a group, without orders, each with one
// session of two pages seen seconds[g] apart: time on site well under a
// second on average once the other visitors' zero is counted in.
func plantShortVisits(t *testing.T, s *server, shopID int64, exp string, at time.Time, n int, seconds []int) {
	t.Helper()
	var batch warehouse.Batch
	for g, d := range seconds {
		for i := range n {
			v := fmt.Sprintf("short%d-%d", g, i)
			sid := fmt.Sprintf("00000000-0000-4000-9000-%02d%010d", g, i)
			ts := at.Add(time.Duration(i) * time.Second)
			batch.Assignments = append(batch.Assignments, warehouse.Assignment{ShopID: shopID, ExperimentID: exp, VisitorID: v,
				AssignmentID: v, SessionID: sid, TestGroup: int16(g), Device: "desktop", Country: "US", VisitorType: "new",
				AssignedAt: ts, ReceivedAt: ts})
			for p, when := range []time.Time{ts, ts.Add(time.Duration(d) * time.Second)} {
				batch.Sessions = append(batch.Sessions, warehouse.Session{ShopID: shopID, ExperimentID: exp, SessionID: sid,
					RecordID: fmt.Sprintf("%s-r%d", v, p), VisitorID: v, SeenAt: when, PagePath: fmt.Sprintf("/p%d", p)})
			}
		}
	}
	if err := s.app.Warehouse.Insert(context.Background(), &batch); err != nil {
		t.Fatal(err)
	}
}
