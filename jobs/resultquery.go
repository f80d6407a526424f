package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// TypeResultQuery computes a custom result query (contract §2.9).
const TypeResultQuery = "results:query"

// ResultQueryTask is the payload of TypeResultQuery.
type ResultQueryTask struct {
	QueryID string `json:"query_id"`
}

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
}

// queryInvalid is a 422 of a custom query: its code and param, repeated as
// the one blocking finding.
func queryInvalid(code, param, format string, args ...any) *experiment.Error {
	e := experiment.Errorf(experiment.KindValidation, code, format, args...).WithParam(param)
	e.Findings = []experiment.Finding{{Severity: experiment.SeverityError, Code: code, Message: e.Message, Param: param}}
	return e
}

// ErrResultsNotAvailable is the 422 of a test that has not run yet.
func ErrResultsNotAvailable(t *experiment.Test) *experiment.Error {
	return queryInvalid("results_not_available", "id",
		"Test %d is %s: it has no results until it starts. Do not retry.", t.ID, t.Status)
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
	spec := &QuerySpec{Breakdown: []string{}, SampleBasis: string(warehouse.BasisVisitors), MetricSet: "core"}
	if len(req.Breakdown) > warehouse.MaxDimensions {
		return nil, queryInvalid("breakdown_too_many_dimensions", "breakdown",
			"A breakdown combines at most %d dimensions; got %d.", warehouse.MaxDimensions, len(req.Breakdown))
	}
	seen := map[string]bool{}
	for i, d := range req.Breakdown {
		param := fmt.Sprintf("breakdown[%d]", i)
		if !warehouse.Dimension(d).Known() {
			return nil, queryInvalid("invalid_breakdown_dimension", param,
				"%q is not a breakdown dimension; use one of %s.", d, dimensionList())
		}
		if seen[d] {
			return nil, queryInvalid("duplicate_breakdown_dimension", param, "The dimension %q is named twice.", d)
		}
		seen[d] = true
		spec.Breakdown = append(spec.Breakdown, d)
	}
	run := Window(shop, t, now)
	window, err := clampWindow(req.DateRange, run)
	if err != nil {
		return nil, err
	}
	spec.DateRange = window
	if req.DateRange != nil && ((req.DateRange.GTE != nil && *req.DateRange.GTE != window.GTE) ||
		(req.DateRange.LTE != nil && *req.DateRange.LTE != window.LTE)) {
		spec.Clamped = true
	}
	if req.SampleBasis != nil {
		b := warehouse.Basis(*req.SampleBasis)
		if b != warehouse.BasisVisitors && b != warehouse.BasisSessions {
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
	if req.ProductID != nil && (req.ProductGroupID == nil || *req.ProductGroupID == "") {
		return nil, queryInvalid("product_id_requires_product_group", "product_id",
			"product_id scopes within a product group: send product_group_id too.")
	}
	if req.ProductGroupID != nil {
		id := *req.ProductGroupID
		if t.ProductGroup == nil || t.ProductGroup.ID != id {
			return nil, queryInvalid("product_group_not_found", "product_group_id", "This test has no product group %q.", id)
		}
		ids, err := products(id)
		if err != nil {
			return nil, err
		}
		spec.ProductGroupID, spec.Products = id, ids
		if req.ProductID != nil {
			p := numericID(*req.ProductID)
			if !contains(ids, p) {
				return nil, queryInvalid("invalid_request", "product_id", "Product %q is not in product group %q.", *req.ProductID, id)
			}
			spec.ProductID, spec.Products = *req.ProductID, []string{p}
		}
		if len(spec.Products) == 0 {
			return nil, queryInvalid("product_group_not_found", "product_group_id", "Product group %q has no products.", id)
		}
	}
	return spec, nil
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
	s := make([]string, len(warehouse.Dimensions))
	for i, d := range warehouse.Dimensions {
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

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// ProductGroupProducts resolves a test's product group to numeric product
// ids: the catalog collection of that id when the shop has one, else the
// products the test itself names (a price test's product_ids).
func (r *Results) ProductGroupProducts(ctx context.Context, shop *experiment.Shop, t *experiment.Test, groupID string) ([]string, error) {
	ids, err := r.DB.CollectionProducts(ctx, shop.ID, groupID)
	if err != nil {
		return nil, err
	}
	if ids == nil {
		var price experiment.PriceShared
		if raw, ok := t.Shared["price"]; ok {
			if err := json.Unmarshal(raw, &price); err != nil {
				return nil, fmt.Errorf("jobs.ProductGroupProducts %d: %w", t.ID, err)
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

// CreateQuery validates a custom query, records it as pending and enqueues
// its computation. Errors: experiment_not_found, the 422s of ValidateQuery.
func (r *Results) CreateQuery(ctx context.Context, shop *experiment.Shop, testID int64, req QueryRequest) (*store.ResultQuery, error) {
	t, err := r.DB.FindTestByID(ctx, shop.ID, testID)
	if err != nil {
		return nil, err
	}
	now := r.now()
	spec, err := ValidateQuery(shop, t, req, now, func(id string) ([]string, error) {
		return r.ProductGroupProducts(ctx, shop, t, id)
	})
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	q := &store.ResultQuery{ID: newQueryID(), ShopID: shop.ID, TestID: t.ID, Spec: raw, SpecKey: string(raw),
		Status: store.QueryPending, CreatedAt: now}
	_, err = r.DB.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "results.query", ResourceType: "results_query"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: q.ID}, tx.CreateResultQuery(ctx, q)
		})
	if err != nil {
		return nil, err
	}
	if err := r.Jobs.Enqueue(ctx, Job{Type: TypeResultQuery, Payload: ResultQueryTask{QueryID: q.ID},
		ID: "resultquery:" + q.ID, Queue: QueueDefault, Timeout: 5 * time.Minute}); err != nil && !errors.Is(err, ErrDuplicate) {
		return nil, fmt.Errorf("jobs.CreateQuery: %w", err)
	}
	return q, nil
}

func newQueryID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "rq_" + hex.EncodeToString(b)
}

// lastAttempt reports whether a failure of the running task is its last.
func lastAttempt(ctx context.Context) bool {
	n, ok1 := asynq.GetRetryCount(ctx)
	max, ok2 := asynq.GetMaxRetry(ctx)
	return !ok1 || !ok2 || n >= max
}

// QueryDoc is the result part of a completed query (§2.9); the API adds
// object, id, experiment_id and status.
type QueryDoc struct {
	ComputedAt   time.Time        `json:"computed_at"`
	MetricSet    string           `json:"metric_set"`
	CustomEvents []CustomEvent    `json:"customEvents"`
	Warnings     []string         `json:"warnings"`
	FilterStale  bool             `json:"filterStale"`
	IsRefreshing bool             `json:"isRefreshing"`
	DateRange    DateRange        `json:"date_range"`
	TestGroups   []map[string]any `json:"test_groups,omitempty"`
	Breakdown    *QueryBreakdown  `json:"breakdown,omitempty"`
}

// QueryBreakdown is a dimensional query's answer: rows of metric values.
type QueryBreakdown struct {
	Dimensions []string         `json:"dimensions"`
	Rows       []map[string]any `json:"rows"`
}

// metricSets name the fields of §2.7 each registry reports.
var metricSets = map[string][]string{
	"core": {"test_group_index", "sample_size", "session_count", "conversion_rate", "revenue_per_visitor",
		"average_order_value", "profit_per_visitor", "add_to_cart_rate", "reached_checkout_rate", "orders", "revenue"},
	"engagement": {"test_group_index", "sample_size", "session_count", "page_view_count", "click_through_count",
		"click_through_rate", "bounce_rate", "avg_staying_time"},
}

func pick(m GroupMetrics, set string) (map[string]any, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var all map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, k := range metricSets[set] {
		out[k] = all[k]
	}
	return out, nil
}

// RunQuery computes a pending query. A computation of the same query done
// within ReuseWithin answers it instead. A failure is retried; on the last
// attempt (last) the query is marked failed with a plain reason. A query
// already finished is left alone.
func (r *Results) RunQuery(ctx context.Context, id string, last bool) error {
	q, err := r.DB.FindQueryByID(ctx, id)
	if err != nil || q == nil || q.Status != store.QueryPending {
		return err
	}
	now := r.now()
	if prev, err := r.DB.FindReusableQuery(ctx, q.TestID, q.SpecKey, now.Add(-ReuseWithin)); err != nil {
		return fmt.Errorf("jobs.RunQuery %s: %w", id, err)
	} else if prev != nil {
		return r.finishQuery(ctx, q, store.QueryCompleted, *prev.ComputedAt, prev.Body, "")
	}
	body, reason, err := r.computeQuery(ctx, q, now)
	switch {
	case reason != "":
		return r.finishQuery(ctx, q, store.QueryFailed, now, nil, reason)
	case err != nil && last:
		return r.finishQuery(ctx, q, store.QueryFailed, now, nil,
			"The results store could not compute this query after several attempts. Send the query again later.")
	case err != nil:
		return fmt.Errorf("jobs.RunQuery %s: %w", id, err)
	}
	return r.finishQuery(ctx, q, store.QueryCompleted, now, body, "")
}

func (r *Results) finishQuery(ctx context.Context, q *store.ResultQuery, status string, at time.Time, body json.RawMessage, reason string) error {
	_, err := r.DB.Write(experiment.WithActor(ctx, experiment.Actor{Name: "worker"}),
		experiment.WriteMeta{ShopID: q.ShopID, Action: "results.query." + status, ResourceType: "results_query"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: q.ID}, tx.FinishResultQuery(ctx, q.ID, status, at, body, reason)
		})
	if err != nil {
		return fmt.Errorf("jobs.RunQuery %s: %w", q.ID, err)
	}
	return nil
}

// computeQuery runs the query in the warehouse. A reason (plain language)
// means it can never succeed; an error may pass on retry.
func (r *Results) computeQuery(ctx context.Context, q *store.ResultQuery, now time.Time) (json.RawMessage, string, error) {
	var spec QuerySpec
	if err := json.Unmarshal(q.Spec, &spec); err != nil {
		return nil, "The stored query could not be read; send it again.", nil
	}
	t, err := r.DB.FindTestByID(ctx, q.ShopID, q.TestID)
	if err != nil {
		if e, ok := experiment.AsError(err); ok && e.Kind == experiment.KindNotFound {
			return nil, "The test no longer exists.", nil
		}
		return nil, "", err
	}
	shop, err := r.DB.FindShopByID(ctx, q.ShopID)
	if err != nil {
		return nil, "", err
	}
	mq := warehouse.MetricsQuery{ShopID: shop.ID, ExperimentID: strconv.FormatInt(t.ID, 10), Timezone: timezone(shop),
		From: spec.DateRange.GTE, To: spec.DateRange.LTE, Basis: warehouse.Basis(spec.SampleBasis), ProductIDs: spec.Products}
	for _, d := range spec.Breakdown {
		mq.Breakdown = append(mq.Breakdown, warehouse.Dimension(d))
	}
	rows, err := r.Warehouse.GroupMetrics(ctx, mq)
	if err != nil {
		return nil, "", err
	}
	custom, err := r.Warehouse.CustomEvents(ctx, mq)
	if err != nil {
		return nil, "", err
	}
	doc := QueryDoc{ComputedAt: now, MetricSet: spec.MetricSet, Warnings: []string{}, FilterStale: spec.Clamped,
		DateRange: spec.DateRange}
	if spec.Clamped {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("The date range was clamped to the test's run: %s to %s.",
			spec.DateRange.GTE, spec.DateRange.LTE))
	}
	groups := len(t.Groups)
	total := make([]warehouse.Sums, groups)
	if len(spec.Breakdown) == 0 {
		total = sumsByGroup(rows, groups)
		for i, s := range total {
			m, err := pick(groupMetrics(i, s, shop.Currency), spec.MetricSet)
			if err != nil {
				return nil, "", err
			}
			doc.TestGroups = append(doc.TestGroups, m)
		}
	} else {
		doc.Breakdown = &QueryBreakdown{Dimensions: spec.Breakdown, Rows: []map[string]any{}}
		for _, row := range rows {
			if row.TestGroup < 0 || row.TestGroup >= groups {
				continue
			}
			total[row.TestGroup].Add(row.Sums)
			m, err := pick(groupMetrics(row.TestGroup, row.Sums, shop.Currency), spec.MetricSet)
			if err != nil {
				return nil, "", err
			}
			m["dimension_value"] = row.Key
			doc.Breakdown.Rows = append(doc.Breakdown.Rows, m)
		}
	}
	doc.CustomEvents = customEvents(custom, total)
	body, err := json.Marshal(doc)
	return body, "", err
}
