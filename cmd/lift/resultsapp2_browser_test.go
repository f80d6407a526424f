package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// TestResultsAppGuardrailPause opens, in headless chromium, a test that
// Lift paused because a guardrail was breached (B2-11): the page says why
// (the test's pause_reason) and shows each guardrail's status; the list's
// badge for the control's win has the page's words and colour.
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
	tt, err := s.app.DB.FindTestByID(ctx, shop.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	tt.Status, tt.StartedAt = experiment.StatusActive, &started
	lifttest.PutTest(t, s.app.DB, tt)
	lifttest.PlantVisitors(t, s.app.Warehouse, shop.ID, id, started, 1500, []float64{0.30, 0.10}, 40)
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

	b := newResultsAppBrowser(t, 3*time.Minute)
	link := `#tests a[data-test-id="` + exp + `"]`
	b.do(t, "open the list", chromedp.Navigate(s.url+"/app/#token="+read), chromedp.WaitVisible(chromedp.CSS(link)))
	type shown struct{ Text, Color, Background string }
	const look = `((el) => ({ Text: el.textContent.trim(), Color: getComputedStyle(el).color, Background: getComputedStyle(el).backgroundColor }))`
	listBadge := resultsAppRun(t, b, "read the list's verdict", chromedp.Evaluate[shown](look+`(document.querySelector('`+link+` > .badge:last-child'))`))

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

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		t.Errorf("the page reported errors: %v", b.problems)
	}
}
