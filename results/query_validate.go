package results

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
)

// ReuseWithin is how old a computation of the same query may be and still
// answer a new one (contract §8: on-demand results at most 1 hour old).
const ReuseWithin = time.Hour

// QueryRequest is the body of POST /v1/experiments/{id}/results (DESIGN §9).
// Every field is optional: the whole run, no breakdown, visitors, core.
type QueryRequest struct {
	DateRange      *DateRangeRequest `json:"date_range"`
	Breakdown      []string          `json:"breakdown"`
	SampleBasis    *string           `json:"sample_basis"`
	MetricSet      *string           `json:"metric_set"`
	ProductGroupID *string           `json:"product_group_id"`
	ProductID      *string           `json:"product_id"`
	// Analysis overrides the test's analysis options for this query; fields
	// left out keep the test's.
	Analysis json.RawMessage `json:"analysis"`
}

// DateRangeRequest is the requested window; a bound left out is the run's.
type DateRangeRequest struct {
	GTE *string `json:"gte"`
	LTE *string `json:"lte"`
}

// QuerySpec is a validated query: the window clamped to the test's run, the
// product group resolved to its products. Its JSON is the reuse key.
type QuerySpec struct {
	DateRange      DateRange `json:"date_range"`
	Clamped        bool      `json:"clamped"`
	Breakdown      []string  `json:"breakdown"`
	SampleBasis    string    `json:"sample_basis"`
	MetricSet      string    `json:"metric_set"`
	ProductGroupID string    `json:"product_group_id,omitempty"`
	ProductID      string    `json:"product_id,omitempty"`
	Products       []string  `json:"products,omitempty"`
	// Analysis is the test's options with the query's overrides; nil in
	// queries stored before it existed (then the test's, as they stand).
	Analysis *experiment.AnalysisOptions `json:"analysis,omitempty"`
}

// queryInvalid is a 422 of a custom query: its code and param, repeated as
// the one blocking finding.
func queryInvalid(code, param, format string, args ...any) *experiment.Error {
	e := experiment.Errorf(experiment.KindValidation, code, format, args...).WithParam(param)
	e.Findings = []experiment.Finding{{Severity: experiment.SeverityError, Code: code, Message: e.Message, Param: param}}
	return e
}

// ErrResultsNotAvailable is the 422 of a test that has not run yet.
// A failed test can be started again, so "Do not retry" told its owner
// the wrong thing (v1 audit 2, V13); an archived one cannot.
func ErrResultsNotAvailable(t *experiment.Test) *experiment.Error {
	if t.Status == experiment.StatusArchived {
		return queryInvalid("results_not_available", "id", "Test %d was archived before it ran: it has no results and will have none.", t.ID)
	}
	return queryInvalid("results_not_available", "id",
		"Test %d is %s and has never run: it has no results until it is started (POST /v1/experiments/%d/start); asking before then gets this answer again.", t.ID, t.Status, t.ID)
}

// HasRun reports whether a test can have results: it has been started.
func HasRun(t *experiment.Test) bool {
	return t.Status != experiment.StatusDraft && t.Status != experiment.StatusPreview && t.StartedAt != nil
}

// ValidateQuery checks a custom query against the test and clamps its
// window to the run: every refusal is a 422 with the offending param.
// products returns the product ids of a product group of the test.
func ValidateQuery(shop *experiment.Shop, t *experiment.Test, req QueryRequest, now time.Time,
	products func(groupID string) ([]string, error)) (*QuerySpec, error) {
	if !HasRun(t) {
		return nil, ErrResultsNotAvailable(t)
	}
	spec := &QuerySpec{SampleBasis: string(BasisVisitors), MetricSet: "core"}
	var err error
	if spec.Breakdown, err = validateBreakdown(req.Breakdown); err != nil {
		return nil, err
	}
	if spec.DateRange, err = clampWindow(req.DateRange, Window(shop, t, now)); err != nil {
		return nil, err
	}
	if r := req.DateRange; r != nil && ((r.GTE != nil && *r.GTE != spec.DateRange.GTE) || (r.LTE != nil && *r.LTE != spec.DateRange.LTE)) {
		spec.Clamped = true
	}
	if req.SampleBasis != nil {
		b := Basis(*req.SampleBasis)
		if b != BasisVisitors && b != BasisSessions {
			return nil, queryInvalid("sample_basis_unsupported", "sample_basis",
				"sample_basis %q is not supported; use visitors or sessions.", *req.SampleBasis)
		}
		spec.SampleBasis = string(b)
	}
	if req.MetricSet != nil {
		if *req.MetricSet != "core" && *req.MetricSet != "engagement" {
			return nil, queryInvalid("invalid_request", "metric_set", "metric_set must be core or engagement; got %q.", *req.MetricSet)
		}
		spec.MetricSet = *req.MetricSet
	}
	if err := scopeToProducts(spec, t, req, products); err != nil {
		return nil, err
	}
	opts, err := experiment.ParseAnalysis(req.Analysis, t.Analysis.Normalized(), "analysis")
	if err != nil {
		return nil, err
	}
	spec.Analysis = &opts
	return spec, nil
}

