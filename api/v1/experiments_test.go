package v1_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/store"
)

func TestCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})

	t.Run("DraftWith201", func(t *testing.T) {
		t.Parallel()
		got := s.create(t, priceTest("Tee at 19"))
		if !regexp.MustCompile(`^[0-9]+$`).MatchString(id(got)) || got["object"] != "experiment" ||
			got["status"] != "draft" || got["type"] != "price" || got["traffic_allocation"] != float64(100) ||
			got["assignment_version"] != float64(1) || got["started_at"] != nil {
			t.Fatalf("created = %v", got)
		}
		if w, ok := got["warnings"].([]any); !ok || len(w) != 0 {
			t.Fatalf("warnings = %v", got["warnings"])
		}
		read := s.do(t, "GET", "/v1/experiments/"+id(got), "")
		delete(got, "warnings")
		if diff := cmp.Diff(got, read.Body); diff != "" {
			t.Fatalf("GET differs from the create response (-create +get):\n%s", diff)
		}
	})
	t.Run("NullOptionIsAbsent", func(t *testing.T) {
		t.Parallel()
		// "markets": null means no markets; echoed, it broke the schema's
		// array (docs audit D8).
		body := fmt.Sprintf(`{"type":"price","name":"Null markets","shared":{"price":{"product_ids":[%q],"markets":null}},"test_groups":`+twoGroups+`}`,
			tee, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":{"amount":"19.00","currency":"USD"}}]}`, teeS))
		got := s.create(t, body)
		price := got["shared"].(map[string]any)["price"].(map[string]any)
		if _, has := price["markets"]; has || price["product_ids"] == nil {
			t.Fatalf("shared.price = %v, want product_ids and no markets", price)
		}
	})
	t.Run("WarningsRideAlong", func(t *testing.T) {
		t.Parallel()
		body := fmt.Sprintf(`{"type":"price","name":"Below cost","shared":{"price":{"product_ids":[%q]}},"test_groups":`+twoGroups+`}`,
			tee, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":{"amount":"5.00","currency":"USD"}}]}`, teeS))
		got := s.create(t, body)
		w := got["warnings"].([]any)
		want := map[string]any{"severity": "warning", "code": "price_below_cost",
			"param": "test_groups[1].content.prices[0].price.amount"}
		if len(w) != 1 {
			t.Fatalf("warnings = %v", w)
		}
		wm := w[0].(map[string]any)
		delete(wm, "message")
		if diff := cmp.Diff(want, wm); diff != "" {
			t.Fatalf("warning mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("OrderDiscountOverEveryPriceWarns", func(t *testing.T) {
		t.Parallel()
		// The demo's dearest item is the weekender bag at 145.00: 150.00 off
		// any order makes every one-item order free, and is created with a
		// warning; 10 off orders over 50 is an ordinary offer.
		order := func(value, conditions string) string {
			return fmt.Sprintf(`{"type":"offer","name":"Order","test_groups":`+twoGroups+`}`, fmt.Sprintf(
				`{"offers":[{"key":"k","title":"T","discount":{"type":"fixed_amount","value":%q}%s}]}`, value, conditions))
		}
		w := s.create(t, order("150.00", ""))["warnings"].([]any)
		if len(w) != 1 {
			t.Fatalf("warnings = %v, want one", w)
		}
		wm := w[0].(map[string]any)
		msg, _ := wm["message"].(string)
		delete(wm, "message")
		want := map[string]any{"severity": "warning", "code": "discount_above_every_price", "param": "test_groups[1].content.offers[0].discount.value"}
		if diff := cmp.Diff(want, wm); diff != "" {
			t.Fatalf("warning mismatch (-want +got):\n%s", diff)
		}
		if !strings.Contains(msg, "Canvas Weekender Bag (gid://shopify/Product/8105) costs 145.00") {
			t.Errorf("message %q does not name the dearest item", msg)
		}
		ordinary := s.create(t, order("10.00", `,"conditions":{"min_subtotal":{"amount":"50.00","currency":"USD"}}`))
		if w := ordinary["warnings"].([]any); len(w) != 0 {
			t.Fatalf("10 off orders over 50: warnings = %v", w)
		}
	})
	t.Run("IdempotentRetry", func(t *testing.T) {
		t.Parallel()
		body := priceTest("Idempotent")
		first := s.do(t, "POST", "/v1/experiments", body, "Idempotency-Key", "create-once")
		again := s.do(t, "POST", "/v1/experiments", body, "Idempotency-Key", "create-once")
		if first.Status != 201 || again.Status != 201 || string(first.Raw) != string(again.Raw) {
			t.Fatalf("retry answered %d %s, first %d %s", again.Status, again.Raw, first.Status, first.Raw)
		}
		list := s.do(t, "GET", "/v1/experiments?limit=100", "")
		n := 0
		for _, x := range list.Body["data"].([]any) {
			if x.(map[string]any)["name"] == "Idempotent" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d tests named Idempotent; the retry created a duplicate", n)
		}
		// The same JSON laid out otherwise is the same request.
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, []byte(body), "", "    "); err != nil {
			t.Fatal(err)
		}
		if r := s.do(t, "POST", "/v1/experiments", pretty.String(), "Idempotency-Key", "create-once"); r.Status != 201 || string(r.Raw) != string(first.Raw) {
			t.Fatalf("re-serialized retry answered %d %s", r.Status, r.Raw)
		}
		// So is the same JSON with its keys in another order (v1 audit 2, V11).
		var v map[string]any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		sorted, _ := json.Marshal(v) // encoding/json sorts keys; the literal does not
		if string(sorted) == body {
			t.Fatal("the reordered body is the body")
		}
		if r := s.do(t, "POST", "/v1/experiments", string(sorted), "Idempotency-Key", "create-once"); r.Status != 201 || string(r.Raw) != string(first.Raw) {
			t.Fatalf("a retry with its keys reordered answered %d %s", r.Status, r.Raw)
		}
		other := s.do(t, "POST", "/v1/experiments", priceTest("Other body"), "Idempotency-Key", "create-once")
		wantError(t, other, 409, "conflict_error", "idempotency_key_in_use", "")
		long := s.do(t, "POST", "/v1/experiments", body, "Idempotency-Key", strings.Repeat("k", 256))
		wantError(t, long, 400, "invalid_request_error", "invalid_idempotency_key", "Idempotency-Key")
		// The limit counts characters: 255 é (510 bytes) is a key.
		if r := s.do(t, "POST", "/v1/experiments", body, "Idempotency-Key", strings.Repeat("é", 255)); r.Status != 201 {
			t.Fatalf("a key of 255 two-byte characters = %d %s, want 201", r.Status, r.Raw)
		}
	})
	t.Run("Checkout501", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, "POST", "/v1/experiments", `{"type":"checkout","name":"c"}`)
		wantError(t, r, 501, "api_error", "not_implemented", "type")
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		t.Parallel()
		wantError(t, s.do(t, "POST", "/v1/experiments", `{"type":`), 400, "invalid_request_error", "malformed_json", "")
	})
	t.Run("ReadScopeCannotCreate", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, "POST", "/v1/experiments", priceTest("x"), "Authorization", "Bearer "+s.read)
		e := wantError(t, r, 403, "permission_error", "insufficient_scope", "")
		if d := e["details"].(map[string]any); d["required_scope"] != "write_experiments" {
			t.Fatalf("details = %v", d)
		}
	})
}

