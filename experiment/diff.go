package experiment

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
)

var (
	splitPath        = regexp.MustCompile(`^test_groups\[\d+\]\.split$`)
	groupPath        = regexp.MustCompile(`^test_groups\[\d+\]$`)
	groupNameOrSplit = regexp.MustCompile(`^test_groups\[\d+\]\.(name|split)$`)
)

// change is one differing JSON path. group is the index of the test group it
// lies in, or -1.
type change struct {
	path  string
	group int
	rest  string // the path inside the group ("" for the whole group)
}

// diffTests lists what differs between two versions of a test's writable
// fields. Groups are matched by index; their paths use the position in next
// (or in cur for a removed group).
func diffTests(cur, next *Test) []change {
	a, b := normalized(cur), normalized(next)
	ga, _ := a["test_groups"].([]any)
	gb, _ := b["test_groups"].([]any)
	delete(a, "test_groups")
	delete(b, "test_groups")
	var out []change
	for _, p := range diffValue(a, b, "") {
		out = append(out, change{path: p, group: -1})
	}
	byIndex := func(gs []any) map[string]int {
		m := map[string]int{}
		for i, g := range gs {
			if gm, ok := g.(map[string]any); ok {
				m[idString(gm["index"])] = i
			}
		}
		return m
	}
	ia, ib := byIndex(ga), byIndex(gb)
	for pos, g := range gb {
		gm := g.(map[string]any)
		key := idString(gm["index"])
		idx := groupIdx(gm)
		prefix := fmt.Sprintf("test_groups[%d]", pos)
		at, ok := ia[key]
		if !ok {
			out = append(out, change{path: prefix, group: idx})
			continue
		}
		for _, p := range diffValue(ga[at], g, "") {
			out = append(out, change{path: joinParam(prefix, p), group: idx, rest: "." + p})
		}
	}
	for pos, g := range ga {
		gm := g.(map[string]any)
		if _, ok := ib[idString(gm["index"])]; !ok {
			out = append(out, change{path: fmt.Sprintf("test_groups[%d]", pos), group: groupIdx(gm)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func groupIdx(gm map[string]any) int {
	var n int
	fmt.Sscan(idString(gm["index"]), &n)
	return n
}

func normalized(t *Test) map[string]any {
	raw, _ := json.Marshal(writableOf(t))
	var m map[string]any
	_ = decodeAny(raw, &m)
	return m
}

// diffValue lists the paths where a and b differ. A missing key, null and an
// absent object compare equal, so `schedule: null` and `{end_at: null}` agree.
func diffValue(a, b any, path string) []string {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if (aIsMap || a == nil) && (bIsMap || b == nil) && (aIsMap || bIsMap) {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		var out []string
		for k := range keys {
			out = append(out, diffValue(am[k], bm[k], joinParam(path, k))...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	// Arrays of one length differ entry by entry, so a changed price is
	// named down to its field.
	if aa, ok := a.([]any); ok {
		if ba, ok := b.([]any); ok && len(aa) == len(ba) {
			var out []string
			for i := range aa {
				out = append(out, diffValue(aa[i], ba[i], fmt.Sprintf("%s[%d]", path, i))...)
			}
			return out
		}
	}
	if path == "" {
		path = "."
	}
	return []string{path}
}
