package platform

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestQueryCostFollowsThePlatformsRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		vars      map[string]any
		want      int
	}{
		// The platform's own worked example (shopify.dev, GraphQL Admin API rate limits).
		{"documented example", `{ products(first: 10) { edges { node { title variants(first: 5) { edges { node { price } } } } } } }`, nil, 82},
		{"one connection", `query { products(first: 10) { nodes { title } } }`, nil, 12},
		{"scalars are free", `query Shop { shop { name currencyCode ianaTimezone } }`, nil, 1},
		{"page info once a connection", `query P($after: String) { products(first: 50, after: $after) { pageInfo { hasNextPage endCursor } nodes { id } } }`, nil, 2 + 1 + 50},
		{"page size from a variable", `query P($n: Int!) { products(first: $n) { nodes { id } } }`, map[string]any{"n": float64(20)}, 22},
		{"last counts like first", `{ orders(last: 5) { nodes { id customer { id } } } }`, nil, 2 + 5*2},
		{"aliases and arguments", `{ v: productVariants(first: 3, query: "tag:x") { nodes { id a: metafield(namespace: "$app:lift", key: "k") { value } } } }`, nil, 2 + 3*2},
		{"strings hide braces", `{ shop { name } x: metafield(key: "}{ first: 900") { value } }`, nil, 2},
		{"block strings too", `{ shop { description(format: """ { first: 500 } """) } }`, nil, 1},
		{"comments and commas", "{ products(first: 4,) { # nodes { a(first: 99) { b } }\n nodes { id, handle } } }", nil, 6},
		{"inline fragments", `{ node(id: "1") { ... on Product { variants(first: 2) { nodes { id } } } } }`, nil, 1 + 2 + 2},
		{"mutations cost 10", `mutation M($id: ID!) { scriptTagDelete(id: $id) { deletedScriptTagId userErrors { message } } }`, nil, 10},
		// What the client's catalog and cleanup queries cost (their comments say why).
		{"products page", productsQuery, nil, 953},
		{"collections page", collectionsQuery, nil, 819},
		{"rest of a collection", collectionProductsQuery, nil, 254},
		{"themes", themesQuery, nil, 22},
		{"delivery profiles", deliveryProfilesQuery, nil, 153},
		{"delivery zones", deliveryZonesQuery, nil, 941},
		{"a launch's zone check", zoneCarriersQuery, nil, 385},
		{"markets", marketsQuery, nil, 768},
		{"a theme's templates", themeTemplatesQuery, nil, 254},
		{"Lift's resources", liftResourcesQuery, nil, 722},
		{"offer discounts", offerDiscountsQuery, nil, 203},
		{"nested connections multiply", `{ collections(first: 250) { nodes { id title products(first: 250) { nodes { id } } } } }`, nil, 2 + 250*(1+2+250)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := queryCost(tc.doc, tc.vars)
			if err != nil || got != tc.want {
				t.Fatalf("cost %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}

func TestQueryCostRefusesWhatItCannotPrice(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{ products(first: 10) { nodes { id }`,
		`query { products(first: $n) { nodes { id } } }`,
		`{ products(first: ten) { nodes { id } } }`,
		`{ products(first) { nodes { id } } }`,
		`query`,
		`query { products(first: 10) { nodes { ...ProductFields } } } fragment ProductFields on Product { id }`,
	} {
		if n, err := queryCost(doc, nil); err == nil {
			t.Errorf("%q priced at %d, want an error", doc, n)
		}
	}
}

func TestFakeRefusesAQueryOverTheLimit(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(NewFake())
	defer srv.Close()
	for _, tc := range []struct {
		query, code string
	}{
		{`query Products { products(first: 50) { nodes { id variants(first: 100) { nodes { id price } } } } }`, "MAX_COST_EXCEEDED"},
		{productsQuery, ""},
		{collectionsQuery, ""},
		{liftResourcesQuery, ""},
	} {
		body, _ := json.Marshal(map[string]any{"query": tc.query, "operationName": "Products"})
		resp, err := http.Post(srv.URL+"/admin/shops/cost.example/api/2025-01/graphql.json", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out gqlResponse // what the client reads
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.code != "" && (len(out.Errors) != 1 || out.Errors[0].Extensions.Code != tc.code ||
			!strings.Contains(out.Errors[0].Message, "exceeds the single query max cost limit (1000)")):
			t.Errorf("%.40q: errors %+v, want %s", tc.query, out.Errors, tc.code)
		case tc.code == "" && (len(out.Errors) != 0 || out.Extensions.Cost.RequestedQueryCost < 100 || out.Extensions.Cost.RequestedQueryCost > maxQueryCost):
			t.Errorf("%.40q: errors %+v, requested cost %v", tc.query, out.Errors, out.Extensions.Cost.RequestedQueryCost)
		}
	}
}
