package platform

import (
	"encoding/json"
	"testing"

	"github.com/liftab/lift/experiment"
)

// TestDeliveryMethodRate: a flat-rate method's conditions become the
// rate's cart bounds, weights converted to grams from the unit the
// merchant set them in.
func TestDeliveryMethodRate(t *testing.T) {
	t.Parallel()
	var m deliveryMethod
	raw := `{"id":"gid://shopify/DeliveryMethodDefinition/7","name":"Economy","active":true,"rateProvider":{"price":{"amount":"4.50"}},
		"methodConditions":[
		{"field":"TOTAL_PRICE","operator":"LESS_THAN_OR_EQUAL_TO","conditionCriteria":{"amount":"49.99","currencyCode":"USD"}},
		{"field":"TOTAL_WEIGHT","operator":"GREATER_THAN_OR_EQUAL_TO","conditionCriteria":{"unit":"OUNCES","value":8}},
		{"field":"TOTAL_WEIGHT","operator":"LESS_THAN_OR_EQUAL_TO","conditionCriteria":{"unit":"POUNDS","value":2.5}}]}`
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	want := experiment.ZoneRate{ID: "gid://shopify/DeliveryMethodDefinition/7", Name: "Economy", Price: "4.50",
		MaxSubtotal: "49.99", MinGrams: 227, MaxGrams: 1134}
	if got := m.rate(); got != want {
		t.Fatalf("rate = %+v, want %+v", got, want)
	}
}
