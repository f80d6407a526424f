package results_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/money"
	"github.com/liftab/lift/results"
)

// memory is an in-memory fake of every port results declares: the
// repository and its unit of work, the tests reader, the warehouse and
// the job queue. The service tests run the same cases on it and on the
// real stores.
type memory struct {
	mu        sync.Mutex
	now       func() time.Time
	shops     map[int64]*experiment.Shop
	tests     map[int64]*experiment.Test
	snapshots []results.Snapshot
	queries   map[string]*results.ResultQuery
	exports   map[string]*results.Export
	units     map[string][]plantedUnit // by experiment id
	nextID    int64
}

func newMemory(now func() time.Time) *memory {
	return &memory{now: now, shops: map[int64]*experiment.Shop{}, tests: map[int64]*experiment.Test{},
		queries: map[string]*results.ResultQuery{}, exports: map[string]*results.Export{}, units: map[string][]plantedUnit{}}
}

func notFound(code, what string) error {
	return experiment.Errorf(experiment.KindNotFound, code, "No %s.", what)
}

// Write applies the unit's changes only when fn succeeds: memTx buffers them.
func (m *memory) Write(ctx context.Context, _ experiment.WriteMeta,
	fn func(ctx context.Context, tx results.Tx) (experiment.WriteResult, error)) (experiment.WriteResult, error) {
	tx := &memTx{m: m}
	res, err := fn(ctx, tx)
	if err != nil {
		return res, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, apply := range tx.ops {
		if err := apply(); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (m *memory) LatestSnapshot(_ context.Context, shopID, testID int64) (*results.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out *results.Snapshot
	for i := range m.snapshots {
		s := m.snapshots[i]
		if s.ShopID == shopID && s.TestID == testID && (out == nil || !s.ComputedAt.Before(out.ComputedAt)) {
			out = &s
		}
	}
	return out, nil
}

func (m *memory) FindSnapshotsDue(ctx context.Context, now time.Time, p results.SnapshotPolicy, limit int) ([]results.SnapshotDue, error) {
	var out []results.SnapshotDue
	for _, t := range m.sortedTests() {
		last, _ := m.LatestSnapshot(ctx, t.ShopID, t.ID)
		start := t.CreatedAt
		if t.StartedAt != nil {
			start = *t.StartedAt
		}
		switch {
		case t.Status == experiment.StatusActive && last != nil && last.ComputedAt.Before(t.UpdatedAt):
			changed := t.UpdatedAt
			out = append(out, results.SnapshotDue{ShopID: t.ShopID, TestID: t.ID, ChangedAt: &changed})
		case t.Status == experiment.StatusActive && last == nil && !start.After(now.Add(-p.FirstAfter)),
			t.Status == experiment.StatusActive && last != nil && !last.ComputedAt.After(now.Add(-p.Every)):
			out = append(out, results.SnapshotDue{ShopID: t.ShopID, TestID: t.ID})
		case (t.Status == experiment.StatusEnded || t.Status == experiment.StatusArchived) && t.EndedAt != nil &&
			last != nil && !last.Final:
			out = append(out, results.SnapshotDue{ShopID: t.ShopID, TestID: t.ID, Final: true})
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memory) FindRunningTests(_ context.Context, limit int) ([]results.RunningTest, error) {
	var out []results.RunningTest
	for _, t := range m.sortedTests() {
		if t.Status == experiment.StatusActive && len(out) < limit {
			out = append(out, results.RunningTest{ShopID: t.ShopID, TestID: t.ID})
		}
	}
	return out, nil
}

func (m *memory) sortedTests() []*experiment.Test {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*experiment.Test
	for _, t := range m.tests {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (m *memory) FindResultQuery(_ context.Context, shopID, testID int64, id string) (*results.ResultQuery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queries[id]
	if !ok || q.ShopID != shopID || q.TestID != testID {
		return nil, notFound("results_query_not_found", "query")
	}
	c := *q
	return &c, nil
}

func (m *memory) FindQueryByID(_ context.Context, id string) (*results.ResultQuery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queries[id]
	if !ok {
		return nil, nil
	}
	c := *q
	return &c, nil
}

func (m *memory) FindReusableQuery(_ context.Context, testID int64, key string, since time.Time) (*results.ResultQuery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out *results.ResultQuery
	for _, q := range m.queries {
		if q.TestID == testID && q.SpecKey == key && q.Status == results.QueryCompleted && !q.ComputedAt.Before(since) &&
			(out == nil || q.ComputedAt.After(*out.ComputedAt)) {
			c := *q
			out = &c
		}
	}
	return out, nil
}

func (m *memory) FindExport(ctx context.Context, shopID int64, id string) (*results.Export, error) {
	x, err := m.FindExportByID(ctx, id)
	if err != nil || x.ShopID != shopID {
		return nil, notFound("export_not_found", "export")
	}
	return x, nil
}

func (m *memory) FindExportByID(_ context.Context, id string) (*results.Export, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, ok := m.exports[id]
	if !ok {
		return nil, notFound("export_not_found", "export")
	}
	c := *x
	return &c, nil
}

func (m *memory) ExpireExports(_ context.Context, before, at time.Time) ([]*results.Export, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*results.Export
	for _, x := range m.exports {
		if x.Status == results.ExportCompleted && x.CompletedAt.Before(before) {
			x.Status, x.ExpiredAt = results.ExportExpired, &at
		}
		if x.Status == results.ExportExpired && x.File != "" {
			c := *x
			out = append(out, &c)
		}
	}
	return out, nil
}

func (m *memory) ForgetExportFile(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if x := m.exports[id]; x != nil && x.Status == results.ExportExpired {
		x.File = ""
	}
	return nil
}

// memTx buffers a unit's changes until Write commits them.
type memTx struct {
	m   *memory
	ops []func() error
}

func (tx *memTx) CreateSnapshot(_ context.Context, s *results.Snapshot) error {
	tx.ops = append(tx.ops, func() error {
		tx.m.nextID++
		s.ID = tx.m.nextID
		tx.m.snapshots = append(tx.m.snapshots, *s)
		return nil
	})
	return nil
}

func (tx *memTx) CreateResultQuery(_ context.Context, q *results.ResultQuery) error {
	c := *q
	tx.ops = append(tx.ops, func() error { tx.m.queries[q.ID] = &c; return nil })
	return nil
}

func (tx *memTx) FinishResultQuery(_ context.Context, id, status string, at time.Time, body json.RawMessage, reason string) error {
	tx.ops = append(tx.ops, func() error {
		if q := tx.m.queries[id]; q != nil && q.Status == results.QueryPending {
			q.Status, q.ComputedAt, q.Body, q.FailureReason = status, &at, body, reason
		}
		return nil
	})
	return nil
}

func (tx *memTx) CreateExport(_ context.Context, e *results.Export) error {
	e.Status, e.CreatedAt = results.ExportPending, tx.m.now().UTC()
	c := *e
	tx.ops = append(tx.ops, func() error { tx.m.exports[e.ID] = &c; return nil })
	return nil
}

func (tx *memTx) StartExport(_ context.Context, shopID int64, id string) (*results.Export, error) {
	tx.m.mu.Lock()
	defer tx.m.mu.Unlock()
	x, ok := tx.m.exports[id]
	if !ok || x.ShopID != shopID {
		return nil, notFound("export_not_found", "export")
	}
	if x.Status == results.ExportPending || x.Status == results.ExportRunning {
		x.Status = results.ExportRunning
	}
	c := *x
	return &c, nil
}

func (tx *memTx) CompleteExport(_ context.Context, shopID int64, id, file string, rows int64) error {
	return tx.finish(shopID, id, []string{results.ExportRunning}, func(x *results.Export) {
		at := tx.m.now().UTC()
		x.Status, x.File, x.RowCount, x.CompletedAt = results.ExportCompleted, file, &rows, &at
	})
}

func (tx *memTx) FailExport(_ context.Context, shopID int64, id, reason string) error {
	return tx.finish(shopID, id, []string{results.ExportPending, results.ExportRunning}, func(x *results.Export) {
		at := tx.m.now().UTC()
		x.Status, x.Failure, x.CompletedAt = results.ExportFailed, reason, &at
	})
}

func (tx *memTx) finish(shopID int64, id string, from []string, set func(*results.Export)) error {
	tx.ops = append(tx.ops, func() error {
		x := tx.m.exports[id]
		if x == nil || x.ShopID != shopID || (x.Status != from[0] && x.Status != from[len(from)-1]) {
			return experiment.Errorf(experiment.KindConflict, "export_not_running", "export %s is not running", id)
		}
		set(x)
		return nil
	})
	return nil
}

// Tests reader.

func (m *memory) FindTestByID(_ context.Context, shopID, id int64) (*experiment.Test, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tests[id]
	if !ok || t.ShopID != shopID {
		return nil, notFound("experiment_not_found", "test")
	}
	c := *t
	return &c, nil
}

func (m *memory) FindShopByID(_ context.Context, id int64) (*experiment.Shop, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.shops[id]
	if !ok {
		return nil, notFound("shop_not_found", "shop")
	}
	c := *s
	return &c, nil
}

func (m *memory) CollectionProducts(context.Context, int64, string) ([]string, error) {
	return nil, nil
}

// Warehouse: sums over the planted units, with the device breakdown; a
// snapshot and a query without product scope read nothing else.

// plantedUnit is one visitor: its group, device and orders, and its
// revenue and orders before its assignment (CUPED's covariates; the db
// backend plants them as orders of another test).
type plantedUnit struct {
	group      int
	device     string
	orders     int
	revenue    float64
	at         time.Time
	preOrders  int
	preRevenue float64
}

func (m *memory) GroupMetrics(_ context.Context, q results.MetricsQuery) ([]results.GroupRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cells := map[[2]string]*results.GroupRow{}
	var keys [][2]string
	for _, u := range m.units[q.ExperimentID] {
		key := ""
		if len(q.Breakdown) > 0 {
			key = u.device
		}
		k := [2]string{key, strconv.Itoa(u.group)}
		if cells[k] == nil {
			cells[k] = &results.GroupRow{Key: key, TestGroup: u.group}
			keys = append(keys, k)
		}
		r := cells[k]
		o, rev := float64(u.orders), u.revenue
		s := results.Sums{N: 1, Sessions: 1, Orders: o, OrdersSq: o * o, Revenue: rev, RevenueSq: rev * rev,
			RevenueOrders: rev * o, Profit: rev, ProfitSq: rev * rev, Converted: int64(min(u.orders, 1)), PageViews: 1, Bounced: 1}
		if q.Caps != nil {
			rc, pc := min(rev, q.Caps.Revenue), min(rev, q.Caps.Profit)
			s.RevenueCapped, s.RevenueCappedSq, s.RevenueOrdersCapped = rc, rc*rc, rc*o
			s.ProfitCapped, s.ProfitCappedSq = pc, pc*pc
		}
		r.Add(s)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	out := make([]results.GroupRow, len(keys))
	for i, k := range keys {
		out[i] = *cells[k]
	}
	return out, nil
}

// WinsorCaps is the warehouse's rule over the planted units: the quantile
// of the positive per-unit values, taken as ClickHouse's quantileExact does
// (the order statistic at ⌊p·n⌋). Profit equals revenue here.
func (m *memory) WinsorCaps(_ context.Context, q results.MetricsQuery, p float64) (results.Caps, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var positive []float64
	for _, u := range m.units[q.ExperimentID] {
		if u.revenue > 0 {
			positive = append(positive, u.revenue)
		}
	}
	c := results.Caps{Percentile: p}
	if len(positive) > 0 {
		sort.Float64s(positive)
		c.Revenue = positive[min(int(p*float64(len(positive))), len(positive)-1)]
		c.Profit = c.Revenue
	}
	return c, nil
}

// Covariates sums the planted pre-exposure values per group as the
// warehouse does: X·Y with Y capped at q.Caps (profit equals revenue).
func (m *memory) Covariates(_ context.Context, q results.MetricsQuery) ([]results.CovariateRow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cells := map[[2]string]*results.CovariateRow{}
	var keys [][2]string
	for _, u := range m.units[q.ExperimentID] {
		key := ""
		if len(q.Breakdown) > 0 {
			key = u.device
		}
		k := [2]string{key, strconv.Itoa(u.group)}
		r := cells[k]
		if r == nil {
			r = &results.CovariateRow{Key: key, TestGroup: u.group}
			cells[k] = r
			keys = append(keys, k)
		}
		// The planted history is orders only: purchase intent is the
		// number of orders, the denominator of the pre-exposure AOV too.
		x, act, y, yc, d := u.preRevenue, float64(u.preOrders), u.revenue, u.revenue, float64(u.orders)
		if q.Caps != nil {
			yc = min(y, q.Caps.Revenue)
		}
		r.N++
		if u.preOrders > 0 {
			r.WithHistory++
		}
		r.PreRevenue, r.PreRevenueSq = r.PreRevenue+x, r.PreRevenueSq+x*x
		r.RevenueCross, r.RevenueCappedCross = r.RevenueCross+x*y, r.RevenueCappedCross+x*yc
		r.ProfitCross, r.ProfitCappedCross = r.ProfitCross+x*y, r.ProfitCappedCross+x*yc
		r.PreActivity, r.PreActivitySq = r.PreActivity+act, r.PreActivitySq+act*act
		r.PreOrders, r.PreOrdersSq, r.OrdersPreOrdersCross = r.PreOrders+act, r.PreOrdersSq+act*act, r.OrdersPreOrdersCross+d*act
		r.PreRevenuePreOrdersCross += x * act
		r.RevenuePreOrdersCross, r.RevenueCappedPreOrdersCross = r.RevenuePreOrdersCross+y*act, r.RevenueCappedPreOrdersCross+yc*act
		r.OrdersPreRevenueCross += d * x
		if u.orders > 0 {
			r.ConvertedCross += act
		}
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	out := make([]results.CovariateRow, len(keys))
	for i, k := range keys {
		out[i] = *cells[k]
	}
	return out, nil
}

func (m *memory) CustomEvents(context.Context, results.MetricsQuery) ([]results.CustomEventRow, error) {
	return nil, nil
}

func (m *memory) ExportOrders(_ context.Context, _ int64, exp string, fn func(*results.ExportRow) error) (int64, error) {
	m.mu.Lock()
	units := append([]plantedUnit(nil), m.units[exp]...)
	m.mu.Unlock()
	var n int64
	for i, u := range units {
		if u.orders == 0 {
			continue
		}
		r := results.ExportRow{OrderID: strconv.Itoa(1000 + i), CreatedAt: u.at, TestGroup: int16(u.group),
			VisitorID: fmt.Sprintf("v%d-%d", u.group, i), Revenue: money.FromFloat(u.revenue), Currency: "EUR", LineItems: 1, Quantity: 1, Version: 1}
		if err := fn(&r); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// queue records what the service enqueued: the JobQueue port.
type queue struct {
	mu      sync.Mutex
	queries []string
	exports []string
	down    bool     // Redis is unreachable: every enqueue fails
	refused []string // exports it refused while down
}

func (q *queue) EnqueueQuery(_ context.Context, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queries = append(q.queries, id)
	return nil
}

func (q *queue) EnqueueExport(_ context.Context, _ int64, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.down {
		q.refused = append(q.refused, id)
		return fmt.Errorf("queue down")
	}
	q.exports = append(q.exports, id)
	return nil
}
