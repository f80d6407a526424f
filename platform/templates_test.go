package platform

import "testing"

// TestTemplateName: a theme file is a template when it is a .json or
// .liquid file under templates/; its name is the path below without the
// extension, as ?view= and template tests name it.
func TestTemplateName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{"templates/product.json", "product"},
		{"templates/product.alternate.json", "product.alternate"},
		{"templates/collection.liquid", "collection"},
		{"templates/customers/account.json", "customers/account"},
		{"templates/.json", ""},
		{"templates/gift_card.liquid.bak", ""},
		{"sections/header.liquid", ""},
		{"snippets/templates/product.json", ""},
	} {
		got, ok := templateName(tc.file)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("templateName(%q) = %q, %v; want %q", tc.file, got, ok, tc.want)
		}
	}
}
