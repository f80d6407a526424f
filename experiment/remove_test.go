package experiment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/experimenttest"
)

const usd = `{"amount":"19.00","currency":"USD"}`

// offerOf is an offer group's content: 10% off products, with conditions
// Lift keeps as they are when products leave.
func offerOf(key string, products ...string) string {
	ids, _ := json.Marshal(products)
	return fmt.Sprintf(`{"offers":[{"key":%q,"title":"10%% off","discount":{"type":"percentage","value":"10"},
		"conditions":{"min_quantity":1,"product_ids":%s},"combines_with":["shipping"]}]}`, key, ids)
}

// offerTest is a price v2 test as the session API creates it, with two
// variant groups so every group's offers are seen to change.
func offerTest(products ...string) string {
	return fmt.Sprintf(`{"type":"offer","name":"Price v2","test_groups":[{"index":0,"name":"Control","split":34},
		{"index":1,"name":"A","split":33,"content":%s},{"index":2,"name":"B","split":33,"content":%s}]}`,
		offerOf("a", products...), offerOf("b", products...))
}

// combinedTest bundles a price change and an offer on the same products.
func combinedTest() string {
	return fmt.Sprintf(`{"type":"combined","name":"Both","shared":{"price":{"product_ids":[%q,%q]},"offer":{}},"test_groups":[
		{"index":0,"name":"Control","split":50},
		{"index":1,"name":"V","split":50,"content":{"price":{"prices":[{"product_variant_id":%q,"price":%s},{"product_variant_id":%q,"price":%s}]},"offer":%s}}]}`,
		experimenttest.Tee, experimenttest.Sweater, experimenttest.TeeS, usd, experimenttest.SweaterS, usd, offerOf("v", experimenttest.Tee, experimenttest.Sweater))
}

// contentTest is a content (visual_editor) test naming products, as the
// session API creates it; none leaves shared out.
func contentTest(products ...string) string {
	shared := ""
	if len(products) > 0 {
		ids, _ := json.Marshal(products)
		shared = fmt.Sprintf(`"shared":{"visual_editor":{"product_ids":%s}},`, ids)
	}
	return `{"type":"visual_editor","name":"Content",` + shared + `"test_groups":[{"index":0,"name":"Control","split":50},
		{"index":1,"name":"V","split":50,"content":{"custom_css":".hero{display:none}"}}]}`
}

// visualProducts is a test's shared.visual_editor.product_ids.
func visualProducts(t *testing.T, x *experiment.Test) []string {
	t.Helper()
	var s experiment.VisualEditorShared
	if err := json.Unmarshal(x.Shared["visual_editor"], &s); err != nil {
		t.Fatalf("shared.visual_editor %s: %v", x.Shared["visual_editor"], err)
	}
	return s.ProductIDs
}

// offerProducts lists each group's offers' product ids (nil for the
// control), reading the offer part of a combined test's content.
func offerProducts(t *testing.T, x *experiment.Test) [][]string {
	t.Helper()
	var out [][]string
	for _, g := range x.Groups {
		content := g.Content
		if x.Type == experiment.TypeCombined {
			var parts map[string]json.RawMessage
			if err := json.Unmarshal(g.Content, &parts); err != nil {
				t.Fatal(err)
			}
			content = parts["offer"]
		}
		var oc experiment.OfferContent
		if len(content) > 0 {
			if err := json.Unmarshal(content, &oc); err != nil {
				t.Fatal(err)
			}
		}
		var ids []string
		for _, o := range oc.Offers {
			if o.Conditions == nil || o.Conditions.MinQuantity == nil || len(o.CombinesWith) != 1 {
				t.Fatalf("group %d: the offer lost what removing products does not touch: %s", g.Index, g.Content)
			}
			ids = append(ids, o.Conditions.ProductIDs...)
		}
		out = append(out, ids)
	}
	return out
}

