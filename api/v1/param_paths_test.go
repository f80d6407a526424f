package v1_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/liftab/lift/store"
)

// A refused body names the offending field by its JSON path, indexes
// included, and says what is wrong in the API's words, never Go's (issue 12).
func TestValidationParamIsTheJSONPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	variant := fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s}]}`, teeS, usd19)
	create := func(groups, extra string) string {
		return fmt.Sprintf(`{"type":"price","name":"Paths","shared":{"price":{"product_ids":[%q]}},"test_groups":%s%s}`, tee, groups, extra)
	}
	draft := id(s.create(t, priceTest("Paths draft")))
	tests := []struct {
		name   string
		method string // POST creates, PATCH updates the draft
		body   string
		param  string
	}{
		{name: "CreateGroupSplitMistyped", method: "POST", param: "test_groups[1].split",
			body: create(`[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":"50","content":`+variant+`}]`, "")},
		{name: "CreateGroupSplitFraction", method: "POST", param: "test_groups[1].split",
			body: create(`[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50.5,"content":`+variant+`}]`, "")},
		{name: "CreateGroupUnknownField", method: "POST", param: "test_groups[1].colour",
			body: create(`[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,"colour":"red","content":`+variant+`}]`, "")},
		{name: "CreateScheduleUnknownField", method: "POST", param: "schedule.colour",
			body: create(fmt.Sprintf(twoGroups, variant), `,"schedule":{"colour":"red"}`)},
		{name: "CreateScheduleStartNotATime", method: "POST", param: "schedule.start_at",
			body: create(fmt.Sprintf(twoGroups, variant), `,"schedule":{"start_at":"tomorrow"}`)},
		{name: "CreateScheduleStartEmpty", method: "POST", param: "schedule.start_at",
			body: create(fmt.Sprintf(twoGroups, variant), `,"schedule":{"start_at":""}`)},
		{name: "CreateScheduleStartNumber", method: "POST", param: "schedule.start_at",
			body: create(fmt.Sprintf(twoGroups, variant), `,"schedule":{"start_at":1780000000}`)},
		{name: "CreateContentPriceMistyped", method: "POST", param: "test_groups[1].content.prices[0].price.amount",
			body: create(`[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,"content":{"prices":[{"product_variant_id":"`+teeS+`","price":{"amount":19,"currency":"USD"}}]}}]`, "")},
		{name: "PatchGroupUnknownField", method: "PATCH", param: "test_groups[1].colour",
			body: `{"test_groups":[{"index":0,"name":"Control"},{"index":1,"colour":"red"}]}`},
		// A PATCH names a group by its place in the test (groups in index
		// order), as every other PATCH finding does.
		{name: "PatchGroupByIndexUnknownField", method: "PATCH", param: "test_groups[1].colour",
			body: `{"test_groups":[{"index":1,"colour":"red"}]}`},
		{name: "PatchGroupSplitMistyped", method: "PATCH", param: "test_groups[1].split",
			body: `{"test_groups":[{"index":0,"name":"Control"},{"index":1,"split":"fifty"}]}`},
		{name: "PatchScheduleUnknownField", method: "PATCH", param: "schedule.colour",
			body: `{"schedule":{"colour":"red"}}`},
		{name: "PatchScheduleStartNotATime", method: "PATCH", param: "schedule.start_at",
			body: `{"schedule":{"start_at":"next week"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r resp
			if tc.method == "POST" {
				r = s.do(t, "POST", "/v1/experiments", tc.body)
			} else {
				r = s.patch(t, draft, tc.body)
			}
			e := wantError(t, r, http.StatusUnprocessableEntity, "validation_error", "invalid_request", tc.param)
			msg, _ := e["message"].(string)
			for _, leak := range []string{"2006", "json:", "Unmarshal", "struct", "int64", "float64", "time."} {
				if strings.Contains(msg, leak) {
					t.Errorf("message %q leaks %q", msg, leak)
				}
			}
		})
	}
}

// schedule.start_at: null is "no start", on create and on PATCH, never a
// refusal quoting Go's time layout.
func TestScheduleStartNullClearsIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	body := strings.TrimSuffix(priceTest("Null start"), "}") + `,"schedule":{"start_at":null,"end_at":"2026-07-01T00:00:00Z"}}`
	created := s.create(t, body)
	if sch, _ := created["schedule"].(map[string]any); sch == nil || sch["start_at"] != nil || sch["end_at"] != "2026-07-01T00:00:00Z" {
		t.Fatalf("created schedule = %v", created["schedule"])
	}
	x := id(created)
	if r := s.patch(t, x, `{"schedule":{"start_at":"2026-06-20T00:00:00Z"}}`); r.Status != http.StatusOK {
		t.Fatalf("setting start_at = %d %s", r.Status, r.Raw)
	}
	r := s.patch(t, x, `{"schedule":{"start_at":null}}`)
	if r.Status != http.StatusOK {
		t.Fatalf("clearing start_at = %d %s", r.Status, r.Raw)
	}
	if sch, _ := r.Body["schedule"].(map[string]any); sch == nil || sch["start_at"] != nil || sch["end_at"] != "2026-07-01T00:00:00Z" {
		t.Fatalf("schedule after clearing start_at = %v", r.Body["schedule"])
	}
}
