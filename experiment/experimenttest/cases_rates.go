package experimenttest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/money"
)

// testQuoteRates: the carrier service's rates are the destination zone's
// own (the catalog mirror's), changed by the visitor's group of an active
// shipping test of that zone; paused, unnamed or the control, the zone's own.
func testQuoteRates(t *testing.T, nb NewBackend) {
	b := Setup(t, nb)
	quote := func(country, assignments string) string {
		t.Helper()
		rates, err := b.Service.QuoteRates(b.Ctx(), b.Shop, experiment.RateRequest{Country: country, Assignments: assignments})
		if err != nil {
			t.Fatalf("QuoteRates(%s, %q): %v", country, assignments, err)
		}
		var out []string
		for _, r := range rates {
			d, err := money.Parse(r.Price.Amount)
			if err != nil {
				t.Fatalf("rate %+v: %v", r, err)
			}
			out = append(out, fmt.Sprintf("%s %s %s %s", r.Code, r.Name, d.StringFixed(2), r.Price.Currency))
		}
		return strings.Join(out, "; ")
	}
	const domestic = "gid://shopify/DeliveryMethodDefinition/5011 Standard 6.95 USD; gid://shopify/DeliveryMethodDefinition/5012 Express 14.95 USD"
	const intl = "gid://shopify/DeliveryMethodDefinition/5021 International Standard 19.00 USD"
	for _, c := range []struct{ country, want string }{{"US", domestic}, {"CA", intl}, {"JP", ""}} {
		if got := quote(c.country, ""); got != c.want {
			t.Fatalf("%s before any test = %q, want %q", c.country, got, c.want)
		}
	}

	x := b.Create(t, TypeBodies()[experiment.TypeShipping])
	b.Act(t, x.ID, experiment.ActionStart)
	in := func(g int) string { return fmt.Sprintf("999:1,%d:%d", x.ID, g) }
	for _, c := range []struct{ country, assignments, want string }{
		{"US", in(1), "gid://shopify/DeliveryMethodDefinition/5011 Standard 4.95 USD; gid://shopify/DeliveryMethodDefinition/5012 Express 14.95 USD"},
		{"CA", in(1), intl + fmt.Sprintf("; lift-%d-1-1 Intl saver 12.00 USD", x.ID)},
		{"US", in(0), domestic},
		{"US", "", domestic},
		{"US", "garbage", domestic},
		{"JP", in(1), ""},
	} {
		if got := quote(c.country, c.assignments); got != c.want {
			t.Errorf("%s with %q = %q, want %q", c.country, c.assignments, got, c.want)
		}
	}
	b.Act(t, x.ID, experiment.ActionPause)
	if got := quote("US", in(1)); got != domestic {
		t.Errorf("US while the test is paused = %q, want the zone's own %q", got, domestic)
	}
}
