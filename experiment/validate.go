package experiment

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Product caps per price test (part 2.5).
const (
	ProductLimit       = 100
	RaisedProductLimit = 500
	maxGroups          = 10
)

var (
	gidPattern    = regexp.MustCompile(`^gid://[a-z0-9_-]+/[A-Za-z]+/[0-9]+$`)
	amountPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,4})?$`)
	countryCode   = regexp.MustCompile(`^[A-Z]{2}$`)
)

// Refuse is a 422 with one blocking finding, so the top-level code and param
// repeat it as part 7 requires.
func Refuse(code, param, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Kind: KindValidation, Code: code, Message: msg, Param: param,
		Findings: []Finding{{Severity: SeverityError, Code: code, Message: msg, Param: param}}}
}

// ValidateMode says how much of a test is checked.
type ValidateMode int

const (
	// ValidateFull runs every rule, reading the catalog: create, PATCH of a
	// draft, start.
	ValidateFull ValidateMode = iota
	// ValidateOpenFields checks only what stays editable after launch (names,
	// splits, schedule): a launched test is not refused because its catalog
	// has since changed.
	ValidateOpenFields
)

// Validate runs the per-type rules of part 7 on t. It returns the warnings of
// a valid test, or a KindValidation *Error whose Code and Param repeat the
// first blocking finding and whose Findings hold all of them. now is the
// injected clock's time; cat may be nil in ValidateOpenFields mode.
func Validate(ctx context.Context, shop *Shop, t *Test, cat Catalog, mode ValidateMode, now time.Time) ([]Finding, error) {
	v := &validator{shop: shop, t: t, now: now, groups: make([]groupContent, len(t.Groups))}
	v.top()
	v.groupStructure()
	if mode == ValidateFull {
		v.decodeShared()
		v.decodeGroups()
		v.collectRefs()
		if !v.refs.empty() {
			view, err := cat.Lookup(ctx, t.ShopID, v.refs)
			if err != nil {
				return nil, fmt.Errorf("experiment.Validate: %w", err)
			}
			v.cat = view
		}
		if v.cat == nil {
			v.cat = &CatalogView{}
		}
		v.checkShared()
		v.checkGroups()
	}
	// Findings read in the body's order: the test's own fields, then shared,
	// then the groups.
	sort.SliceStable(v.findings, func(i, j int) bool { return section(v.findings[i].Param) < section(v.findings[j].Param) })
	return v.result()
}

func section(param string) int {
	switch {
	case strings.HasPrefix(param, "shared"):
		return 1
	case strings.HasPrefix(param, "test_groups"):
		return 2
	}
	return 0
}

type groupContent struct {
	prefix   map[Type]string // param prefix of each type's content
	price    *PriceContent
	shipping *ShippingContent
	theme    *ThemeContent
	template *TemplateContent
	redirect *URLRedirectContent
	offer    *OfferContent
	visual   *VisualEditorContent
}

type validator struct {
	shop     *Shop
	t        *Test
	now      time.Time
	findings []Finding
	refs     CatalogRefs
	cat      *CatalogView

	price    *PriceShared
	shipping *ShippingShared
	theme    *ThemeShared
	template *TemplateShared
	redirect *URLRedirectShared
	visual   *VisualEditorShared
	groups   []groupContent
}

func (v *validator) fail(code, param, format string, args ...any) {
	v.findings = append(v.findings, Finding{Severity: SeverityError, Code: code, Param: param,
		Message: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(code, param, format string, args ...any) {
	v.findings = append(v.findings, Finding{Severity: SeverityWarning, Code: code, Param: param,
		Message: fmt.Sprintf(format, args...)})
}

func (v *validator) result() ([]Finding, error) {
	var warnings []Finding
	var first *Finding
	for i, f := range v.findings {
		if f.Severity == SeverityError && first == nil {
			first = &v.findings[i]
		}
		if f.Severity == SeverityWarning {
			warnings = append(warnings, f)
		}
	}
	if first == nil {
		return warnings, nil
	}
	return nil, &Error{Kind: KindValidation, Code: first.Code, Message: first.Message,
		Param: first.Param, Findings: v.findings}
}

// top checks the test's own fields.
func (v *validator) top() {
	t := v.t
	if strings.TrimSpace(t.Name) == "" {
		v.fail("invalid_request", "name", "A test needs a name.")
	} else if nameTooLong(t.Name) {
		v.fail("invalid_request", "name", "name is at most %d characters.", MaxNameChars)
	}
	if t.PrimaryMetric != nil && !t.PrimaryMetric.Known() {
		v.fail("invalid_request", "primary_metric", "primary_metric %q is not one of %v.", *t.PrimaryMetric, Metrics)
	}
	if t.TrafficAllocation < 1 || t.TrafficAllocation > 100 {
		v.fail("invalid_request", "traffic_allocation",
			"traffic_allocation is a whole percentage from 1 to 100; got %d.", t.TrafficAllocation)
	}
	if len(t.Audience) > 0 && string(t.Audience) != "null" && !bytes.HasPrefix(bytes.TrimSpace(t.Audience), []byte("{")) {
		v.fail("invalid_request", "audience", "audience is an object or null.")
	} else {
		v.audience()
	}
	if s := t.Schedule; s != nil {
		if s.StartAt != nil && s.EndAt != nil && !s.EndAt.After(*s.StartAt) {
			v.fail("invalid_request", "schedule.end_at", "schedule.end_at must be after schedule.start_at.")
		}
		// A running test whose end_at has passed is simply due to end; only a
		// test that has not launched cannot be given a window already over.
		if s.EndAt != nil && !s.EndAt.After(v.now) && !t.Launched() && t.Status != StatusArchived {
			v.fail("invalid_request", "schedule.end_at", "schedule.end_at is in the past.")
		}
		if s.StartAt != nil && !s.StartAt.After(v.now) && !t.Launched() {
			v.warn("schedule_start_passed", "schedule.start_at",
				"schedule.start_at has passed; the scheduler starts the test at its next pass.")
		}
	}
}

// nameTooLong is the one length rule of a test's and a group's name, for
// every type and surface: MaxNameChars characters (code points), as
// CheckJSONText counts a body's text, never bytes, so "é" counts once
// (session audit 2, S2-11).
func nameTooLong(name string) bool { return utf8.RuneCountInString(name) > MaxNameChars }

// groupStructure checks indexes, names and splits: the rules that stay in force
// after launch.
func (v *validator) groupStructure() {
	gs := v.t.Groups
	if len(gs) < 2 || len(gs) > maxGroups {
		v.fail("invalid_request", "test_groups", "A test has from 2 to %d test groups; got %d.", maxGroups, len(gs))
		if len(gs) == 0 {
			return
		}
	}
	seenIndex := map[int]bool{}
	seenName := map[string]int{}
	sum := 0
	hasControl := false
	for i, g := range gs {
		p := fmt.Sprintf("test_groups[%d]", i)
		if g.Index < 0 {
			v.fail("invalid_request", p+".index", "A test group index is a whole number from 0.")
		}
		if seenIndex[g.Index] {
			v.fail("invalid_request", p+".index", "Test group index %d appears twice.", g.Index)
		}
		seenIndex[g.Index] = true
		hasControl = hasControl || g.Index == 0
		name := strings.ToLower(strings.TrimSpace(g.Name))
		switch {
		case name == "":
			v.fail("invalid_request", p+".name", "Every test group needs a name.")
		case nameTooLong(g.Name):
			v.fail("invalid_request", p+".name", "A group name is at most %d characters.", MaxNameChars)
		default:
			if j, dup := seenName[name]; dup {
				// Named by index, the group's identity (part 2.1): after a
				// PATCH merge, positions are not what the client sent.
				v.fail("duplicate_group_name", p+".name", "The test groups with index %d and %d are both named %q.", j, g.Index, g.Name)
			}
			seenName[name] = g.Index
		}
		if g.Split < 0 || g.Split > 100 {
			v.fail("invalid_request", p+".split", "split is a whole percentage from 0 to 100; got %d.", g.Split)
		}
		sum += g.Split
	}
	if !hasControl {
		v.fail("control_group_invalid", "test_groups", "The control is the test group with index 0; none was sent.")
	}
	if sum != 100 {
		v.fail("split_sum_invalid", "test_groups", "The splits of the test groups add up to %d; they must add up to 100.", sum)
	}
}

// sortedKeys yields a map's keys in order, so findings come out deterministic.
func sortedKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !yield(k) {
				return
			}
		}
	}
}
