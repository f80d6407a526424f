package experiment

import (
	"encoding/json"
	"testing"
)

func TestContested(t *testing.T) {
	exact := func(p string) *URLRedirectShared { return &URLRedirectShared{SourcePath: p} }
	prefix := func(p string) *URLRedirectShared { return &URLRedirectShared{SourcePath: p, MatchType: "prefix"} }
	for _, c := range []struct {
		name string
		a, b storefrontParts
		want string
	}{
		{"one product of two", storefrontParts{products: []string{"p1", "p2"}}, storefrontParts{products: []string{"p3", "p2"}}, "the price of product p2"},
		{"other products", storefrontParts{products: []string{"p1"}}, storefrontParts{products: []string{"p2"}}, ""},
		{"a zone", storefrontParts{zones: []string{"z1"}}, storefrontParts{zones: []string{"z1"}}, "the rates of shipping zone z1"},
		{"two themes", storefrontParts{wholeTheme: true}, storefrontParts{wholeTheme: true}, "the theme their visitors see"},
		{"theme and template", storefrontParts{templates: []string{"t1 product"}}, storefrontParts{wholeTheme: true},
			"the theme their visitors see (a template test shows its templates only on its own theme)"},
		{"one page type", storefrontParts{templates: []string{"t1 product"}}, storefrontParts{templates: []string{"t1 collection", "t1 product"}},
			"the product template of theme t1"},
		{"page types of two themes", storefrontParts{templates: []string{"t1 product"}}, storefrontParts{templates: []string{"t2 product"}}, ""},
		{"a product and a zone", storefrontParts{products: []string{"p1"}}, storefrontParts{zones: []string{"p1"}}, ""},
		{"same source", storefrontParts{redirect: exact("/a")}, storefrontParts{redirect: exact("/a")}, "where visitors of /a go"},
		{"prefix covers exact", storefrontParts{redirect: exact("/a/b")}, storefrontParts{redirect: prefix("/a")}, "where visitors of /a/b go"},
		{"nested prefixes", storefrontParts{redirect: prefix("/a")}, storefrontParts{redirect: prefix("/a/b")}, "where visitors of /a/b go"},
		{"exact shorter than a prefix", storefrontParts{redirect: exact("/a")}, storefrontParts{redirect: prefix("/a/b")}, ""},
		{"a loop", storefrontParts{redirect: exact("/a"), destinations: []string{"/b"}}, storefrontParts{redirect: exact("/b"), destinations: []string{"/a"}},
			"where visitors of /b go (one test sends visitors there, the other sends them on)"},
		{"a chain the other way", storefrontParts{redirect: exact("/b"), destinations: []string{"/c"}}, storefrontParts{redirect: exact("/a"), destinations: []string{"/b"}},
			"where visitors of /b go (one test sends visitors there, the other sends them on)"},
		{"into a prefix", storefrontParts{redirect: exact("/x"), destinations: []string{"/sale/1"}}, storefrontParts{redirect: prefix("/sale")},
			"where visitors of /sale/1 go (one test sends visitors there, the other sends them on)"},
		{"same destination", storefrontParts{redirect: exact("/a"), destinations: []string{"/c"}}, storefrontParts{redirect: exact("/b"), destinations: []string{"/c"}}, ""},
		{"one product's images", storefrontParts{images: []string{"p1"}}, storefrontParts{images: []string{"p2", "p1"}}, "the images of product p1"},
		{"images and a price of one product", storefrontParts{images: []string{"p1"}}, storefrontParts{products: []string{"p1"}}, ""},
		{"nothing held", storefrontParts{}, storefrontParts{products: []string{"p1"}, wholeTheme: true}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := contested(c.a, c.b); got != c.want {
				t.Fatalf("contested = %q, want %q", got, c.want)
			}
			if got := contested(c.b, c.a); got == "" != (c.want == "") {
				t.Fatalf("contested(b, a) = %q, want it to agree with (a, b) %q", got, c.want)
			}
		})
	}
}

func TestAudiencesMeet(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`null`, `{"countries":["US"]}`, true},
		{``, ``, true},
		{`{"countries":["US","CA"]}`, `{"countries":["CA"]}`, true},
		{`{"countries":["US"]}`, `{"countries":["DE"]}`, false},
		{`{"countries":[]}`, `{"countries":["DE"]}`, true},
		{`{"devices":["mobile"]}`, `{"devices":["desktop","tablet"]}`, false},
		{`{"devices":["mobile"],"countries":["US"]}`, `{"countries":["US"]}`, true},
		{`{"visitor_type":"new"}`, `{"visitor_type":"returning"}`, false},
		{`{"visitor_type":"new"}`, `{"visitor_type":"new","devices":["mobile"]}`, true},
		{`{"visitor_type":"new"}`, `{}`, true},
	} {
		if got := audiencesMeet(json.RawMessage(c.a), json.RawMessage(c.b)); got != c.want {
			t.Errorf("audiencesMeet(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// FuzzContested feeds stored tests of any shape to the launch rule: the
// tests it reads were validated when saved, but a row from an older
// version, or one the admin panel wrote, must neither panic the start nor
// make it contest a test with itself.
func FuzzContested(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), []byte(fuzzPrice))
	}
	for _, body := range []string{
		`{"type":"url_redirect","shared":{"url_redirect":{"source_path":"/a","match_type":"prefix"}},"test_groups":[{"index":1,"content":{"destination":"/a/b?x#y"}}]}`,
		`{"type":"template","shared":{"template":{"theme_id":"t"}},"test_groups":[{"index":1,"content":{"template":"product"}}],"audience":{"countries":"US"}}`,
		`{"type":"combined","shared":{"price":{"product_ids":["p"]},"theme":{},"url_redirect":{"source_path":""}},"test_groups":[{"index":1,"content":{"theme":{"theme_id":1}}}]}`,
	} {
		f.Add([]byte(body), []byte(fuzzPrice))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var x, y Test
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return
		}
		x.ID, y.ID = 1, 2
		contested(partsOf(&x), partsOf(&y))
		audiencesMeet(x.Audience, y.Audience)
		if o, _ := contestedBy(&x, []*Test{&x}); o != nil {
			t.Fatalf("test %d contests itself", o.ID)
		}
	})
}