// TestCreate422 covers every 422 code of the create families, each with its
// finding and param.
func TestCreate422(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	price := priceBody
	for _, tc := range createFindingCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantError(t, s.do(t, "POST", "/v1/experiments", tc.body), 422, "validation_error", tc.code, tc.param)
		})
	}

	t.Run("ProductLimitMessageNamesCapAndCount", func(t *testing.T) {
		t.Parallel()
		e := wantError(t, s.do(t, "POST", "/v1/experiments", price(manyProducts(150), `{}`)), 422, "validation_error", "product_limit_exceeded", "shared.price.product_ids")
		if msg := e["message"].(string); !strings.Contains(msg, "100") || !strings.Contains(msg, "150") {
			t.Fatalf("message = %q", msg)
		}
		yes := true
		raised := e2(t, s.env, store.ShopUpdate{RaisedProductLimit: &yes})
		r := raised.do(t, "POST", "/v1/experiments", price(manyProducts(501), `{}`))
		e = wantError(t, r, 422, "validation_error", "product_limit_exceeded", "shared.price.product_ids")
		if msg := e["message"].(string); !strings.Contains(msg, "500") || !strings.Contains(msg, "501") {
			t.Fatalf("message = %q", msg)
		}
		// Under the raised cap the count is fine; the unknown products are what fails.
		r = raised.do(t, "POST", "/v1/experiments", price(manyProducts(150), `{}`))
		wantError(t, r, 422, "validation_error", "product_not_found", "shared.price.product_ids[0]")
	})
	for _, tc := range []struct {
		name, conditions, value string
		want                    []string
	}{
		{"FreeProductMessageNamesGroupAndProduct", fmt.Sprintf(`{"product_ids":[%q]}`, sweater), "500",
			[]string{`"Variant"`, "Merino Crew Sweater (" + sweater + ")", "costs 98.00", "above zero"}},
		// Tops' cheapest item costs 28.00, Accessories' (socks, S/M) 22.00.
		{"FreeCollectionItemMessageNamesCollectionProductAndVariant", fmt.Sprintf(`{"collection_ids":[%q,%q]}`, tops, accessories), "25.00",
			[]string{`"Variant" takes 25.00 off collection Accessories (` + accessories + ")",
				"cheapest variant (S/M) of product Recycled Running Sock (3-pack) (gid://shopify/Product/8107) costs 22.00", "would cost -3.00", "above zero"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := fmt.Sprintf(`{"type":"offer","name":"o","test_groups":`+twoGroups+`}`, fmt.Sprintf(
				`{"offers":[{"key":"k","title":"T","discount":{"type":"fixed_amount","value":%q},"conditions":%s}]}`, tc.value, tc.conditions))
			e := wantError(t, s.do(t, "POST", "/v1/experiments", body), 422, "validation_error", "invalid_request", "test_groups[1].content.offers[0].discount.value")
			msg, _ := e["message"].(string)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
		})
	}
	t.Run("NameOf255Characters", func(t *testing.T) {
		t.Parallel()
		name := strings.Repeat("é", 255)
		body := strings.Replace(price(fmt.Sprintf(`{"product_ids":[%q]}`, tee), fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s}]}`, teeS, usd19)), `"name":"p"`, `"name":"`+name+`"`, 1)
		if x := s.create(t, body); x["name"] != name {
			t.Fatalf("name = %v", x["name"])
		}
	})
	t.Run("MarketsPriced", func(t *testing.T) {
		t.Parallel()
		body := price(fmt.Sprintf(`{"product_ids":[%q],"markets":[{"id":%q,"countries":["DE","FR"]}]}`, tee, euMarket),
			fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s,"country_prices":[{"country":"DE","price":{"amount":"18.00","currency":"EUR"}},{"country":"FR","price":{"amount":"18.50","currency":"EUR"}}]}]}`, teeS, usd19))
		s.create(t, body)
	})
}

