package experiment

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The v1 create and PATCH decoders are fed arbitrary bodies: they must
// never panic, refuse only with a 4xx *Error (or the documented 501 for a
// type the API cannot create), and what they accept must be storable: text
// without NUL or invalid UTF-8, within its documented limit, and group
// indexes Postgres' int4 holds. `make fuzz` runs them for longer.

const fuzzPrice = `{"type":"price","name":"Tee price","hypothesis":"Cheaper sells more","shared":{"price":{"product_ids":["gid://shopify/Product/8101"]}},` +
	`"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,` +
	`"content":{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/44001","price":{"amount":"19.00","currency":"USD"}}]}}]}`

// fuzzSeeds are the malformed bodies of issue 12's corpus, and their kin.
var fuzzSeeds = []string{
	fuzzPrice,
	`{"type":"price","name":"a\u0000b","test_groups":[]}`,
	"{\"type\":\"price\",\"name\":\"a\xffb\"}",
	`{"type":"price","name":"x","hypothesis":"` + strings.Repeat("h", MaxHypothesisChars+1) + `"}`,
	`{"type":"visual_editor","name":"v","test_groups":[{"index":0,"name":"C","split":50},{"index":1,"name":"V","split":50,"content":{"custom_css":"\ud800"}}]}`,
	`{"type":"visual_editor","name":"v","test_groups":[{"index":0,"name":"C","split":50},{"index":1,"name":"V","split":50,"content":{"custom_js":"\ud83d\ude00\u0000"}}]}`,
	`{"type":"price","name":"x","test_groups":[{"index":1099511627776,"name":"V","split":50}]}`,
	`{"type":"price","name":"x","test_groups":[{"index":-1,"name":"V","split":50},{"index":1e400}]}`,
	`{"type":"price","name":"x","schedule":{"start_at":null}}`,
	`{"type":"price","name":"x","schedule":{"start_at":5,"end_at":"2026-13-01T00:00:00Z"}}`,
	`{"type":"price","name":"x","schedule":[]}`,
	`{"type":"checkout","name":"x"}`,
	`{"type":7}`,
	`{"type":"price","name":"x","audience":{"\u0000":1}}`,
	"{\"type\":\"price\",\"name\":\"x\",\"shared\":{\"\xff\":{}}}",
	`{"type":"price","test_groups":[{"index":0,"remove":true}]}`,
	`{"name":"x","test_groups":[{"index":"1","name":"n"}]}`,
	`{"traffic_allocation":1099511627776,"test_groups":[{"index":1,"split":1e30}]}`,
	`[` + strings.Repeat(`[`, 100) + `]`,
	`{"a":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 201),
	`{"type":"price"}{}`,
	``, `null`, `"x"`, `{`,
}

func FuzzParseCreate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"type":"visual_editor","name":"v","shared":{"visual_editor":{"product_ids":["gid://shopify/Product/1"]}},` +
		`"test_groups":[{"index":0,"name":"A","split":50},{"index":1,"name":"B","split":50,"content":{"images":[{"product_id":"gid://shopify/Product/1","urls":["/a.jpg","https://x/b"]}],` +
		`"dom_changes":[{"selector":"h1","action":"set","attribute":"position","parent_selector":"main"},{"selector":"a","action":"append","attribute":"href","value":"?x"}]}}]}`))
	f.Add([]byte(`{"type":"visual_editor","name":"v","test_groups":[{"index":1,"name":"B","split":100,"content":{"images":[{"urls":null}],"dom_changes":[{}]}}]}`))
	now := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := ParseCreate(body, 1, now)
		if err != nil {
			wantClientError(t, err)
		} else {
			wantStorable(t, got)
		}
		// The admin panel's create takes DOM changes, and then the
		// validator judges them: a refusal, never a panic or a 5xx.
		panel, err := parseCreate(body, 1, now, true)
		if err == nil {
			_, err = Validate(context.Background(), testShop, panel, testCatalog, ValidateFull, now)
		}
		if err != nil {
			wantClientError(t, err)
		}
	})
}

func FuzzApplyPatch(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"name":"a\u0000"}`))
	f.Add([]byte(`{"test_groups":[{"index":1099511627776,"name":"z","split":0}]}`))
	f.Add([]byte(`{"test_groups":[{"index":1,"remove":true},{"index":2,"name":"n","split":50}]}`))
	f.Add([]byte(`{"shared":{"price":{"product_ids":null}},"schedule":{"end_at":"x"}}`))
	now := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		cur, err := ParseCreate([]byte(fuzzPrice), 1, now)
		if err != nil {
			t.Fatal(err)
		}
		next, _, err := ApplyPatch(cur, body, now.Add(time.Hour))
		if err != nil {
			wantClientError(t, err)
			return
		}
		wantStorable(t, next)
	})
}

// wantClientError fails unless err is a refusal the caller can act on.
func wantClientError(t *testing.T, err error) {
	t.Helper()
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("not an *Error (a 500): %v", err)
	}
	switch e.Kind {
	case KindInvalidRequest, KindValidation, KindConflict, KindTooLarge:
	case KindNotImplemented:
		if e.Code != "not_implemented" {
			t.Fatalf("501 with code %s", e.Code)
		}
	default:
		t.Fatalf("kind %d is not a client error: %v", e.Kind, err)
	}
	if !utf8.ValidString(e.Message) || !utf8.ValidString(e.Param) {
		t.Fatalf("error text is not UTF-8: %q (%q)", e.Message, e.Param)
	}
	if strings.Contains(e.Message, "2006-01-02") || strings.Contains(e.Message, "json:") {
		t.Fatalf("message leaks Go's wording: %s", e.Message)
	}
}

// wantStorable fails if t holds something the store would refuse.
func wantStorable(t *testing.T, x *Test) {
	t.Helper()
	text := func(param, s string, max int) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			t.Fatalf("%s accepted with bytes no store holds: %q", param, s)
		}
		if utf8.RuneCountInString(s) > max {
			t.Fatalf("%s accepted over its limit of %d", param, max)
		}
	}
	raw := func(param string, r json.RawMessage) {
		if err := CheckJSONText(r, func(string) int { return math.MaxInt }); err != nil {
			t.Fatalf("%s accepted with text no store holds: %v", param, err)
		}
	}
	text("name", x.Name, MaxNameChars)
	if x.Hypothesis != nil {
		text("hypothesis", *x.Hypothesis, MaxHypothesisChars)
	}
	for k, v := range x.Shared {
		text("shared key", k, MaxKeyChars)
		raw("shared."+k, v)
	}
	raw("audience", x.Audience)
	for _, g := range x.Groups {
		text("group name", g.Name, MaxNameChars)
		raw("content", g.Content)
		if g.Index > MaxGroupIndex || g.Index < math.MinInt32 {
			t.Fatalf("group index %d accepted", g.Index)
		}
	}
}
