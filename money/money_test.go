package money

import (
	"math"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

func TestMinorUnits(t *testing.T) {
	for _, tc := range []struct {
		code string
		want int32
	}{
		{"JPY", 0}, {"jpy", 0}, {"KRW", 0}, {"KWD", 3}, {"BHD", 3}, {"OMR", 3}, {"JOD", 3}, {"TND", 3},
		{"LYD", 3}, {"IQD", 3}, {"CLF", 4}, {"USD", 2}, {"EUR", 2}, {"", 2}, {"XYZ", 2},
	} {
		if got := MinorUnits(tc.code); got != tc.want {
			t.Errorf("MinorUnits(%q) = %d, want %d", tc.code, got, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		amount, currency, want string
	}{
		{"1500", "JPY", "1500"},
		{"1500.5", "JPY", "1500"}, // half-even: to the even 1500
		{"1501.5", "JPY", "1502"},
		{"12.345", "KWD", "12.345"},
		{"12", "KWD", "12.000"},
		{"19.99", "USD", "19.99"},
		{"2.675", "USD", "2.68"},
		{"2.665", "USD", "2.66"},
		{"0.12345", "CLF", "0.1234"},
		{"-0.001", "USD", "0.00"},
		{"-3.5", "EUR", "-3.50"},
	} {
		d, err := decimal.NewFromString(tc.amount)
		if err != nil {
			t.Fatal(err)
		}
		if got := Format(d, tc.currency); got != tc.want {
			t.Errorf("Format(%s, %s) = %q, want %q", tc.amount, tc.currency, got, tc.want)
		}
	}
}

func TestFromFloat(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{19.99, "19.99"}, {12.345, "12.345"}, {0.1 + 0.2, "0.3"}, {1500, "1500"}, {1.23456, "1.2346"},
	} {
		if got := FromFloat(tc.x); got.String() != tc.want {
			t.Errorf("FromFloat(%v) = %s, want %s", tc.x, got, tc.want)
		}
	}
	for _, tc := range []struct {
		x        float64
		currency string
		want     string
	}{
		{214.2857142857, "JPY", "214"},
		{6.83498257839721, "USD", "6.83"}, // once: through 4 decimals first it would be 6.8350, then 6.84
		{0.1234949, "KWD", "0.123"},
		{2.665, "USD", "2.66"}, // half-even on the shortest decimal that prints as the float
		{math.NaN(), "USD", "0.00"},
	} {
		if got := FormatFloat(tc.x, tc.currency); got != tc.want {
			t.Errorf("FormatFloat(%v, %s) = %q, want %q", tc.x, tc.currency, got, tc.want)
		}
		if got, want := RoundFloat(tc.x, tc.currency), must(strconv.ParseFloat(tc.want, 64)); got != want {
			t.Errorf("RoundFloat(%v, %s) = %v, want %v", tc.x, tc.currency, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	if d, err := Parse(" 12.345 "); err != nil || d.String() != "12.345" {
		t.Errorf("Parse = %v, %v", d, err)
	}
	for _, bad := range []string{"12,3", "1e3", "1e999999999", "", ".", "100000000000000", "NaN"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = nil error, want one", bad)
		}
	}
	if d, err := Parse("99999999999999.9999"); err != nil || d.String() != "99999999999999.9999" {
		t.Errorf("Parse(largest) = %v, %v", d, err)
	}
}

func must(f float64, err error) float64 {
	if err != nil {
		panic(err)
	}
	return f
}
