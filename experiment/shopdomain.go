package experiment

import "strings"

// NormalizeShopDomain is the one spelling of a shop's platform domain that
// Lift stores and looks up: trimmed, without a scheme or a trailing slash or
// dot, lower-cased. DNS names are case-insensitive and "shop.example.com." is
// the same host as "shop.example.com", so every spelling a storefront, a
// webhook header or an operator sends must land on the same shop.
func NormalizeShopDomain(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= len("https://") && strings.EqualFold(s[:len("https://")], "https://") {
		s = s[len("https://"):]
	} else if len(s) >= len("http://") && strings.EqualFold(s[:len("http://")], "http://") {
		s = s[len("http://"):]
	}
	s = strings.TrimRight(s, "/")
	s = strings.TrimRight(s, ".")
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s // already lower case: no allocation on the tracking hot path
}
