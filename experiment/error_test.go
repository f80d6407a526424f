package experiment

import (
	"encoding/json"
	"testing"
)

func TestFindingParamIsNullForTheWholeBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    Finding
		want string
	}{
		{Finding{SeverityError, "invalid_request", "The request body is a JSON object.", ""},
			`{"severity":"error","code":"invalid_request","message":"The request body is a JSON object.","param":null}`},
		{Finding{SeverityWarning, "price_below_cost", "m", "test_groups[1].content.prices[0].amount"},
			`{"severity":"warning","code":"price_below_cost","message":"m","param":"test_groups[1].content.prices[0].amount"}`},
	}
	for _, tc := range tests {
		got, err := json.Marshal(tc.f)
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.f, got, err, tc.want)
		}
		var back Finding
		if err := json.Unmarshal(got, &back); err != nil || back != tc.f {
			t.Errorf("round trip of %s = %+v, %v", got, back, err)
		}
	}
}
