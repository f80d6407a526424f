package experiment

import (
	"strings"
	"testing"
)

func TestCheckJSONText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		kind       Kind // 0: accepted
		code       string
		param      string
	}{
		{"Plain", `{"name":"Tee","test_groups":[{"name":"Control"}]}`, 0, "", ""},
		{"Escapes", `{"name":"a\"b\\c\/d\n\u00fc\ud83d\ude00"}`, 0, "", ""},
		{"MultiByte", `{"name":"` + strings.Repeat("ü", MaxNameChars) + `"}`, 0, "", ""},
		{"NULEscape", `{"name":"a\u0000"}`, KindInvalidRequest, "malformed_json", "name"},
		{"NULInArray", `{"test_groups":[{},{"name":"\u0000"}]}`, KindInvalidRequest, "malformed_json", "test_groups[1].name"},
		{"InvalidUTF8", "{\"hypothesis\":\"\xc3\x28\"}", KindInvalidRequest, "malformed_json", "hypothesis"},
		{"LoneHighSurrogate", `{"shared":{"x":"\ud800x"}}`, KindInvalidRequest, "malformed_json", "shared.x"},
		{"LoneLowSurrogate", `{"shared":{"x":"\udc00"}}`, KindInvalidRequest, "malformed_json", "shared.x"},
		{"BadKey", `{"shared":{"a\u0000b":1}}`, KindInvalidRequest, "malformed_json", "shared.a"},
		{"NameTooLong", `{"name":"` + strings.Repeat("ü", MaxNameChars+1) + `"}`, KindValidation, "invalid_request", "name"},
		{"GroupNameTooLong", `{"test_groups":[{"name":"` + strings.Repeat("n", MaxNameChars+1) + `"}]}`, KindValidation, "invalid_request", "test_groups[0].name"},
		{"HypothesisAtLimit", `{"hypothesis":"` + strings.Repeat("h", MaxHypothesisChars) + `"}`, 0, "", ""},
		{"CSSUnderItsLimit", `{"test_groups":[{"content":{"custom_css":"` + strings.Repeat("c", MaxTextChars+1) + `"}}]}`, 0, "", ""},
		{"OtherTextTooLong", `{"shared":{"price":{"product_ids":["` + strings.Repeat("1", MaxTextChars+1) + `"]}}}`,
			KindValidation, "invalid_request", "shared.price.product_ids[0]"},
		{"DeepAtTheLimit", strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100), 0, "", ""},
		{"TooDeep", strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000), KindInvalidRequest, "malformed_json", ""},
		{"TooDeepArrays", `{"a":` + strings.Repeat(`[`, 101) + strings.Repeat(`]`, 101) + `}`, KindInvalidRequest, "malformed_json", ""},
		{"KeyTooLong", `{"audience":{"` + strings.Repeat("k", MaxKeyChars+1) + `":1}}`, KindValidation, "invalid_request", "audience"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckJSONText([]byte(tc.body), testTextLimit)
			if tc.kind == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Kind != tc.kind || e.Code != tc.code || e.Param != tc.param {
				t.Fatalf("got %v, want kind %d %s (%s)", err, tc.kind, tc.code, tc.param)
			}
		})
	}
}
