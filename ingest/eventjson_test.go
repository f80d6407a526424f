package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The hand-written track-event decoder must be indistinguishable from
// json.Unmarshal: same value, same error. These bodies are the seeds of the
// parity fuzz targets and a table of the cases where the two could drift.

const parityBody = `{"eventId":"e-1","sessionId":"` + testSession + `","visitorId":"v-1","eventType":"product_added_to_cart",` +
	`"source":"webpixel","createdAt":"2026-11-21T10:00:00Z","experimentIds":["101","102"],"pagePath":"/p",` +
	`"payload":{"pageType":"product","productIds":["gid://shopify/Product/7",8],"variantIds":[70],"quantity":2,"orderId":null,"extra":{"a":[1,true,null,"\u00e9"]}}}`

var parityBodies = []string{
	parityBody,
	`{}`, `[]`, `null`, `1`, `"x"`, ``, ` `, `{`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `{"sessionId":"x"} x`, `{} {}`,
	`{"sessionId":1}`, `{"sessionId":null}`, `{"sessionId":"a","sessionId":"b"}`, `{"sessionid":"a"}`, `{"SESSIONID":"a"}`,
	`{"ſessionId":"a"}`, `{"eventType":"\u212a"}`, "{\"visitorId\":\"\xff\"}", `{"visitorId":"a\"b"}`, `{"visitorId":"a\u0000"}`,
	"{\"visitorId\":\"a\x01\"}", `{"visitorId":"é"}`, `{"experimentIds":[]}`, `{"experimentIds":null}`, `{"experimentIds":[null]}`,
	`{"experimentIds":[1]}`, `{"experimentIds":["1",]}`, `{"experimentIds":{}}`, `{"pagePath":null}`, `{"pagePath":""}`,
	`{"pagePath":5}`, `{"createdAt":null}`, `{"createdAt": 1763719200000 }`, `{"createdAt":-0.5e+3}`, `{"createdAt":01}`,
	`{"createdAt":1.}`, `{"createdAt":.5}`, `{"createdAt":1e}`, `{"createdAt":-}`, `{"createdAt":tru}`, `{"createdAt":[1,[2,{"x":"\ud800"}]]}`,
	`{"createdAt":"\x"}`, `{"createdAt":"\u12"}`, `{"other":{"sessionId":1}}`, `{"other":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"payload":null}`, `{"payload":"x"}`, `{"payload":{"quantity":1e400}}`, `{"payload":{"quantity":null}}`, `{"payload":{"quantity":"2"}}`,
	`{"payload":{"productIds":[1e400]}}`, `{"payload":{"productIds":[null,"7",{}]}}`, `{"payload":{"productIds":[]}}`, `{"payload":{"ProductIds":["7"]}}`,
	`{"payload":{"orderId":12.50}}`, `{"payload":{"orderId":true}}`, `{"payload":{"name":"a","name":"b"}}`, "\t{\"eventId\" : \"e\" }\n",
	"\ufeff{}", `{"eventId":"a"}` + "\x00",
	`{"experimentIds":[1e-400]}`, `{"experimentIds":[-0]}`, `{"experimentIds":[1.0]}`, `{"experimentIds":[18446744073709551615]}`,
	`{"experimentIds":[18446744073709551616]}`, `{"payload":{"orderId":7}}`, `{"payload":{"productIds":[-1]}}`,
}

// An id sent as a number is a whole number from 0 to 2^64-1, kept as
// written; anything else named no test or product and was stored anyway.
func TestFlexStringWholeNumbers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`7`: "7", `"07"`: "07", `18446744073709551615`: "18446744073709551615", `null`: "",
		`1e-400`: "error", `-0`: "error", `-1`: "error", `1.0`: "error", `1e2`: "error", `18446744073709551616`: "error"} {
		var f FlexString
		var got string
		if err := json.Unmarshal([]byte(in), &f); err != nil {
			got = "error"
		} else {
			got = string(f)
		}
		if got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// checkParity fails unless decode on body gives what json.Unmarshal gives.
func checkParity[T any](t *testing.T, body []byte, decode func([]byte, *T) error) {
	t.Helper()
	var want, got T
	wantErr := json.Unmarshal(body, &want)
	gotErr := decode(body, &got)
	if fmt.Sprintf("%T %v", wantErr, wantErr) != fmt.Sprintf("%T %v", gotErr, gotErr) {
		t.Fatalf("%q: error %T %v, json.Unmarshal %T %v", body, gotErr, gotErr, wantErr, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%q: value differs from json.Unmarshal (-want +got):\n%s", body, diff)
	}
}

func TestDecodeEventRequestParity(t *testing.T) {
	t.Parallel()
	for _, body := range parityBodies {
		checkParity(t, []byte(body), DecodeEventRequest)
		if i := strings.Index(body, `"payload":`); i >= 0 {
			var raw json.RawMessage
			if json.Unmarshal([]byte(body[i+len(`"payload":`):len(body)-1]), &raw) == nil {
				checkParity(t, raw, decodePayload)
			}
		}
	}
}

// TestDecodeEventRequestFastPath: the common body never reaches
// encoding/json (else the fast path silently stopped paying).
func TestDecodeEventRequestFastPath(t *testing.T) {
	t.Parallel()
	for _, body := range []string{parityBody, `{"sessionId":"` + testSession + `","experimentIds":[],"pagePath":null,"payload":null}`} {
		var req EventRequest
		if s := (jsonScan{b: []byte(body)}); !s.eventRequest(&req) {
			t.Errorf("fast path gave up on %s", body)
		}
	}
	var p eventPayload
	if s := (jsonScan{b: []byte(`{"pageType":"product","productIds":["gid://shopify/Product/7",8],"quantity":2,"x":[{}]}`)}); !s.payload(&p) {
		t.Error("fast path gave up on a common payload")
	}
}

func FuzzEventJSONParity(f *testing.F) {
	for _, b := range parityBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkParity(t, body, DecodeEventRequest)
		checkParity(t, body, decodePayload)
	})
}
