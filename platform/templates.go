package platform

import (
	"context"
	"path"
	"slices"
	"strings"
)

// themeTemplatesQuery reads a page of a theme's template files: 1 + 2 + 1
// + 250 = 254 points. A template test names a template by what the
// storefront's ?view= picks ("product.alternate"), and validation refuses
// one its theme does not have (template_not_found), so a theme read without
// its templates made every template test of a real shop unstartable.
const themeTemplatesQuery = `query ThemeTemplates($id: ID!, $after: String) {
  theme(id: $id) {
    files(filenames: ["templates/*"], first: 250, after: $after) {
      pageInfo { hasNextPage endCursor }
      nodes { filename }
    }
  }
}`

// OpThemeTemplates names the templates read, for Fail.
const OpThemeTemplates = "ThemeTemplates"

// themeTemplates is every template of a theme, sorted: the file's path
// under templates/ without its extension ("product.alternate",
// "customers/account").
func (c *Client) themeTemplates(ctx context.Context, domain, token, themeID string) ([]string, error) {
	out := []string{}
	var after any
	for {
		var page struct {
			Theme *struct {
				Files struct {
					PageInfo pageInfo `json:"pageInfo"`
					Nodes    []struct {
						Filename string `json:"filename"`
					} `json:"nodes"`
				} `json:"files"`
			} `json:"theme"`
		}
		if err := c.graphQL(ctx, domain, token, OpThemeTemplates, themeTemplatesQuery,
			map[string]any{"id": themeID, "after": after}, &page); err != nil {
			return nil, err
		}
		if page.Theme == nil { // deleted while we read
			break
		}
		for _, f := range page.Theme.Files.Nodes {
			if name, ok := templateName(f.Filename); ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		next, more := page.Theme.Files.PageInfo.next()
		if !more {
			break
		}
		after = next
	}
	slices.Sort(out)
	return out, nil
}

// templateName is the template a theme file defines, if it is one: a
// .json or .liquid file under templates/.
func templateName(filename string) (string, bool) {
	rest, ok := strings.CutPrefix(filename, "templates/")
	ext := path.Ext(rest)
	if !ok || (ext != ".json" && ext != ".liquid") || len(rest) == len(ext) {
		return "", false
	}
	return strings.TrimSuffix(rest, ext), true
}
