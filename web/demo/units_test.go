package demo

import "testing"

// TestMinorUnits: the carrier API's minor units and the demo's hundredths
// convert by the currency's ISO 4217 exponent, both ways.
func TestMinorUnits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		exp   int // USD 2, JPY 0, KWD 3, CLF 4
		price float64
		minor int64
		cents int64
	}{
		{2, 24.5, 2450, 2450},
		{0, 2400, 2400, 240000},
		{3, 1.25, 1250, 125},
		{4, 0.0123, 123, 1},
	} {
		if got := minorUnits(c.price, c.exp); got != c.minor {
			t.Errorf("minorUnits(%v, %d) = %d, want %d", c.price, c.exp, got, c.minor)
		}
		if got := hundredths(c.minor, c.exp); got != c.cents {
			t.Errorf("hundredths(%d, %d) = %d, want %d", c.minor, c.exp, got, c.cents)
		}
	}
	// Without Config.MinorUnits every currency has two decimals.
	if got := (&Handler{}).exponent("JPY"); got != 2 {
		t.Errorf("exponent without MinorUnits = %d, want 2", got)
	}
}
