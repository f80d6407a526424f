package session_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// bodyWithWeights is a valid creation body of each endpoint of 4.2, its
// test groups' weights left to fill in (%[1]s control, %[2]s variant).
var bodyWithWeights = map[string]string{
	"/api/price-experiments/v1/create": fmt.Sprintf(`{"name":"W","products":[{"productId":%q,"variants":[{"variantId":%q,"price":"19.00"}]}],
		"testGroups":[{"name":"Control","weight":%%[1]s},{"name":"Variant","weight":%%[2]s}]}`, tee, teeS),
	"/api/price-experiments/v2/create": fmt.Sprintf(`{"name":"W","products":[{"productId":%q}],"priceChangeType":"PERCENTAGE","priceChange":10,
		"testGroups":[{"name":"Control","weight":%%[1]s},{"name":"Variant","weight":%%[2]s}]}`, tee),
	"/api/content-experiments/create": `{"name":"W","testGroups":[{"name":"Control","weight":%[1]s},{"name":"Variant","weight":%[2]s,"customCss":"a{}"}]}`,
	"/api/shipping-experiments/create": fmt.Sprintf(`{"name":"W","zoneIds":[%q],"testGroups":[{"name":"Control","weight":%%[1]s},
		{"name":"Variant","weight":%%[2]s,"rates":[{"zoneId":%q,"name":"Standard","price":"3.00"}]}]}`, domestic, domestic),
	"/api/redirect-experiments/create": `{"name":"W","sourcePath":"/pages/sale","testGroups":[{"name":"Control","weight":%[1]s},
		{"name":"Variant","weight":%[2]s,"destination":"/pages/sale-b"}]}`,
	"/api/template-experiments/create": fmt.Sprintf(`{"name":"W","themeId":%q,"testGroups":[{"name":"Control","weight":%%[1]s},
		{"name":"Variant","weight":%%[2]s,"template":"product.alternate"}]}`, dawn),
	"/api/theme-experiments/create": fmt.Sprintf(`{"name":"W","testGroups":[{"name":"Control","weight":%%[1]s},
		{"name":"Variant","weight":%%[2]s,"themeId":%q}]}`, holiday),
	"/api/checkout-experiments/create": `{"name":"W","testGroups":[{"name":"Control","weight":%[1]s},{"name":"Variant","weight":%[2]s}]}`,
}

// TestWeightIsANumber: part 2.2 types weight as a number, so every creation
// endpoint takes any JSON number whose value is a whole percent and stores
// it as that percent; a fraction, a value outside 0 to 100 or a value that
// is not a number is 400 and creates nothing, and the message about a
// number never says it must be one.
func TestWeightIsANumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		name             string
		control, variant string
		// want is the stored control and variant percent; empty wantMsg
		// means the create succeeds.
		want    [2]float64
		wantMsg string
	}{
		{"integers", "50", "50", [2]float64{50, 50}, ""},
		{"decimal point", "50.0", "50.00", [2]float64{50, 50}, ""},
		{"exponent", "5e1", "0.5E+2", [2]float64{50, 50}, ""},
		{"uneven", "70.0", "3E1", [2]float64{70, 30}, ""},
		{"negative zero", "-0", "100", [2]float64{0, 100}, ""},
		{"fraction", "33.3", "66.7", [2]float64{}, "testGroups[0].weight is 33.3; weights are whole percents"},
		{"fraction on the variant", "50", "49.5", [2]float64{}, "testGroups[1].weight is 49.5; weights are whole percents"},
		{"over 100", "150", "-50", [2]float64{}, "testGroups[0].weight is 150; weights are whole percents of traffic, from 0 to 100"},
		{"beyond float64", "1e400", "50", [2]float64{}, "testGroups[0].weight is +Inf; weights are whole percents"},
		{"string", `"50"`, "50", [2]float64{}, "testGroups[0].weight must be a number, not a string"},
		{"boolean", "50", "true", [2]float64{}, "testGroups[1].weight must be a number, not a boolean"},
		{"null", "null", "100", [2]float64{}, "testGroups[0].weight is required"},
	}
	for path, body := range bodyWithWeights {
		for _, c := range cases {
			t.Run(strings.Split(path, "/")[2]+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				s := e.newShop()
				if strings.Contains(path, "checkout") {
					withCheckoutPlan(t, s)
				}
				r := s.do(t, "POST", path, fmt.Sprintf(body, c.control, c.variant))
				if c.wantMsg != "" {
					msg := wantError(t, r, http.StatusBadRequest)
					if !strings.Contains(msg, c.wantMsg) || strings.Contains(msg, "must be a whole number") {
						t.Fatalf("message %q, want it to contain %q", msg, c.wantMsg)
					}
					if l := s.list(t); len(l) != 0 {
						t.Fatalf("a refused create made %v", l)
					}
					return
				}
				wantSuccess(t, r)
				id := s.list(t)[0]["_id"].(string)
				d := s.do(t, "GET", "/api/experiments/"+id, "").data().(map[string]any)
				gs := d["testGroups"].([]any)
				for i, g := range gs {
					if w := g.(map[string]any)["weight"]; w != c.want[i] {
						t.Fatalf("group %d weighs %v, want %v", i, w, c.want[i])
					}
				}
			})
		}
	}
}
