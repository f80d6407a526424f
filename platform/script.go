package platform

import (
	"context"
)

// The storefront script (session document part 4.5, GET
// /api/enable-script): a script tag whose src is Lift's tracking script,
// shown on the online store. Enabling finds the tag with that src first,
// so enabling twice leaves one tag; uninstall removes it with the other
// script tags (cleanup.go).

// Operation names of enabling the script, for Fake.Fail.
const (
	OpScriptTags      = "ScriptTags"
	OpScriptTagCreate = "ScriptTagCreate"
)

// EnableScript implements experiment.InstallPlatform: it returns the id of
// the script tag loading src, creating it when the shop has none.
func (c *Client) EnableScript(ctx context.Context, domain, token, src string) (string, error) {
	var found struct {
		ScriptTags struct {
			Nodes []struct {
				ID  string `json:"id"`
				Src string `json:"src"`
			} `json:"nodes"`
		} `json:"scriptTags"`
	}
	if err := c.graphQL(ctx, domain, token, OpScriptTags,
		`query ScriptTags($src: URL) { scriptTags(first: 250, src: $src) { nodes { id src } } }`,
		map[string]any{"src": src}, &found); err != nil {
		return "", renamed(err, "read script tags")
	}
	for _, n := range found.ScriptTags.Nodes {
		if n.Src == src {
			return n.ID, nil
		}
	}
	var out struct {
		Create struct {
			ScriptTag *struct {
				ID string `json:"id"`
			} `json:"scriptTag"`
			UserErrors userErrors `json:"userErrors"`
		} `json:"scriptTagCreate"`
	}
	if err := c.graphQL(ctx, domain, token, OpScriptTagCreate,
		`mutation ScriptTagCreate($input: ScriptTagInput!) {
  scriptTagCreate(input: $input) { scriptTag { id } userErrors { field message } } }`,
		map[string]any{"input": map[string]any{"src": src, "displayScope": "ONLINE_STORE", "cache": false}}, &out); err != nil {
		return "", renamed(err, "create script tag")
	}
	if err := out.Create.UserErrors.err("create script tag"); err != nil {
		return "", err
	}
	if out.Create.ScriptTag == nil {
		return "", &Error{Op: "create script tag", Message: "the platform returned no script tag"}
	}
	return out.Create.ScriptTag.ID, nil
}
