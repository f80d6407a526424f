package experiment_test

import (
	"errors"
	"testing"

	"github.com/liftab/lift/experiment"
)

func TestNormalizeShopDomain(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"shop.myshopify.com", "shop.myshopify.com"},
		{"Shop.MyShopify.com", "shop.myshopify.com"},
		{"  shop.myshopify.com\t", "shop.myshopify.com"},
		{"shop.myshopify.com.", "shop.myshopify.com"},
		{"HTTPS://Shop.myshopify.com/", "shop.myshopify.com"},
		{"http://shop.myshopify.com", "shop.myshopify.com"},
		{"", ""},
		{" . ", ""},
	}
	for _, tc := range tests {
		if got := experiment.NormalizeShopDomain(tc.in); got != tc.want {
			t.Errorf("NormalizeShopDomain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCheckMeasurementID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"G-ABC123DEF4", true},
		{"", true}, // turns the metadata off
		{"NOTG", false},
		{"g-abc123def4", false},
		{"UA-12345-1", false}, // Universal Analytics, retired
		{"G-", false},
		{"G-ABC 123", false},
	} {
		err := experiment.CheckMeasurementID(tt.id)
		if tt.ok != (err == nil) {
			t.Errorf("CheckMeasurementID(%q) = %v, want ok %v", tt.id, err, tt.ok)
		}
		var e *experiment.Error
		if err != nil && (!errors.As(err, &e) || e.Kind != experiment.KindInvalidRequest || e.Code != "invalid_request") {
			t.Errorf("CheckMeasurementID(%q) = %#v, want KindInvalidRequest invalid_request", tt.id, err)
		}
	}
}