// validateBreakdown checks the dimensions: known, each once, at most
// MaxDimensions.
func validateBreakdown(dims []string) ([]string, error) {
	if len(dims) > MaxDimensions {
		return nil, queryInvalid("breakdown_too_many_dimensions", "breakdown",
			"A breakdown combines at most %d dimensions; got %d.", MaxDimensions, len(dims))
	}
	out := []string{}
	seen := map[string]bool{}
	for i, d := range dims {
		param := fmt.Sprintf("breakdown[%d]", i)
		if !Dimension(d).Known() {
			return nil, queryInvalid("invalid_breakdown_dimension", param,
				"%q is not a breakdown dimension; use one of %s.", d, dimensionList())
		}
		if seen[d] {
			return nil, queryInvalid("duplicate_breakdown_dimension", param, "The dimension %q is named twice.", d)
		}
		seen[d] = true
		out = append(out, d)
	}
	return out, nil
}

// scopeToProducts resolves product_group_id (and product_id within it) to
// the product ids the metrics are scoped to.
func scopeToProducts(spec *QuerySpec, t *experiment.Test, req QueryRequest, products func(groupID string) ([]string, error)) error {
	if req.ProductID != nil && (req.ProductGroupID == nil || *req.ProductGroupID == "") {
		return queryInvalid("product_id_requires_product_group", "product_id",
			"product_id scopes within a product group: send product_group_id too.")
	}
	if req.ProductGroupID == nil {
		return nil
	}
	id := *req.ProductGroupID
	if t.ProductGroup == nil || t.ProductGroup.ID != id {
		return queryInvalid("product_group_not_found", "product_group_id", "This test has no product group %q.", id)
	}
	ids, err := products(id)
	if err != nil {
		return err
	}
	spec.ProductGroupID, spec.Products = id, ids
	if req.ProductID != nil {
		p := numericID(*req.ProductID)
		if !slices.Contains(ids, p) {
			return queryInvalid("invalid_request", "product_id", "Product %q is not in product group %q.", *req.ProductID, id)
		}
		spec.ProductID, spec.Products = *req.ProductID, []string{p}
	}
	if len(spec.Products) == 0 {
		return queryInvalid("product_group_not_found", "product_group_id", "Product group %q has no products.", id)
	}
	return nil
}

// clampWindow parses the requested window and clamps it to the run.
func clampWindow(req *DateRangeRequest, run DateRange) (DateRange, error) {
	w := run
	if req == nil {
		return w, nil
	}
	parse := func(v *string, param string) (string, error) {
		if v == nil {
			return "", nil
		}
		d, err := time.Parse(time.DateOnly, *v)
		if err != nil || d.Format(time.DateOnly) != *v {
			return "", queryInvalid("invalid_date_range", param, "%s must be a date YYYY-MM-DD; got %q.", param, *v)
		}
		return *v, nil
	}
	gte, err := parse(req.GTE, "date_range.gte")
	if err != nil {
		return w, err
	}
	lte, err := parse(req.LTE, "date_range.lte")
	if err != nil {
		return w, err
	}
	if gte != "" && lte != "" && gte > lte {
		return w, queryInvalid("invalid_date_range", "date_range", "date_range.gte %s is after date_range.lte %s.", gte, lte)
	}
	if lte != "" && lte < run.GTE {
		return w, queryInvalid("date_range_out_of_bounds", "date_range.lte",
			"The window ends on %s, before the test started on %s.", lte, run.GTE)
	}
	if gte != "" && gte > run.LTE {
		return w, queryInvalid("date_range_out_of_bounds", "date_range.gte",
			"The window begins on %s, after the last day with results (%s).", gte, run.LTE)
	}
	if gte > w.GTE {
		w.GTE = gte
	}
	if lte != "" && lte < w.LTE {
		w.LTE = lte
	}
	return w, nil
}

func dimensionList() string {
	s := make([]string, len(Dimensions))
	for i, d := range Dimensions {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}

func numericID(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// ProductGroupProducts resolves a test's product group to numeric product
// ids: the catalog collection of that id when the shop has one, else the
// products the test itself names (a price test's product_ids).
func (s *Service) ProductGroupProducts(ctx context.Context, shop *experiment.Shop, t *experiment.Test, groupID string) ([]string, error) {
	ids, err := s.cfg.Tests.CollectionProducts(ctx, shop.ID, groupID)
	if err != nil {
		return nil, err
	}
	if ids == nil {
		var price experiment.PriceShared
		if raw, ok := t.Shared["price"]; ok {
			if err := json.Unmarshal(raw, &price); err != nil {
				return nil, fmt.Errorf("results.ProductGroupProducts %d: %w", t.ID, err)
			}
		}
		ids = price.ProductIDs
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = numericID(id)
	}
	return out, nil
}
