package experiment_test

import (
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
