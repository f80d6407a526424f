package results

import (
	"testing"

	"github.com/liftab/lift/experiment"
)

// TestAnalyticsWindow: dates are the shop's calendar days, and an
// open-ended window holds everything ClickHouse can date instead of
// failing (a year-0 date with an offset answered 500) or silently
// selecting nothing (18.16 reads 2200-01-01 as 1970-01-01).
func TestAnalyticsWindow(t *testing.T) {
	t.Parallel()
	ny := &experiment.Shop{Timezone: "America/New_York"}
	tests := []struct {
		name, start, finish string
		from, to            string
		bad                 bool
	}{
		{"Dates", "2026-06-01", "2026-06-02", "2026-06-01", "2026-06-02", false},
		{"DateTimesInTheShopsZone", "2026-06-01T03:00:00Z", "2026-06-02T12:00:00Z", "2026-05-31", "2026-06-02", false},
		// Without an offset a date-time is the shop's own clock (analytics audit A7).
		{"LocalDateTimes", "2026-06-01T03:00:00", "2026-06-02T23:59", "2026-06-01", "2026-06-02", false},
		{"LocalDateTimeFraction", "2026-06-01T00:00:00.5", "2026-06-02", "2026-06-01", "2026-06-02", false},
		{"BasicFormat", "20260601", "2026-06-02", "", "", true},
		{"YearZeroWithOffset", "0000-01-01T00:00:00+05:00", "2026-11-30", "1970-01-01", "2026-11-30", false},
		{"YearZeroDate", "0000-01-01", "2026-11-30", "1970-01-01", "2026-11-30", false},
		{"Before1970", "1900-01-01", "2026-11-30", "1970-01-01", "2026-11-30", false},
		{"FarFuture", "2026-11-01", "9999-12-31T23:00:00-05:00", "2026-11-01", "2105-12-31", false},
		{"Reversed", "2026-06-03", "2026-06-02", "", "", true},
		{"ReversedBothClamped", "2200-01-01", "2300-01-01", "2105-12-31", "2105-12-31", false},
		{"NotADate", "yesterday", "2026-06-02", "", "", true},
		{"Missing", "", "2026-06-02", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from, to, err := analyticsWindow(ny, tc.start, tc.finish)
			if tc.bad {
				if e, ok := experiment.AsError(err); !ok || e.Kind != experiment.KindInvalidRequest {
					t.Fatalf("analyticsWindow(%q, %q) = %q, %q, %v; want a 400", tc.start, tc.finish, from, to, err)
				}
				return
			}
			if err != nil || from != tc.from || to != tc.to {
				t.Fatalf("analyticsWindow(%q, %q) = %q, %q, %v; want %q, %q", tc.start, tc.finish, from, to, err, tc.from, tc.to)
			}
		})
	}
}

// TestAnalyticsWindowOnAClockJump: Santiago's clocks jump from 00:00 to
// 01:00 on 2026-09-06; that midnight does not exist, the date does (it
// read as September 5: review-3 R5).
func TestAnalyticsWindowOnAClockJump(t *testing.T) {
	t.Parallel()
	santiago := &experiment.Shop{Timezone: "America/Santiago"}
	for _, v := range []string{"2026-09-06", "2026-09-06T00:00:00", "2026-09-06T00:30"} {
		if from, to, err := analyticsWindow(santiago, v, v); err != nil || from != "2026-09-06" || to != "2026-09-06" {
			t.Errorf("%s: %q, %q, %v; want 2026-09-06", v, from, to, err)
		}
	}
}

// TestShippingRevenue: a group's shipping revenue is null only when orders
// were counted and none recorded shipping; otherwise the sum over those
// that did (a lower bound when some did not), rounded to the currency.
func TestShippingRevenue(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		g    Sums
		want *float64
	}{
		{"no orders: nothing charged", Sums{}, f(0)},
		{"every order recorded", Sums{Orders: 2, Shipping: 9.9904}, f(9.99)},
		{"some recorded: their sum", Sums{Orders: 3, Shipping: 4.99, ShippingUnrecorded: 1}, f(4.99)},
		{"none recorded: null", Sums{Orders: 2, ShippingUnrecorded: 2}, nil},
		{"recorded, all free", Sums{Orders: 2}, f(0)},
	} {
		got := shippingRevenue(c.g, "USD")
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: shippingRevenue = %v, want %v", c.name, deref(got), deref(c.want))
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
