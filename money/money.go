// Package money holds the ISO 4217 minor units of currencies and the one
// way Lift rounds and writes amounts. Amounts are decimals
// (github.com/shopspring/decimal): the platform sends them as decimal
// strings, and a float cannot hold 19.99 or 12.345 exactly, so sums drift.
//
// Amounts are kept exact up to StoredScale decimals (ClickHouse stores
// Decimal(18,4), which fits every ISO exponent) and rounded to the
// currency's minor units only at the edges, when an amount is shown (API,
// CSV). Rounding is half-even (banker's rounding), the convention for money:
// halves go to the even digit, so rounding many amounts has no upward bias.
package money

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

// StoredScale is the decimals an amount keeps in storage: the largest ISO
// 4217 exponent (CLF, UYW).
const StoredScale = 4

// minorUnits are the ISO 4217 exponents other than 2, the common case. The
// list follows the ISO 4217 table (amendment 2024); funds codes included.
var minorUnits = map[string]int32{
	// No minor unit.
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	// Three decimals.
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	// Four decimals.
	"CLF": 4, "UYW": 4,
}

// MinorUnits is the currency's ISO 4217 exponent: 0 for JPY, 3 for KWD, 2
// for a code the table does not list (most currencies, and the safe guess
// for an unknown one).
func MinorUnits(currency string) int32 {
	if n, ok := minorUnits[strings.ToUpper(strings.TrimSpace(currency))]; ok {
		return n
	}
	return 2
}

// Round rounds d half-even to the currency's minor units.
func Round(d decimal.Decimal, currency string) decimal.Decimal {
	return d.RoundBank(MinorUnits(currency))
}

// Format writes d with exactly the currency's minor units ("1500" for JPY,
// "12.345" for KWD, "19.99" for USD), rounded half-even; never "-0".
func Format(d decimal.Decimal, currency string) string {
	r := Round(d, currency)
	if r.IsZero() {
		r = decimal.Zero
	}
	return r.StringFixedBank(MinorUnits(currency))
}

// FormatFloat is Format for a derived amount the statistics compute in
// float64 (a mean, a difference, an interval bound). NaN and ±Inf write as
// zero: they come from empty groups, not from money.
// It rounds x once, straight to the minor units: going through the stored
// scale first would round twice (6.83498 → 6.8350 → "6.84" instead of
// "6.83").
func FormatFloat(x float64, currency string) string {
	return Format(derived(x), currency)
}

// RoundFloat is FormatFloat's rounding for an answer that carries amounts
// as JSON numbers (the session analytics): the same value, as a float.
func RoundFloat(x float64, currency string) float64 {
	return Round(derived(x), currency).InexactFloat64()
}

// derived reads a computed float as the shortest decimal that prints as it;
// NaN and ±Inf (empty groups) are zero.
func derived(x float64) decimal.Decimal {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return decimal.Zero
	}
	return decimal.NewFromFloat(x)
}

// FromFloat reads a float as the shortest decimal that prints as it (19.99
// stays 19.99, not 19.989999…), kept to StoredScale decimals. It is for
// amounts that reach Lift as JSON numbers (the legacy order body) or as
// float statistics.
func FromFloat(x float64) decimal.Decimal {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return decimal.Zero
	}
	return Stored(decimal.NewFromFloat(x))
}

// plainDecimal is how the platform writes amounts: no exponent, no
// grouping. An exponent is refused: "1e999999999" would make rounding
// allocate a billion-digit number.
var plainDecimal = regexp.MustCompile(`^[+-]?[0-9]{1,32}(\.[0-9]{0,32})?$`)

// maxStored bounds what storage holds: Decimal(18,4) has 14 integer digits.
var maxStored = decimal.New(1, 18-StoredScale)

// Parse reads a plain decimal string such as "12.345"; surrounding spaces
// are ignored. The amount is kept to StoredScale decimals; one storage
// cannot hold (1e14 or more) is an error.
func Parse(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if !plainDecimal.MatchString(s) {
		return decimal.Zero, fmt.Errorf("money: %q is not a plain decimal", s)
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero, err
	}
	d = Stored(d)
	if d.Abs().GreaterThanOrEqual(maxStored) {
		return decimal.Zero, fmt.Errorf("money: %s is out of range", s)
	}
	return d, nil
}

// Stored rounds d half-even to StoredScale decimals, what storage keeps.
func Stored(d decimal.Decimal) decimal.Decimal { return d.RoundBank(StoredScale) }

// Float is d as a float64, for the statistics engine, which works in
// floats; amounts stay decimals everywhere else.
func Float(d decimal.Decimal) float64 {
	f, _ := d.Float64()
	return f
}
