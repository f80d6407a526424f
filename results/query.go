package results

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/liftab/lift/experiment"
)

// Result query statuses (contract §2.9).
const (
	QueryPending   = "pending"
	QueryCompleted = "completed"
	QueryFailed    = "failed"
)

// ResultQuery is a custom result query and, once computed, its result.
type ResultQuery struct {
	ID            string
	ShopID        int64
	TestID        int64
	Spec          json.RawMessage // the normalized request, window clamped
	SpecKey       string          // canonical form of Spec: equal keys, equal queries
	Status        string
	FailureReason string
	CreatedAt     time.Time
	ComputedAt    *time.Time
	Body          json.RawMessage // result fields; set when completed
}

// FindQuery reads a custom query of a test as computed; it never
// recomputes. Errors: KindNotFound experiment_not_found,
// results_query_not_found (also another test's or shop's).
func (s *Service) FindQuery(ctx context.Context, shop *experiment.Shop, testID int64, id string) (*ResultQuery, error) {
	if _, err := s.cfg.Tests.FindTestByID(ctx, shop.ID, testID); err != nil {
		return nil, err
	}
	return s.cfg.Repo.FindResultQuery(ctx, shop.ID, testID, id)
}

// CreateQuery validates a custom query, records it as pending and enqueues
// its computation. Errors: experiment_not_found, the 422s of ValidateQuery.
func (s *Service) CreateQuery(ctx context.Context, shop *experiment.Shop, testID int64, req QueryRequest) (*ResultQuery, error) {
	t, err := s.cfg.Tests.FindTestByID(ctx, shop.ID, testID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	spec, err := ValidateQuery(shop, t, req, now, func(id string) ([]string, error) {
		return s.ProductGroupProducts(ctx, shop, t, id)
	})
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	q := &ResultQuery{ID: experiment.NewID("rq_"), ShopID: shop.ID, TestID: t.ID, Spec: raw, SpecKey: string(raw),
		Status: QueryPending, CreatedAt: now}
	_, err = s.cfg.Repo.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "results.query", ResourceType: "results_query"},
		func(ctx context.Context, tx Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: q.ID}, tx.CreateResultQuery(ctx, q)
		})
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Jobs.EnqueueQuery(ctx, q.ID); err != nil {
		return nil, fmt.Errorf("results.CreateQuery: %w", err)
	}
	return q, nil
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
	Analysis     Analysis         `json:"analysis"`
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
func (s *Service) RunQuery(ctx context.Context, id string, last bool) error {
	q, err := s.cfg.Repo.FindQueryByID(ctx, id)
	if err != nil || q == nil || q.Status != QueryPending {
		return err
	}
	now := s.now()
	if prev, err := s.cfg.Repo.FindReusableQuery(ctx, q.TestID, q.SpecKey, now.Add(-ReuseWithin)); err != nil {
		return fmt.Errorf("results.RunQuery %s: %w", id, err)
	} else if prev != nil {
		return s.finishQuery(ctx, q, QueryCompleted, *prev.ComputedAt, prev.Body, "")
	}
	body, reason, err := s.computeQuery(ctx, q, now)
	switch {
	case reason != "":
		return s.finishQuery(ctx, q, QueryFailed, now, nil, reason)
	case err != nil && last:
		return s.finishQuery(ctx, q, QueryFailed, now, nil,
			"The results store could not compute this query after several attempts. Send the query again later.")
	case err != nil:
		return fmt.Errorf("results.RunQuery %s: %w", id, err)
	}
	return s.finishQuery(ctx, q, QueryCompleted, now, body, "")
}

func (s *Service) finishQuery(ctx context.Context, q *ResultQuery, status string, at time.Time, body json.RawMessage, reason string) error {
	_, err := s.cfg.Repo.Write(experiment.WithActor(ctx, experiment.Actor{Name: "worker"}),
		experiment.WriteMeta{ShopID: q.ShopID, Action: "results.query." + status, ResourceType: "results_query"},
		func(ctx context.Context, tx Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: q.ID}, tx.FinishResultQuery(ctx, q.ID, status, at, body, reason)
		})
	if err != nil {
		return fmt.Errorf("results.RunQuery %s: %w", q.ID, err)
	}
	return nil
}

// computeQuery runs the query in the  A reason (plain language)
// means it can never succeed; an error may pass on retry.
func (s *Service) computeQuery(ctx context.Context, q *ResultQuery, now time.Time) (json.RawMessage, string, error) {
	var spec QuerySpec
	if err := json.Unmarshal(q.Spec, &spec); err != nil {
		return nil, "The stored query could not be read; send it again.", nil
	}
	t, err := s.cfg.Tests.FindTestByID(ctx, q.ShopID, q.TestID)
	if err != nil {
		if experiment.IsNotFound(err) {
			return nil, "The test no longer exists.", nil
		}
		return nil, "", err
	}
	shop, err := s.cfg.Tests.FindShopByID(ctx, q.ShopID)
	if err != nil {
		return nil, "", err
	}
	if err := s.settled(ctx, q.ShopID, q.TestID); err != nil {
		return nil, "", err
	}
	body, err := s.ComputeQuery(ctx, shop, t, spec, now)
	return body, "", err
}