func e2(t *testing.T, e *env, upd store.ShopUpdate) *shopEnv {
	t.Helper()
	return e.newShop(upd)
}

func TestGetAndList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.newShop(store.ShopUpdate{})
	var ids []string
	for i := range 5 {
		e.clock.Set(epoch.Add(timeMinutes(i)))
		ids = append(ids, id(s.create(t, priceTest(fmt.Sprintf("t%d", i)))))
	}
	e.clock.Set(epoch.Add(timeMinutes(10)))
	started := s.do(t, "POST", "/v1/experiments/"+ids[1]+"/start", "")
	if started.Status != 200 || started.Body["status"] != "active" {
		t.Fatalf("start = %d %s", started.Status, started.Raw)
	}
	other := e.newShop(store.ShopUpdate{})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		wantError(t, s.do(t, "GET", "/v1/experiments/999999999", ""), 404, "not_found_error", "experiment_not_found", "")
		wantError(t, s.do(t, "GET", "/v1/experiments/abc", ""), 404, "not_found_error", "experiment_not_found", "")
		wantError(t, s.do(t, "GET", "/v1/experiments/0"+ids[0], ""), 404, "not_found_error", "experiment_not_found", "") // one spelling per id
		// Another shop's test reads as not found.
		wantError(t, other.do(t, "GET", "/v1/experiments/"+ids[0], ""), 404, "not_found_error", "experiment_not_found", "")
		wantError(t, other.do(t, "PATCH", "/v1/experiments/"+ids[0], `{"name":"x"}`), 404, "not_found_error", "experiment_not_found", "")
		wantError(t, other.do(t, "POST", "/v1/experiments/"+ids[0]+"/start", ""), 404, "not_found_error", "experiment_not_found", "")
	})
	t.Run("IncludeResultsSummary", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, "GET", "/v1/experiments/"+ids[0]+"?include=results_summary", "")
		if v, ok := r.Body["results_summary"]; !ok || v != nil {
			t.Fatalf("results_summary = %v (present %v)", v, ok)
		}
		if _, ok := s.do(t, "GET", "/v1/experiments/"+ids[0], "").Body["results_summary"]; ok {
			t.Fatal("results_summary present without include")
		}
		wantError(t, s.do(t, "GET", "/v1/experiments/"+ids[0]+"?include=results", ""), 400, "invalid_request_error", "invalid_include", "include")
		l := s.do(t, "GET", "/v1/experiments?include=results_summary&limit=1", "")
		if v, ok := l.Body["data"].([]any)[0].(map[string]any)["results_summary"]; !ok || v != nil {
			t.Fatalf("list results_summary = %v", v)
		}
	})
	t.Run("NewestFirstWithCursors", func(t *testing.T) {
		t.Parallel()
		var seen []string
		path := "/v1/experiments?limit=2"
		for pages := 0; ; pages++ {
			r := s.do(t, "GET", path, "")
			if r.Status != 200 || r.Body["object"] != "list" {
				t.Fatalf("list = %d %s", r.Status, r.Raw)
			}
			for _, x := range r.Body["data"].([]any) {
				seen = append(seen, id(x.(map[string]any)))
			}
			if r.Body["has_more"] != true {
				if r.Body["next_cursor"] != nil {
					t.Fatalf("last page has a next_cursor: %s", r.Raw)
				}
				break
			}
			path = "/v1/experiments?limit=2&cursor=" + r.Body["next_cursor"].(string)
		}
		if diff := cmp.Diff([]string{ids[4], ids[3], ids[2], ids[1], ids[0]}, seen); diff != "" {
			t.Fatalf("order mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("Filters", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"status=active", []string{ids[1]}},
			{"status=draft,active&type=price", []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
			{"type=shipping", []string{}},
			{"scheduled=true", []string{}},
			{"scheduled=false&limit=1", []string{ids[4]}},
			{"created_at[gte]=" + epoch.Add(timeMinutes(3)).Format("2006-01-02T15:04:05Z"), []string{ids[4], ids[3]}},
			{"created_at[lt]=" + epoch.Add(timeMinutes(1)).Format("2006-01-02T15:04:05Z"), []string{ids[0]}},
		} {
			r := s.do(t, "GET", "/v1/experiments?"+tc.query, "")
			got := []string{}
			for _, x := range r.Body["data"].([]any) {
				got = append(got, id(x.(map[string]any)))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("%s mismatch (-want +got):\n%s", tc.query, diff)
			}
		}
	})
	t.Run("Refusals", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			query, typ, code, param string
			status                  int
		}{
			{"limit=0", "invalid_request_error", "invalid_request", "limit", 400},
			{"limit=101", "invalid_request_error", "invalid_request", "limit", 400},
			{"limit=2.5", "invalid_request_error", "invalid_request", "limit", 400},
			{"limit=1&limit=2", "invalid_request_error", "invalid_request", "limit", 400},
			{"cursor=bm90LWEtY3Vyc29y", "invalid_request_error", "invalid_cursor", "cursor", 400},
			{"include=everything", "invalid_request_error", "invalid_include", "include", 400},
			{"colour=red", "invalid_request_error", "unknown_parameter", "colour", 400},
			// A pair url.Query cannot unescape is dropped by it, checks and all.
			{"limit=0%", "invalid_request_error", "invalid_request", "", 400},
			{"limit=1&limit=2%", "invalid_request_error", "invalid_request", "", 400},
			{"foo=%zz", "invalid_request_error", "invalid_request", "", 400},
			{"status=running", "validation_error", "invalid_request", "status", 422},
			{"type=popup", "validation_error", "invalid_request", "type", 422},
			{"scheduled=yes", "validation_error", "invalid_request", "scheduled", 422},
			{"created_at[gte]=yesterday", "validation_error", "invalid_request", "created_at[gte]", 422},
		} {
			wantError(t, s.do(t, "GET", "/v1/experiments?"+tc.query, ""), tc.status, tc.typ, tc.code, tc.param)
		}
	})
}

