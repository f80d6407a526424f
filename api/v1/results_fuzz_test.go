package v1_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
)

// FuzzResultQueryBody is the body of POST /v1/experiments/{id}/results as
// the v1 handler decodes it (api.DecodeJSONBytes into results.QueryRequest),
// then validated: refusals are 4xx, and an accepted spec, stored as the
// query's reuse key, holds only text Postgres can store.
func FuzzResultQueryBody(f *testing.F) {
	for _, s := range []string{
		`{"date_range":{"gte":"2026-05-01","lte":"2026-06-01"},"breakdown":["device","country"],"sample_basis":"sessions","metric_set":"core"}`,
		`{"product_group_id":"pg1","product_id":"gid://shopify/Product/8101"}`,
		`{"product_group_id":"pg1","product_id":"8101\u0000"}`,
		"{\"product_group_id\":\"pg\xff\"}",
		`{"breakdown":["device","device"]}`,
		`{"date_range":{"gte":"2026-02-30"}}`,
		`{"date_range":{"gte":"` + strings.Repeat("9", 5000) + `"}}`,
		`{"breakdown":"device"}`, `{"metric_set":null}`, `{"x":1}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	started := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	shop := &experiment.Shop{ID: 1, Timezone: "Europe/Berlin"}
	test := &experiment.Test{ID: 7, ShopID: 1, Status: experiment.StatusActive, CreatedAt: started, StartedAt: &started,
		ProductGroup: &experiment.ProductGroup{ID: "pg1", Name: "Tees"}}
	products := func(id string) ([]string, error) {
		if id != "pg1" {
			return nil, errors.New("no such group")
		}
		return []string{"8101", "8102"}, nil
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req results.QueryRequest
		if err := api.DecodeJSONBytes(body, &req); err != nil {
			if s := api.StatusOf(err); s < 400 || s >= 500 {
				t.Fatalf("decode refused with %d: %v", s, err)
			}
			return
		}
		spec, err := results.ValidateQuery(shop, test, req, started.Add(40*24*time.Hour), products)
		if err != nil {
			if s := api.StatusOf(err); s < 400 || s >= 500 {
				t.Fatalf("validation refused with %d: %v", s, err)
			}
			return
		}
		b, err := json.Marshal(spec)
		if err != nil || !utf8.Valid(b) || strings.Contains(string(b), `\u0000`) {
			t.Fatalf("accepted spec is not storable: %s (%v)", b, err)
		}
	})
}
