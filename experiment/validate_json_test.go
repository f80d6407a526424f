package experiment

import (
	"errors"
	"testing"
	"time"
)

func TestDecodeFailuresNameTheJSONPath(t *testing.T) {
	t.Parallel()
	const groups = `"test_groups":[{"index":0,"name":"C","split":50},`
	tests := []struct {
		name, body, param, message string
	}{
		{"GroupSplitString", `{"type":"theme","name":"x",` + groups + `{"index":1,"name":"V","split":"50"}]}`,
			"test_groups[1].split", `test_groups[1].split must be a whole number, not a string "50".`},
		{"GroupUnknownField", `{"type":"theme","name":"x",` + groups + `{"index":1,"name":"V","split":50,"colour":"red"}]}`,
			"test_groups[1].colour", `Unknown field "test_groups[1].colour".`},
		{"ScheduleUnknownField", `{"type":"theme","name":"x","schedule":{"colour":"red"}}`,
			"schedule.colour", `Unknown field "schedule.colour".`},
		{"ScheduleStartNotATime", `{"type":"theme","name":"x","schedule":{"start_at":"soon"}}`,
			"schedule.start_at", `schedule.start_at is an ISO 8601 date-time such as 2026-01-31T00:00:00Z, or null.`},
		{"ScheduleNotAnObject", `{"type":"theme","name":"x","schedule":[]}`,
			"schedule", `schedule is an object with start_at and end_at, or null.`},
		{"GroupsNotAnArray", `{"type":"theme","name":"x","test_groups":{}}`,
			"test_groups", `test_groups must be an array, not an object.`},
		{"SharedEntryIsRaw", `{"type":"theme","name":"x","shared":{"theme":5},"traffic_allocation":true}`,
			"traffic_allocation", `traffic_allocation must be a whole number, not a boolean true.`},
		{"CaseInsensitiveFieldIsKnown", `{"type":"theme","NAME":"x","hypothesis":7}`,
			"hypothesis", `hypothesis must be a string, not a number 7.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseCreate([]byte(tc.body), 1, time.Now())
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if e.Param != tc.param || e.Message != tc.message {
				t.Errorf("param %q, message %q; want %q, %q", e.Param, e.Message, tc.param, tc.message)
			}
		})
	}
}
