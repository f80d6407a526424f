package demo

import "testing"

// TestMinorUnits: the carrier API's minor units and the demo's hundredths
// convert by the currency's ISO 4217 exponent, both ways.
func TestMinorUnits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		currency string
		price    float64
		minor    int64
		cents    int64
	}{
		{"USD", 24.5, 2450, 2450},
		{"JPY", 2400, 2400, 240000},
		{"KWD", 1.25, 1250, 125},
		{"CLF", 0.0123, 123, 1},
	} {
		if got := minorUnits(c.price, c.currency); got != c.minor {
			t.Errorf("minorUnits(%v %s) = %d, want %d", c.price, c.currency, got, c.minor)
		}
		if got := hundredths(c.minor, c.currency); got != c.cents {
			t.Errorf("hundredths(%d %s) = %d, want %d", c.minor, c.currency, got, c.cents)
		}
	}
}
