package main

import (
	"strings"
	"testing"
)

// TestWelcomeInstallURL: lift dev's welcome names the install URL, at the
// public URL when one is configured, else where the process listens.
func TestWelcomeInstallURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, public, want string }{
		{"0.0.0.0:8080", "", "http://localhost:8080/api/auth?shop=demo-shop.myshopify.com"},
		{"127.0.0.1:9000", "https://lift.example.com/", "https://lift.example.com/api/auth?shop=demo-shop.myshopify.com"},
	} {
		var b strings.Builder
		printWelcome(&b, tc.addr, tc.public, demoTokens{Read: "r", Write: "w"})
		if !strings.Contains(b.String(), "install URL: "+tc.want+" ") {
			t.Fatalf("welcome for %s %q lacks %s:\n%s", tc.addr, tc.public, tc.want, b.String())
		}
	}
}
