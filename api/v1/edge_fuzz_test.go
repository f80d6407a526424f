package v1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
)

// The HTTP-level fuzz targets run the real v1 server (harness_test.go) on
// real Postgres and Redis: whatever the body, media type, Idempotency-Key
// or query, no 5xx, and a refusal changes nothing in the store.

// fuzzSend posts body to path with the given Content-Type and
// Idempotency-Key ("" leaves a header out). ok is false when the client
// itself will not send the request (a header value net/http refuses).
func fuzzSend(t *testing.T, s *shopEnv, method, path, rawQuery, contentType, key string, body []byte) (resp, bool) {
	req, err := http.NewRequest(method, s.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		return resp{}, false
	}
	// net/http's server answers a request line it cannot parse itself (a
	// plain 400): the query reaches the API percent-encoded, as clients send it.
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return resp{}, false
	}
	req.URL.RawQuery = q.Encode()
	req.Header.Set("Authorization", "Bearer "+s.write)
	if contentType != "" {
		req.Header["Content-Type"] = []string{contentType}
	}
	if key != "" {
		req.Header["Idempotency-Key"] = []string{key}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp{}, false
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	json.Unmarshal(raw, &r.Body)
	return r, true
}

// wantEdgeAnswer fails on a 5xx, and on a refusal without the envelope.
func wantEdgeAnswer(t *testing.T, r resp) {
	t.Helper()
	if r.Status >= 500 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if r.Status >= 400 {
		e, _ := r.Body["error"].(map[string]any)
		code, _ := e["code"].(string)
		typ, _ := e["type"].(string)
		_, hasParam := e["param"]
		if code == "" || typ == "" || !hasParam {
			t.Fatalf("%d without the error envelope (type, code, param): %s", r.Status, r.Raw)
		}
	}
}

func newest(t *testing.T, s *shopEnv) int64 {
	t.Helper()
	tests, _, err := s.db.FindTests(context.Background(), s.shop.ID, experiment.Filter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) == 0 {
		return 0
	}
	return tests[0].ID
}

var edgeSeeds = []struct {
	contentType, key, query string
	body                    string
}{
	{"application/json", "", "", priceTest("seed")},
	{"application/json", "", "", strings.Replace(priceTest("nul"), `"name":"nul"`, `"name":"a\u0000b"`, 1)},
	{"application/json", "", "", strings.Replace(priceTest("utf"), `"name":"utf"`, "\"name\":\"a\xffb\"", 1)},
	{"application/json", "", "", strings.Replace(priceTest("big"), `"index":1,`, `"index":1099511627776,`, 1)},
	{"application/json", "", "", strings.Replace(priceTest("hyp"), `"name":"hyp"`, `"name":"hyp","hypothesis":"`+strings.Repeat("h", 5001)+`"`, 1)},
	{"application/json", "", "", strings.Replace(priceTest("sch"), `"name":"sch"`, `"name":"sch","schedule":{"start_at":null,"end_at":7}`, 1)},
	{"application/json", "k\xff", "", priceTest("key")},
	{"text/plain", "", "", priceTest("ct")},
	{"application/json", "", "x=%00", priceTest("q")},
	{"", "", "", `{"type":"visual_editor","name":"v","test_groups":[{"index":0,"name":"C","split":50},{"index":1,"name":"V","split":50,"content":{"custom_css":"\ud800"}}]}`},
}

func FuzzCreateHTTP(f *testing.F) {
	for _, sd := range edgeSeeds {
		f.Add(sd.contentType, sd.key, sd.query, []byte(sd.body))
	}
	s := newEnv(f).newShop(store.ShopUpdate{})
	f.Fuzz(func(t *testing.T, contentType, key, query string, body []byte) {
		before := newest(t, s)
		r, sent := fuzzSend(t, s, "POST", "/v1/experiments", query, contentType, key, body)
		if !sent {
			return
		}
		wantEdgeAnswer(t, r)
		if r.Status >= 400 && newest(t, s) != before {
			t.Fatalf("refused with %d, yet a test was created: %s", r.Status, r.Raw)
		}
	})
}

func FuzzPatchHTTP(f *testing.F) {
	for _, sd := range edgeSeeds {
		f.Add(sd.contentType, sd.query, []byte(sd.body))
	}
	f.Add("application/json", "", []byte(`{"name":"a\u0000"}`))
	f.Add("application/json", "", []byte(`{"test_groups":[{"index":1099511627776,"name":"z","split":0}]}`))
	f.Add("application/json", "", []byte(`{"schedule":{"start_at":"2026-13-01T00:00:00Z"}}`))
	f.Add("application/merge-patch+json", "", []byte(`{"hypothesis":"ok"}`))
	e := newEnv(f)
	s := e.newShop(store.ShopUpdate{})
	ctx := context.Background()
	req, _ := http.NewRequest("POST", s.srv.URL+"/v1/experiments", strings.NewReader(priceTest("patched")))
	req.Header.Set("Authorization", "Bearer "+s.write)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.Fatal(err)
	}
	var created struct{ ID string }
	json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	id, err := strconv.ParseInt(created.ID, 10, 64)
	if err != nil {
		f.Fatalf("create = %d", res.StatusCode)
	}
	f.Fuzz(func(t *testing.T, contentType, query string, body []byte) {
		path := "/v1/experiments/" + created.ID
		cur, err := e.db.FindTestByID(ctx, s.shop.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		r, sent := fuzzSend(t, s, "PATCH", path, query, contentType, "", body)
		if !sent {
			return
		}
		wantEdgeAnswer(t, r)
		after, err := e.db.FindTestByID(ctx, s.shop.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status >= 400 && !reflect.DeepEqual(cur, after) {
			t.Fatalf("refused with %d, yet the test changed: %s", r.Status, r.Raw)
		}
	})
}