// TestRemoveProductsByType: products leave every test whose full test lists
// some (price v2's offers, a content test's products and a combined test's
// offer and visual_editor parts as well as a price part) while it runs; a
// content test may lose its last product, since its edit never needed one.
func TestRemoveProductsByType(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		body   string
		remove []string
		// want reads what must hold afterwards.
		want func(t *testing.T, x *experiment.Test)
	}{
		{"OfferTest", offerTest(experimenttest.Tee, experimenttest.Sweater), []string{experimenttest.Sweater}, func(t *testing.T, x *experiment.Test) {
			if diff := cmp.Diff([][]string{nil, {experimenttest.Tee}, {experimenttest.Tee}}, offerProducts(t, x)); diff != "" {
				t.Fatalf("offer products mismatch (-want +got):\n%s", diff)
			}
		}},
		{"Combined", combinedTest(), []string{experimenttest.Sweater}, func(t *testing.T, x *experiment.Test) {
			var p experiment.PriceShared
			if err := json.Unmarshal(x.Shared["price"], &p); err != nil {
				t.Fatal(err)
			}
			var parts struct {
				Price experiment.PriceContent `json:"price"`
			}
			if err := json.Unmarshal(x.Groups[1].Content, &parts); err != nil {
				t.Fatal(err)
			}
			if len(p.ProductIDs) != 1 || p.ProductIDs[0] != experimenttest.Tee || len(parts.Price.Prices) != 1 || parts.Price.Prices[0].ProductVariantID != experimenttest.TeeS {
				t.Fatalf("price part = %s / %s", x.Shared["price"], x.Groups[1].Content)
			}
			if diff := cmp.Diff([][]string{nil, {experimenttest.Tee}}, offerProducts(t, x)); diff != "" {
				t.Fatalf("offer products mismatch (-want +got):\n%s", diff)
			}
		}},
		{"Content", contentTest(experimenttest.Tee, experimenttest.Sweater), []string{experimenttest.Sweater}, func(t *testing.T, x *experiment.Test) {
			if diff := cmp.Diff([]string{experimenttest.Tee}, visualProducts(t, x)); diff != "" {
				t.Fatalf("content products mismatch (-want +got):\n%s", diff)
			}
		}},
		{"ContentEveryProduct", contentTest(experimenttest.Tee, experimenttest.Sweater), []string{experimenttest.Tee, experimenttest.Sweater},
			func(t *testing.T, x *experiment.Test) {
				if got := visualProducts(t, x); len(got) != 0 {
					t.Fatalf("content products = %v, want none", got)
				}
				var g struct {
					CustomCSS string `json:"custom_css"`
				}
				if err := json.Unmarshal(x.Groups[1].Content, &g); err != nil || g.CustomCSS == "" {
					t.Fatalf("the edit was lost: %s", x.Groups[1].Content)
				}
			}},
		{"CombinedContent", fmt.Sprintf(`{"type":"combined","name":"Both","shared":{"url_redirect":{"source_path":"/"},"visual_editor":{"product_ids":[%q,%q]}},
			"test_groups":[{"index":0,"name":"Control","split":50},
			{"index":1,"name":"V","split":50,"content":{"url_redirect":{"destination":"/b"},"visual_editor":{"custom_css":"h1{}"}}}]}`,
			experimenttest.Tee, experimenttest.Sweater), []string{experimenttest.Tee}, func(t *testing.T, x *experiment.Test) {
			if diff := cmp.Diff([]string{experimenttest.Sweater}, visualProducts(t, x)); diff != "" {
				t.Fatalf("content products mismatch (-want +got):\n%s", diff)
			}
			if len(x.Shared["url_redirect"]) == 0 {
				t.Fatal("the redirect part was lost")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := experimenttest.Setup(t, experimenttest.FakeBackend)
			x := b.Create(t, c.body)
			b.Act(t, x.ID, experiment.ActionStart)
			later := experimenttest.Epoch.Add(time.Hour)
			b.Clock.Set(later)
			if _, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, x.ID, c.remove, nil); err != nil {
				t.Fatal(err)
			}
			got := b.Get(t, x.ID)
			c.want(t, got)
			if got.Status != experiment.StatusActive || !got.UpdatedAt.Equal(later) {
				t.Fatalf("after removing: status %s, updated %s", got.Status, got.UpdatedAt)
			}
			// The rest keep running as a valid test.
			if _, err := experiment.Validate(context.Background(), b.Shop, got, b.Repo.Catalog(), experiment.ValidateFull, later); err != nil {
				t.Fatalf("the remaining test is invalid: %v", err)
			}
		})
	}
}

// TestRemoveProductsUnchanged: ids a test does not have change nothing, and
// refusals leave the test as it was.
func TestRemoveProductsUnchanged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		body   string
		remove []string
		// types is set when the refusal is a NoProductsError; code when it
		// is another refusal; neither when the call succeeds.
		types []experiment.Type
		code  string
	}{
		{"OfferUnknownProduct", offerTest(experimenttest.Tee), []string{experimenttest.Sweater}, nil, ""},
		{"OfferScopedByCollection", experimenttest.TypeBodies()[experiment.TypeOffer], []string{experimenttest.Tee}, nil, ""},
		{"ErrOfferEveryProduct", offerTest(experimenttest.Tee, experimenttest.Sweater), []string{experimenttest.Tee, experimenttest.Sweater}, nil, "invalid_request"},
		{"ErrCombinedEveryProduct", combinedTest(), []string{experimenttest.Tee, experimenttest.Sweater}, nil, "invalid_request"},
		{"ErrRedirect", experimenttest.TypeBodies()[experiment.TypeURLRedirect], []string{experimenttest.Tee}, []experiment.Type{experiment.TypeURLRedirect}, "invalid_request"},
		{"ErrShipping", experimenttest.TypeBodies()[experiment.TypeShipping], []string{experimenttest.Tee}, []experiment.Type{experiment.TypeShipping}, "invalid_request"},
		{"ContentWithoutProducts", experimenttest.TypeBodies()[experiment.TypeVisualEditor], []string{experimenttest.Tee}, nil, ""},
		{"ContentUnknownProduct", contentTest(experimenttest.Tee), []string{experimenttest.Sweater}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := experimenttest.Setup(t, experimenttest.FakeBackend)
			x := b.Create(t, c.body)
			before := b.Get(t, x.ID)
			b.Clock.Set(experimenttest.Epoch.Add(time.Hour))
			_, err := b.Service.RemoveProducts(b.Ctx(), b.Shop, x.ID, c.remove, nil)
			if c.code == "" && err != nil {
				t.Fatal(err)
			}
			if c.code != "" {
				if e := experimenttest.WantCode(t, err, experiment.KindValidation, c.code); e.Param != "productIds" {
					t.Fatalf("param = %q", e.Param)
				}
				np, ok := errors.AsType[*experiment.NoProductsError](err)
				if ok != (c.types != nil) || ok && cmp.Diff(c.types, np.Types) != "" {
					t.Fatalf("NoProductsError = %v, want types %v", np, c.types)
				}
			}
			if diff := cmp.Diff(before, b.Get(t, x.ID)); diff != "" {
				t.Fatalf("the test changed (-before +after):\n%s", diff)
			}
		})
	}
}
