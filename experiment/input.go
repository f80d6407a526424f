package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// writable is the part of a test a client writes: the create body, and the
// shape a PATCH merges into. Read-only fields are accepted and ignored, so a
// client may send back what it read.
type writable struct {
	Type              Type                       `json:"type"`
	Name              string                     `json:"name"`
	Hypothesis        *string                    `json:"hypothesis"`
	PrimaryMetric     *Metric                    `json:"primary_metric"`
	TrafficAllocation *int                       `json:"traffic_allocation"`
	Shared            map[string]json.RawMessage `json:"shared"`
	Groups            []groupInput               `json:"test_groups"`
	Schedule          *Schedule                  `json:"schedule"`
	Audience          json.RawMessage            `json:"audience"`
	Analysis          json.RawMessage            `json:"analysis,omitempty"`
	Guardrails        json.RawMessage            `json:"guardrails,omitempty"`

	// Parsed from Analysis and Guardrails by decodeWritable.
	analysis   AnalysisOptions
	guardrails []Guardrail
}

type groupInput struct {
	Index   *int            `json:"index"`
	Name    string          `json:"name"`
	Split   int             `json:"split"`
	Content json.RawMessage `json:"content"`
}

// ParseCreate reads a create body into a new draft for shop. It answers 400
// `malformed_json` for unparsable JSON, 422 `invalid_type` for a type this
// API cannot create, 501 `not_implemented` for checkout, and 422
// `invalid_request` with param for a body the schema refuses, DOM changes
// and checkout content among them (the admin panel authors them).
func ParseCreate(body []byte, shopID int64, now time.Time) (*Test, error) {
	return parseCreate(body, shopID, now, false)
}

// parseCreate is ParseCreate; panel is the admin panel's create, which
// may carry the visual editor's DOM changes (checkout content still comes
// through CreateFromAdminPanel's checkout path only).
func parseCreate(body []byte, shopID int64, now time.Time, panel bool) (*Test, error) {
	if err := checkObject(body); err != nil {
		return nil, err
	}
	if err := CheckJSONText(body, testTextLimit); err != nil {
		return nil, err
	}
	var head struct {
		Type json.RawMessage `json:"type"`
	}
	_ = json.Unmarshal(body, &head)
	var typ Type
	if err := json.Unmarshal(head.Type, &typ); err != nil || len(head.Type) == 0 {
		return nil, Refuse("invalid_request", "type", "type is required: one of %s.", typeList())
	}
	if err := CheckCreatable(typ); err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := decodeAny(body, &fields); err != nil {
		return nil, Errorf(KindInvalidRequest, "malformed_json", "The request body is not valid JSON.")
	}
	// A client that sends "status":"active" believes its test goes live:
	// answering 201 with a draft let it believe so (v1 audit 2, V6), as a
	// PATCH's status change is refused.
	if v, ok := fields["status"]; ok && v != nil && v != string(StatusDraft) {
		return nil, Refuse("invalid_request", "status",
			"A test is created as a draft; start it with POST /v1/experiments/{id}/start once it is created.")
	}
	writableOnly, err := json.Marshal(withoutReadOnly(fields))
	if err != nil {
		return nil, fmt.Errorf("experiment.ParseCreate: %w", err)
	}
	in, err := decodeWritable(writableOnly)
	if err != nil {
		return nil, err
	}
	t := &Test{ShopID: shopID, Status: StatusDraft, CreatedAt: now, UpdatedAt: now, AssignmentVersion: 1, Bucketing: CurrentBucketing}
	in.applyTo(t)
	for i := range t.Groups {
		if t.EditorOwned(&t.Groups[i]) {
			param := fmt.Sprintf("test_groups[%d].content", i)
			if holdsCheckout(t.Type, t.Groups[i].Content) {
				return nil, Refuse("invalid_request", param,
					"Checkout content is authored in the admin panel's checkout editor; the API cannot write it.")
			}
			if !panel {
				return nil, editorOnly(param)
			}
		}
	}
	return t, nil
}

// CheckCreatable answers whether the API can create a test of type t.
func CheckCreatable(t Type) error {
	switch {
	case t == TypeCheckout:
		return Errorf(KindNotImplemented, "not_implemented",
			"Checkout tests are authored in the admin panel; this API cannot create them.").WithParam("type")
	case !t.Known():
		return Refuse("invalid_type", "type", "type %q is not one of %s.", t, typeList())
	}
	return nil
}

func typeList() string {
	var s []string
	for _, t := range Types {
		if t != TypeCheckout {
			s = append(s, string(t))
		}
	}
	return strings.Join(s, ", ")
}

