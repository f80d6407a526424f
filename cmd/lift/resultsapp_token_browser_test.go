package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
)

// TestResultsAppTokenLinkInOpenTab (B2-10): a `#token=…&test=…` link
// opened in a tab where the app is already open (a same-document
// navigation: no new page load) signs in with its token, replacing the
// tab's, opens the test, shows nothing of the previous shop and leaves no
// token in the address bar; from the sign-in form as from a signed-in tab.
func TestResultsAppTokenLinkInOpenTab(t *testing.T) {
	t.Parallel()
	resultsAppChromium(t)
	s := newServer(t)
	shopA, readA, _ := s.shop(true)
	shopB, readB, _ := s.shop(true)
	now := time.Now().UTC()
	put := func(shopID int64, name string) string {
		tt := &experiment.Test{ShopID: shopID, Type: experiment.TypeURLRedirect, Status: experiment.StatusDraft, Name: name,
			TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
			Groups:    []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}},
			CreatedAt: now, UpdatedAt: now}
		lifttest.PutTest(t, s.app.DB, tt)
		return strconv.FormatInt(tt.ID, 10)
	}
	testA, testB := put(shopA.ID, "Shop A's test"), put(shopB.ID, "Shop B's test")

	type state struct{ Href, Hash, Stored, Main string }
	const read = `({ Href: location.href, Hash: location.hash, Stored: sessionStorage.getItem('lift.token'),
  Main: document.getElementById('main').textContent })`
	b := newResultsAppBrowser(t, 2*time.Minute)
	check := func(t *testing.T, token, hash, want, notWant string) {
		t.Helper()
		st := resultsAppRun(t, b, "read the tab", chromedp.Evaluate[state](read))
		if st.Stored != token || st.Hash != hash || strings.Contains(st.Href, "token") {
			t.Errorf("after the link: sessionStorage %q, URL %q; want the link's token stored and the URL …%s", st.Stored, st.Href, hash)
		}
		if !strings.Contains(st.Main, want) || strings.Contains(st.Main, notWant) {
			t.Errorf("after the link the page shows %q; want %q and nothing of %q", st.Main, want, notWant)
		}
	}

	t.Run("FromSignIn", func(t *testing.T) {
		b.do(t, "open the sign-in form", chromedp.Navigate(s.url+"/app/"), chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.Evaluate[chromedp.Void](`location.href = '/app/#token=`+readA+`&test=`+testA+`'`),
			chromedp.WaitVisible(chromedp.CSS(`#test-name`)))
		check(t, readA, "#/tests/"+testA, "Shop A's test", "Sign in")
	})
	t.Run("FromAnotherShop", func(t *testing.T) {
		// Signed in as shop A on its test; shop B's link replaces all of it.
		b.do(t, "open shop B's link", chromedp.Evaluate[chromedp.Void](`location.href = '/app/#token=`+readB+`&test=`+testB+`'`),
			chromedp.Poll[chromedp.Void](`document.getElementById('test-name') && document.getElementById('test-name').textContent === "Shop B's test"`,
				chromedp.WithPollingTimeout(20*time.Second)))
		check(t, readB, "#/tests/"+testB, "Shop B's test", "Shop A's test")
		// And back to shop A's list, with the link `lift dev` prints.
		b.do(t, "open shop A's link", chromedp.Evaluate[chromedp.Void](`location.href = '/app/#token=`+readA+`'`),
			chromedp.WaitVisible(chromedp.CSS(`#tests a[data-test-id="`+testA+`"]`)))
		check(t, readA, "#/", "Shop A's test", "Shop B's test")
	})

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		t.Errorf("the page reported errors: %v", b.problems)
	}
}
