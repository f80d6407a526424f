package platform

import "strings"

// The fake's script tags (script.go). Tags PutLiftResources adds have no
// src; EnableScript's have the one it sent.

// ScriptTags returns the src of each script tag on the shop ("" for a tag
// of PutLiftResources).
func (f *Fake) ScriptTags(domain string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.shop(domain).install
	out := []string{}
	for _, id := range in.ScriptTags {
		out = append(out, in.scriptSrc[id])
	}
	return out
}

// scriptOperation answers a script tag operation; ok false when op is not one.
func (f *Fake) scriptOperation(in *fakeInstall, op string, v map[string]any) (any, bool) {
	switch op {
	case OpScriptTags:
		src, _ := v["src"].(string)
		nodes := []any{}
		for _, id := range in.ScriptTags {
			if src == "" || in.scriptSrc[id] == src {
				nodes = append(nodes, map[string]string{"id": id, "src": in.scriptSrc[id]})
			}
		}
		return map[string]any{"scriptTags": map[string]any{"nodes": nodes}}, true
	case OpScriptTagCreate:
		input, _ := v["input"].(map[string]any)
		src, _ := input["src"].(string)
		if !strings.HasPrefix(src, "https://") && !strings.HasPrefix(src, "http://") {
			return map[string]any{"scriptTagCreate": map[string]any{"scriptTag": nil,
				"userErrors": refused("src", "src must be an http(s) URL")}}, true
		}
		id := f.id("ScriptTag")
		in.ScriptTags = append(in.ScriptTags, id)
		in.scriptSrc[id] = src
		return map[string]any{"scriptTagCreate": map[string]any{"scriptTag": map[string]string{"id": id}, "userErrors": []any{}}}, true
	}
	return nil, false
}
