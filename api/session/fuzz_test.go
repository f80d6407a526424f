package session_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzPaths are the session endpoints that read a body; %s is a test id.
var fuzzPaths = []struct{ method, path string }{
	{"POST", "/api/price-experiments/v1/create"}, {"POST", "/api/price-experiments/v2/create"},
	{"POST", "/api/content-experiments/create"}, {"POST", "/api/shipping-experiments/create"},
	{"POST", "/api/redirect-experiments/create"}, {"POST", "/api/template-experiments/create"},
	{"POST", "/api/theme-experiments/create"}, {"POST", "/api/checkout-experiments/create"},
	{"PUT", "/api/experiments/%s"}, {"PUT", "/api/experiments/remove-products/%s"},
}

// FuzzSessionHTTP: whatever the body, the session surface answers 200, 400
// or 404 in its envelope, never 5xx, and a refused request creates or
// changes nothing.
func FuzzSessionHTTP(f *testing.F) {
	for i := range fuzzPaths {
		f.Add(uint8(i), []byte(priceV1("seed")))
	}
	f.Add(uint8(1), []byte(`{"name":"v2","products":[{"productId":"8101"}],"priceChangeType":"PERCENTAGE","priceChange":1e308,"testGroups":[{"name":"C","weight":50},{"name":"V","weight":50}]}`))
	f.Add(uint8(3), []byte(`{"name":"s","zoneIds":["501"],"testGroups":[{"name":"C","weight":50},{"name":"V","weight":50,"rates":[{"zoneId":"501","name":"\u0000","price":"1"}]}]}`))
	f.Add(uint8(2), []byte(`{"name":"i","testGroups":[{"name":"C","weight":50},{"name":"V","weight":50,"images":[{"productId":"8101","imageUrls":["/a.jpg","javascript:x"]}]}]}`))
	f.Add(uint8(2), []byte(`{"name":"i","testGroups":[{"name":"C","weight":50,"images":[]},{"name":"V","weight":50,"images":[{"productId":null,"imageUrls":{}}]}]}`))
	f.Add(uint8(8), []byte(`{"name":"x","status":"ACTIVE","settings":{"targetingRules":[1]}}`))
	f.Add(uint8(8), []byte(`{"settings":{"startDate":"9999-12-31T23:59:59Z","endDate":"0000-01-01T00:00:00Z"}}`))
	f.Add(uint8(9), []byte(`{"productIds":["99999999999999999999"]}`))
	f.Add(uint8(0), []byte("{\"name\":\"\xff\"}"))
	f.Add(uint8(0), []byte(`{"name":"w","testGroups":[{"name":"C","weight":1e30}]}`))
	s := newEnv(f).newShop()
	wantSuccess(f, s.do(f, "POST", "/api/price-experiments/v1/create", priceV1("Target")))
	target := s.list(f)[0]["_id"].(string)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		p := fuzzPaths[int(which)%len(fuzzPaths)]
		path := p.path
		if p.method == "PUT" {
			path = fmt.Sprintf(path, target)
		}
		before, test := len(s.list(t)), s.do(t, "GET", "/api/experiments/"+target, "").Raw
		r := s.do(t, p.method, path, string(body))
		switch {
		case r.Status == 200:
			wantSuccess(t, r)
		case r.Status == 400 || r.Status == 404:
			wantError(t, r, r.Status)
			if after := s.do(t, "GET", "/api/experiments/"+target, "").Raw; cmp.Diff(string(test), string(after)) != "" {
				t.Fatalf("refused with %d, yet the test changed: %s", r.Status, r.Raw)
			}
		default:
			t.Fatalf("%s %s answered %d: %s", p.method, path, r.Status, r.Raw)
		}
		want := before
		if r.Status == 200 && p.method == "POST" {
			want++
		}
		if got := len(s.list(t)); got != want {
			t.Fatalf("%d tests after a %d answer, want %d", got, r.Status, want)
		}
	})
}