// decodeWritable decodes a create body, or a PATCH merged onto the stored
// test, refusing what the schema refuses with 422 invalid_request and param.
// No message carries Go's own wording (a time layout, a type name).
func decodeWritable(body []byte) (*writable, error) {
	if err := checkSchedule(body); err != nil {
		return nil, err
	}
	var in writable
	var err error
	if err = strictUnmarshal(body, &in); err != nil {
		p, msg := jsonErrorParam(err)
		if p == "" {
			msg = "The request body does not fit the schema of a test."
		}
		return nil, Refuse("invalid_request", p, "%s", msg)
	}
	if in.analysis, err = ParseAnalysis(in.Analysis, DefaultAnalysis(), "analysis"); err != nil {
		return nil, err
	}
	if in.guardrails, err = parseGuardrails(in.Guardrails); err != nil {
		return nil, err
	}
	for i, g := range in.Groups {
		if g.Index != nil && *g.Index > MaxGroupIndex {
			return nil, Refuse("invalid_request", fmt.Sprintf("test_groups[%d].index", i),
				"A test group index is a whole number from 0 to %d; got %d.", MaxGroupIndex, *g.Index)
		}
	}
	return &in, nil
}

// checkSchedule reads schedule's two times before the decoder does, so a
// bad one is refused naming its field, in the contract's words.
func checkSchedule(body []byte) error {
	var top struct {
		Schedule json.RawMessage `json:"schedule"`
	}
	if json.Unmarshal(body, &top) != nil || isNull(top.Schedule) {
		return nil
	}
	var s map[string]json.RawMessage
	if json.Unmarshal(top.Schedule, &s) != nil {
		return Refuse("invalid_request", "schedule", "schedule is an object with start_at and end_at, or null.")
	}
	for _, k := range []string{"start_at", "end_at"} {
		raw, ok := s[k]
		if !ok || isNull(raw) {
			continue
		}
		var t time.Time
		if json.Unmarshal(raw, &t) != nil {
			return badTime("schedule." + k)
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

func badTime(param string) error {
	return Refuse("invalid_request", param, "%s is an ISO 8601 date-time such as 2026-01-31T00:00:00Z, or null.", param)
}

func checkObject(body []byte) error {
	if !json.Valid(body) {
		return Errorf(KindInvalidRequest, "malformed_json", "The request body is not valid JSON.")
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return Refuse("invalid_request", "", "The request body must be a JSON object.")
	}
	return nil
}

func (in *writable) applyTo(t *Test) {
	t.Type = in.Type
	t.Name = in.Name
	t.Hypothesis = in.Hypothesis
	t.PrimaryMetric = in.PrimaryMetric
	t.TrafficAllocation = 100
	if in.TrafficAllocation != nil {
		t.TrafficAllocation = *in.TrafficAllocation
	}
	t.Shared = in.Shared
	if t.Shared == nil {
		t.Shared = map[string]json.RawMessage{}
	}
	for k, raw := range t.Shared {
		t.Shared[k] = dropNullMembers(raw)
	}
	t.Groups = make([]Group, len(in.Groups))
	for i, g := range in.Groups {
		idx := i
		if g.Index != nil {
			idx = *g.Index
		}
		content := g.Content
		if isEmptyJSON(content) {
			content = json.RawMessage("{}")
		}
		t.Groups[i] = Group{Index: idx, Name: g.Name, Split: g.Split, Content: content}
	}
	t.Schedule = in.Schedule
	if t.Schedule != nil && t.Schedule.StartAt == nil && t.Schedule.EndAt == nil {
		t.Schedule = nil
	}
	t.Audience = in.Audience
	if string(t.Audience) == "null" {
		t.Audience = nil
	}
	t.Analysis, t.Guardrails = in.analysis, in.guardrails
}

// writableOf is t's writable form, groups ordered by index.
func writableOf(t *Test) writable {
	w := writable{Type: t.Type, Name: t.Name, Hypothesis: t.Hypothesis, PrimaryMetric: t.PrimaryMetric,
		Shared: t.Shared, Schedule: t.Schedule, Audience: t.Audience}
	// Marshalling plain values cannot fail.
	w.Analysis, _ = json.Marshal(t.Analysis.Normalized())
	guardrails := t.Guardrails
	if guardrails == nil {
		guardrails = []Guardrail{}
	}
	w.Guardrails, _ = json.Marshal(guardrails)
	ta := t.TrafficAllocation
	w.TrafficAllocation = &ta
	gs := append([]Group(nil), t.Groups...)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Index < gs[j].Index })
	for _, g := range gs {
		idx := g.Index
		w.Groups = append(w.Groups, groupInput{Index: &idx, Name: g.Name, Split: g.Split, Content: g.Content})
	}
	return w
}

// PatchResult says what a PATCH changed.
type PatchResult struct {
	Changed    []string // JSON paths that differ, sorted
	Reassigned bool     // splits, allocation or the set of groups changed
}

// identifiers are the arrays whose entries merge by an identifier (§4.2 rule 2).
var identifiers = map[string]string{"test_groups": "index", "prices": "product_variant_id", "offers": "key"}

// ApplyPatch merges a sparse PATCH body into a copy of cur (§4.2) and returns
// the result; cur is not modified. It refuses with 409 `locked_field` after
// launch for anything but the open fields, 409 `editor_owned_content` for a
// content change to a group holding admin-panel content, and 422
// `invalid_request` / `rule_key_not_found` for unusable entries. The caller
// validates the result.
func ApplyPatch(cur *Test, body []byte, now time.Time) (*Test, PatchResult, error) {
	if err := checkObject(body); err != nil {
		return nil, PatchResult{}, err
	}
	if err := CheckJSONText(body, testTextLimit); err != nil {
		return nil, PatchResult{}, err
	}
	var patch map[string]any
	if err := decodeAny(body, &patch); err != nil {
		return nil, PatchResult{}, Errorf(KindInvalidRequest, "malformed_json", "The request body is not valid JSON.")
	}
	if err := checkReadOnly(cur, patch); err != nil {
		return nil, PatchResult{}, err
	}
	// What GET shows and nothing writes is dropped before the merge: merged,
	// results_summary's test_groups were read as groups to patch (a GET
	// body sent back was refused: v1 audit 2, V2).
	withoutReadOnly(patch)
	var base map[string]any
	baseJSON, err := json.Marshal(writableOf(cur))
	if err != nil {
		return nil, PatchResult{}, fmt.Errorf("experiment.ApplyPatch: %w", err)
	}
	if err := decodeAny(baseJSON, &base); err != nil {
		return nil, PatchResult{}, fmt.Errorf("experiment.ApplyPatch: %w", err)
	}
	merged, err := mergeObject(base, patch, "")
	if err != nil {
		return nil, PatchResult{}, err
	}
	mergedJSON, err := json.Marshal(merged)
	if err != nil {
		return nil, PatchResult{}, fmt.Errorf("experiment.ApplyPatch: %w", err)
	}
	in, err := decodeWritable(mergedJSON)
	if err != nil {
		return nil, PatchResult{}, err
	}
	if in.Type != cur.Type {
		return nil, PatchResult{}, Refuse("invalid_request", "type", "A test's type cannot change; create a new test.")
	}
	next := *cur
	in.applyTo(&next)
	sort.SliceStable(next.Groups, func(i, j int) bool { return next.Groups[i].Index < next.Groups[j].Index })

	changes := diffTests(cur, &next)
	var res PatchResult
	for _, c := range changes {
		res.Changed = append(res.Changed, c.path)
		if c.path == "traffic_allocation" || splitPath.MatchString(c.path) || groupPath.MatchString(c.path) {
			res.Reassigned = true
		}
	}
	if err := checkPatchAllowed(cur, changes); err != nil {
		return nil, res, err
	}
	for _, c := range changes {
		if strings.Contains(c.rest, ".dom_changes") {
			return nil, res, editorOnly(c.path)
		}
	}
	if len(res.Changed) > 0 {
		next.UpdatedAt = now
		if res.Reassigned {
			next.AssignmentVersion++
		}
	}
	return &next, res, nil
}

// readOnlyFields are the keys of a test as GET shows it that no write sets
// (status and id are checked before they go).
var readOnlyFields = []string{"object", "id", "status", "has_force_assign_rules", "assignment_version", "product_group",
	"results_summary", "failure_reason", "pause_reason", "created_at", "updated_at", "started_at", "ended_at", "warnings"}

// withoutReadOnly drops readOnlyFields from a create or PATCH body: sent
// back as read they are ignored, as the docs promise.
func withoutReadOnly(body map[string]any) map[string]any {
	for _, k := range readOnlyFields {
		delete(body, k)
	}
	return body
}

// checkReadOnly lets a PATCH carry back the id and status it read (they are
// ignored), but refuses other values: {"status":"ended"} answered 200 and
// left the test running, and a client may believe it ended it.
func checkReadOnly(cur *Test, patch map[string]any) error {
	if v, ok := patch["id"]; ok && v != strconv.FormatInt(cur.ID, 10) {
		return Refuse("invalid_request", "id", "A test's id cannot change; this is test %d.", cur.ID)
	}
	if v, ok := patch["status"]; ok && v != string(cur.Status) {
		return Refuse("invalid_request", "status",
			"status changes through the lifecycle actions (POST /v1/experiments/%d/start, pause, resume, end, archive), not PATCH.", cur.ID)
	}
	return nil
}

func editorOnly(param string) error {
	return Refuse("invalid_request", param, "DOM changes are authored in the admin panel; the API writes custom_css, custom_js and images only.")
}

func checkPatchAllowed(cur *Test, changed []change) error {
	for _, c := range changed {
		if c.group < 0 {
			continue
		}
		g := cur.Group(c.group)
		if g == nil || !cur.EditorOwned(g) {
			continue
		}
		// A removed group or a content change would erase what the admin
		// panel wrote; its name and split stay open.
		if c.rest == "" || c.rest == ".content" || strings.HasPrefix(c.rest, ".content.") {
			return Errorf(KindConflict, "editor_owned_content",
				"Test group %d holds content authored in the admin panel that the API cannot rewrite; nothing was changed.", c.group).
				WithParam(c.path)
		}
	}
	if !cur.Launched() {
		return nil
	}
	for _, c := range changed {
		if !openAfterLaunch(c.path) {
			return Errorf(KindConflict, "locked_field",
				"%s cannot change after launch; only name, hypothesis, primary_metric, test group names and splits, schedule.end_at, analysis and guardrails can. Create a new test to change anything else.", c.path).
				WithParam(c.path)
		}
	}
	return nil
}

func openAfterLaunch(p string) bool {
	switch p {
	case "name", "hypothesis", "primary_metric", "schedule.end_at":
		return true
	}
	// Analysis options and guardrails change how results are read, never
	// what a visitor sees, so they stay open while the test runs.
	if p == "analysis" || strings.HasPrefix(p, "analysis.") || strings.HasPrefix(p, "guardrails") {
		return true
	}
	return groupNameOrSplit.MatchString(p)
}

// mergeObject applies patch onto base: objects merge key by key, identified
// arrays merge entry by entry, anything else replaces.
func mergeObject(base, patch map[string]any, path string) (map[string]any, error) {
	out := make(map[string]any, len(base)+len(patch))
	for k, v := range base {
		out[k] = v
	}
	for k, pv := range patch {
		p := joinParam(path, k)
		bv := out[k]
		switch pv := pv.(type) {
		case map[string]any:
			bm, _ := bv.(map[string]any)
			m, err := mergeObject(bm, pv, p)
			if err != nil {
				return nil, err
			}
			out[k] = m
		case []any:
			if id, ok := identifiers[k]; ok {
				ba, _ := bv.([]any)
				a, err := mergeArray(ba, pv, id, p)
				if err != nil {
					return nil, err
				}
				out[k] = a
				continue
			}
			out[k] = pv
		default:
			out[k] = pv
		}
	}
	return out, nil
}

func mergeArray(base, patch []any, id, path string) ([]any, error) {
	out := append([]any(nil), base...)
	find := func(key string) int {
		for i, e := range out {
			if m, ok := e.(map[string]any); ok && idString(m[id]) == key {
				return i
			}
		}
		return -1
	}
	named := map[string]bool{}
	for i, pe := range patch {
		p := fmt.Sprintf("%s[%d]", path, i)
		pm, ok := pe.(map[string]any)
		if !ok {
			return nil, Refuse("invalid_request", p, "Entries of %s are objects.", path)
		}
		key := idString(pm[id])
		if key == "" {
			return nil, Refuse("invalid_request", p+"."+id, "Each entry of %s names its %s.", path, id)
		}
		// Two entries for one key: which should stand? A create refuses
		// it; a PATCH kept the last silently (v1 audit 2, V10).
		if named[key] {
			return nil, Refuse("invalid_request", p+"."+id, "%s %s appears twice in %s; send one entry for it.", id, key, path)
		}
		named[key] = true
		at := find(key)
		rv, hasRemove := pm["remove"]
		remove, isBool := rv.(bool)
		if hasRemove && !isBool {
			return nil, Refuse("invalid_request", p+".remove", "remove is true or false.")
		}
		delete(pm, "remove")
		switch {
		case remove && at < 0 && id == "key":
			return nil, Refuse("rule_key_not_found", p+".key", "No offer has key %q.", key)
		case remove && at < 0:
			return nil, Refuse("invalid_request", p+"."+id, "No entry of %s has %s %s to remove.", path, id, key)
		case remove:
			out = append(out[:at], out[at+1:]...)
		case at < 0:
			out = append(out, pm)
		default:
			bm, _ := out[at].(map[string]any)
			m, err := mergeObject(bm, pm, p)
			if err != nil {
				return nil, err
			}
			out[at] = m
		}
	}
	return out, nil
}

func idString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return v.String()
	}
	return ""
}

func decodeAny(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(dst)
}

// dropNullMembers removes the members of a JSON object whose value is
// null. A null option is an absent one (as a PATCH's null removes it), and
// kept it would be echoed where the schema has an array or an object
// ("markets": null: docs audit D8). Anything but an object with a null
// member comes back as it was, byte for byte.
func dropNullMembers(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	changed := false
	for k, v := range m {
		if isNull(v) {
			delete(m, k)
			changed = true
		}
	}
	if !changed {
		return raw
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}