// ComputeQuery computes the body of a custom query with spec (already
// validated) on test t of shop.
func (s *Service) ComputeQuery(ctx context.Context, shop *experiment.Shop, t *experiment.Test, spec QuerySpec, now time.Time) (json.RawMessage, error) {
	mq := MetricsQuery{ShopID: shop.ID, ExperimentID: strconv.FormatInt(t.ID, 10), Timezone: shop.Location().String(),
		From: spec.DateRange.GTE, To: spec.DateRange.LTE, Basis: Basis(spec.SampleBasis), ProductIDs: spec.Products}
	for _, d := range spec.Breakdown {
		mq.Breakdown = append(mq.Breakdown, Dimension(d))
	}
	opts := t.Analysis.Normalized()
	if spec.Analysis != nil {
		opts = *spec.Analysis
	}
	rows, custom, set, err := s.metricRows(ctx, mq, opts)
	if err != nil {
		return nil, err
	}
	doc, err := queryDoc(spec, rows, custom, t, shop.Currency, now, set)
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// queryDoc shapes a query's sums: per group without a breakdown, else one
// row per cell and group (no separate totals), in the metric set's fields,
// each row with the SRM status of its cell.
func queryDoc(spec QuerySpec, rows []GroupRow, custom []CustomEventRow, t *experiment.Test, currency string, now time.Time, set settings) (QueryDoc, error) {
	groups := len(t.Groups)
	doc := QueryDoc{ComputedAt: now, MetricSet: spec.MetricSet, Warnings: []string{}, FilterStale: spec.Clamped,
		DateRange: spec.DateRange}
	if spec.Clamped {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("The date range was clamped to the test's run: %s to %s.",
			spec.DateRange.GTE, spec.DateRange.LTE))
	}
	total := make([]Sums, groups)
	if len(spec.Breakdown) == 0 {
		total = sumsByGroup(rows, groups)
		// The comparisons are where the analysis options act.
		cmp := compare(total, set)
		doc.Analysis = set.analysis(currency, &cmp, nil)
		for i, s := range total {
			m, err := pick(groupMetrics(i, s, currency), spec.MetricSet)
			if err != nil {
				return doc, err
			}
			m["vs_control"] = inSet(cmp.vsControl(i, currency), m)
			doc.TestGroups = append(doc.TestGroups, m)
		}
	} else {
		var cells []CUPEDCell
		if set.opts.CUPED && set.cuped.reason == "" {
			cells = cupedCells(rows, groups, set)
		}
		doc.Analysis = set.analysis(currency, nil, cells)
		doc.Breakdown = &QueryBreakdown{Dimensions: spec.Breakdown, Rows: []map[string]any{}}
		srm := cellSRM(t, rows)
		// One row per cell and group, a group without units in a cell
		// included (zeros), so a client indexing a cell's rows by group
		// never mistakes a missing row for a missing group.
		keys, byCell := byKey(rows)
		for _, k := range keys {
			for i, s := range sumsByGroup(byCell[k], groups) {
				total[i].Add(s)
				m, err := pick(groupMetrics(i, s, currency), spec.MetricSet)
				if err != nil {
					return doc, err
				}
				m["dimension_value"] = k
				m["srm_status"] = srm[k]
				doc.Breakdown.Rows = append(doc.Breakdown.Rows, m)
			}
		}
	}
	doc.CustomEvents = customEvents(custom, total)
	return doc, nil
}

// inSet keeps the vs_control entries of the metrics the row reports (the
// query's metric set); nil (the control) stays nil.
func inSet(vs map[string]*VsControl, row map[string]any) map[string]*VsControl {
	if vs == nil {
		return nil
	}
	out := map[string]*VsControl{}
	for k, v := range vs {
		if _, ok := row[k]; ok {
			out[k] = v
		}
	}
	return out
}

// cellSRM is the SRM status of each breakdown cell: its groups' units
// against the configured splits. A segment whose assignment or tracking
// breaks (one device dropping a group) shows here while the whole test may
// still look fine.
func cellSRM(t *experiment.Test, rows []GroupRow) map[string]string {
	keys, cells := byKey(rows)
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = srmStatus(t, sumsByGroup(cells[k], len(t.Groups)))
	}
	return out
}