func timeMinutes(n int) time.Duration { return time.Duration(n) * time.Minute }

// createCase is a create body refused with one 422 code and its param.
type createCase struct{ name, body, code, param string }

// createFindingCases covers every 422 code of the create families, and the
// create codes that are not finding rules.
func createFindingCases() []createCase {
	g := func(content string) string { return fmt.Sprintf(twoGroups, content) }
	price := priceBody
	teeShared := fmt.Sprintf(`{"product_ids":[%q]}`, tee)
	priceOf := func(variant, money string) string {
		return fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s}]}`, variant, money)
	}
	ship := func(content string) string {
		return fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q]}},"test_groups":%s}`, domestic, g(content))
	}
	rate := func(zone, rateID string) string {
		return fmt.Sprintf(`{"rates":[{"zone_id":%q,"rate_id":%q,"name":"Standard","price":{"amount":"4.95","currency":"USD"}}]}`, zone, rateID)
	}
	offer := func(o string) string {
		return fmt.Sprintf(`{"type":"offer","name":"o","test_groups":%s}`, g(`{"offers":[`+o+`]}`))
	}
	template := func(theme, content string) string {
		return fmt.Sprintf(`{"type":"template","name":"t","shared":{"template":{"theme_id":%q}},"test_groups":%s}`, theme, g(content))
	}
	redirect := func(shared, content string) string {
		return fmt.Sprintf(`{"type":"url_redirect","name":"r","shared":{"url_redirect":%s},"test_groups":%s}`, shared, g(content))
	}

	return []createCase{
		// Resource this shop does not have.
		{"ProductNotFound", price(`{"product_ids":["gid://shopify/Product/1"]}`, `{}`), "product_not_found", "shared.price.product_ids[0]"},
		{"CollectionNotFound", offer(`{"key":"k","title":"10% off","discount":{"type":"percentage","value":"10"},"conditions":{"collection_ids":["gid://shopify/Collection/9"]}}`), "collection_not_found", "test_groups[1].content.offers[0].conditions.collection_ids[0]"},
		{"ThemeNotFound", template("gid://shopify/OnlineStoreTheme/9", `{"template":"product.alternate"}`), "theme_not_found", "shared.template.theme_id"},
		{"TemplateNotFound", template(dawn, `{"template":"product.nope"}`), "template_not_found", "test_groups[1].content.template"},
		{"ZoneNotFound", strings.Replace(ship(rate(domestic, standard)), `"zone_ids":["`+domestic, `"zone_ids":["gid://shopify/DeliveryZone/9`, 1), "zone_not_found", "shared.shipping.zone_ids[0]"},
		{"RateNotFound", ship(rate(domestic, "gid://shopify/DeliveryMethodDefinition/9")), "rate_not_found", "test_groups[1].content.rates[0].rate_id"},
		// Group with nothing to test.
		{"TemplateRequired", template(dawn, `{}`), "template_required", "test_groups[1].content.template"},
		{"DestinationRequired", redirect(`{"source_path":"/"}`, `{}`), "destination_required", "test_groups[1].content.destination"},
		{"ChangeRequired", price(teeShared, `{"prices":[]}`), "change_required", "test_groups[1].content.prices"},
		{"RateRequired", ship(`{}`), "rate_required", "test_groups[1].content.rates"},
		// A rate at its own catalog name and price (session audit 2, F7 re-check).
		{"RateUnchanged", ship(fmt.Sprintf(`{"rates":[{"zone_id":%q,"rate_id":%q,"name":"Standard","price":{"amount":"6.95","currency":"USD"}}]}`, domestic, standard)),
			"change_required", "test_groups[1].content.rates"},
		{"OfferRequired", fmt.Sprintf(`{"type":"offer","name":"o","test_groups":%s}`, g(`{}`)), "offer_required", "test_groups[1].content.offers"},
		// Parts of the request disagree.
		{"DuplicateChange", price(teeShared, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s},{"product_variant_id":%q,"price":%s}]}`, teeS, usd19, teeS, usd19)), "duplicate_change", "test_groups[1].content.prices[1].product_variant_id"},
		{"DuplicateGroupName", strings.Replace(price(teeShared, priceOf(teeS, usd19)), `"name":"Variant"`, `"name":"control"`, 1), "duplicate_group_name", "test_groups[1].name"},
		{"DuplicateRuleKey", offer(`{"key":"k","title":"A","discount":{"type":"free_shipping"}},{"key":"k","title":"B","discount":{"type":"free_shipping"}}`), "duplicate_rule_key", "test_groups[1].content.offers[1].key"},
		{"ZoneNotDeclared", ship(rate(intl, "")), "zone_not_declared", "test_groups[1].content.rates[0].zone_id"},
		{"ControlGroupInvalid", strings.Replace(price(teeShared, priceOf(teeS, usd19)), `"name":"Control","split":50}`, `"name":"Control","split":50,"content":`+priceOf(teeM, usd19)+`}`, 1), "control_group_invalid", "test_groups[0].content"},
		{"SplitSumInvalid", strings.Replace(price(teeShared, priceOf(teeS, usd19)), `"split":50}`, `"split":40}`, 1), "split_sum_invalid", "test_groups"},
		// Values the API will not write.
		{"CurrencyMismatch", price(teeShared, priceOf(teeS, `{"amount":"19.00","currency":"EUR"}`)), "currency_mismatch", "test_groups[1].content.prices[0].price.currency"},
		{"ControlOffersRates", strings.Replace(ship(rate(domestic, standard)), `"name":"Control","split":50}`, `"name":"Control","split":50,"content":`+rate(domestic, standard)+`}`, 1), "control_offers_rates", "test_groups[0].content.rates"},
		{"MatchTypeUnsupported", redirect(`{"source_path":"/collections","match_type":"regex"}`, `{"destination":"/pages/sale"}`), "match_type_unsupported", "shared.url_redirect.match_type"},
		{"MaxDiscountAmountNotAllowed", offer(`{"key":"k","title":"T","discount":{"type":"percentage","value":"20","max_discount_amount":{"amount":"10.00","currency":"USD"}}}`), "max_discount_amount_not_allowed", "test_groups[1].content.offers[0].discount.max_discount_amount"},
		{"DiscountCombinationInvalid", offer(`{"key":"k","title":"T","discount":{"type":"percentage","value":"20"},"combines_with":["everything"]}`), "discount_combination_invalid", "test_groups[1].content.offers[0].combines_with[0]"},
		{"ConditionRangeInvalid", offer(`{"key":"k","title":"T","discount":{"type":"percentage","value":"20"},"conditions":{"min_subtotal":{"amount":"100.00","currency":"USD"},"max_subtotal":{"amount":"50.00","currency":"USD"}}}`), "condition_range_invalid", "test_groups[1].content.offers[0].conditions.max_subtotal"},
		{"ProductLimitExceeded", price(manyProducts(101), `{}`), "product_limit_exceeded", "shared.price.product_ids"},
		{"MarketPricingIncomplete", price(fmt.Sprintf(`{"product_ids":[%q],"markets":[{"id":%q,"countries":["DE"]}]}`, tee, euMarket), priceOf(teeS, usd19)), "market_pricing_incomplete", "test_groups[1].content.prices[0].country_prices"},
		{"CountryNotInMarket", price(teeShared, fmt.Sprintf(`{"prices":[{"product_variant_id":%q,"price":%s,"country_prices":[{"country":"DE","price":{"amount":"18.00","currency":"EUR"}}]}]}`, teeS, usd19)), "market_pricing_incomplete", "test_groups[1].content.prices[0].country_prices[0].country"},
		// Refused since the second v1 audit: a destination a browser reads as
		// another host (V7), a group at the catalog price (V5), a status a
		// create will not honour (V6), an audience over 8 KB (V1).
		{"DestinationOtherHost", redirect(`{"source_path":"/collections"}`, `{"destination":"//evil.example/x"}`), "invalid_request", "test_groups[1].content.destination"},
		{"DestinationBackslash", redirect(`{"source_path":"/collections"}`, `{"destination":"/\\evil.example"}`), "invalid_request", "test_groups[1].content.destination"},
		// No price becomes zero (session audit 2, F6).
		{"FixedAmountOverThePrice", offer(fmt.Sprintf(`{"key":"k","title":"T","discount":{"type":"fixed_amount","value":"500"},"conditions":{"product_ids":[%q]}}`, sweater)),
			"invalid_request", "test_groups[1].content.offers[0].discount.value"},
		{"FixedAmountOverACollectionItem", offer(fmt.Sprintf(`{"key":"k","title":"T","discount":{"type":"fixed_amount","value":"40.00"},"conditions":{"collection_ids":[%q]}}`, accessories)),
			"invalid_request", "test_groups[1].content.offers[0].discount.value"},
		{"HundredPercentOff", offer(fmt.Sprintf(`{"key":"k","title":"T","discount":{"type":"percentage","value":"100"},"conditions":{"product_ids":[%q]}}`, sweater)),
			"invalid_request", "test_groups[1].content.offers[0].discount.value"},
		{"PriceZero", price(teeShared, priceOf(teeS, `{"amount":"0.00","currency":"USD"}`)), "invalid_request", "test_groups[1].content.prices[0].price.amount"},
		{"PriceUnchanged", price(teeShared, priceOf(teeS, `{"amount":"28.00","currency":"USD"}`)), "change_required", "test_groups[1].content.prices"},
		// Characters, not bytes, as every type counts them (session audit 2, S2-11).
		{"NameOf256Characters", strings.Replace(price(teeShared, priceOf(teeS, usd19)), `"name":"p"`, `"name":"`+strings.Repeat("é", 256)+`"`, 1), "invalid_request", "name"},
		{"StatusOnCreate", strings.Replace(price(teeShared, priceOf(teeS, usd19)), `{"type"`, `{"status":"active","type"`, 1), "invalid_request", "status"},
		{"AudienceOver8KB", strings.Replace(price(teeShared, priceOf(teeS, usd19)), `{"type"`, `{"audience":{`+bigAudience+`},"type"`, 1), "invalid_request", "audience"},
		// Codes that are not finding rules.
		{"InvalidType", `{"type":"popup","name":"x"}`, "invalid_type", "type"},
		{"SchemaRefusesField", `{"type":"theme","name":"x","colour":"red"}`, "invalid_request", "colour"},
		{"SchemaRefusesKind", `{"type":"theme","name":"x","traffic_allocation":"all"}`, "invalid_request", "traffic_allocation"},
		{"AllocationRange", fmt.Sprintf(`{"type":"theme","name":"x","traffic_allocation":0,"test_groups":%s}`, g(fmt.Sprintf(`{"theme_id":%q}`, holiday))), "invalid_request", "traffic_allocation"},
	}
}

// bigAudience is audience members of 10 KB in all, each string within
// the 2,048-character limit.
var bigAudience = func() string {
	var m []string
	for i := range 5 {
		m = append(m, fmt.Sprintf(`"note%d":%q`, i, strings.Repeat("x", 2000)))
	}
	return strings.Join(m, ",")
}()

// priceBody is a price test of shared with content in its variant group.
func priceBody(shared, content string) string {
	return fmt.Sprintf(`{"type":"price","name":"p","shared":{"price":%s},"test_groups":%s}`, shared, fmt.Sprintf(twoGroups, content))
}

// manyProducts is a price shared block of n products the catalog lacks.
func manyProducts(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%q", fmt.Sprintf("gid://shopify/Product/%d", 90000+i))
	}
	return `{"product_ids":[` + strings.Join(ids, ",") + `]}`
}
