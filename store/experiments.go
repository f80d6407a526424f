package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
)

// errTestNotFound is the 404 of every test lookup: a test of another shop
// reads as not found.
func errTestNotFound(id int64) error {
	return experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test with id %d.", id)
}

const testColumns = `id, shop_id, type, status, name, hypothesis, primary_metric, traffic_allocation,
	shared, audience, schedule_start_at, schedule_end_at, has_force_assign_rules, assignment_version,
	product_group_id, product_group_name, checks_pending, failure_reason, created_at, updated_at,
	started_at, ended_at, analysis, guardrails, pause_reason, bucketing`

// CreateTest inserts t with its groups and sets t.ID.
func createTest(ctx context.Context, q querier, t *experiment.Test) error {
	shared, err := json.Marshal(t.Shared)
	if err != nil {
		return fmt.Errorf("store.CreateTest: %w", err)
	}
	start, end := scheduleTimes(t.Schedule)
	pgID, pgName := productGroup(t.ProductGroup)
	analysis, guardrails, err := analysisColumns(t)
	if err != nil {
		return fmt.Errorf("store.CreateTest: %w", err)
	}
	err = q.QueryRow(ctx, `INSERT INTO experiments (shop_id, type, status, name, hypothesis, primary_metric,
		traffic_allocation, shared, audience, schedule_start_at, schedule_end_at, has_force_assign_rules,
		assignment_version, product_group_id, product_group_name, checks_pending, failure_reason,
		created_at, updated_at, started_at, ended_at, analysis, guardrails, pause_reason, bucketing)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25) RETURNING id`,
		t.ShopID, t.Type, t.Status, t.Name, t.Hypothesis, metricPtr(t.PrimaryMetric), t.TrafficAllocation,
		shared, jsonOrNil(t.Audience), start, end, t.HasForceAssignRules, t.AssignmentVersion, pgID, pgName,
		t.ChecksPending, t.FailureReason, t.CreatedAt, t.UpdatedAt, t.StartedAt, t.EndedAt,
		analysis, guardrails, t.PauseReason, t.Bucketing).Scan(&t.ID)
	if err != nil {
		return fmt.Errorf("store.CreateTest: %w", err)
	}
	if err := insertGroups(ctx, q, t); err != nil {
		return fmt.Errorf("store.CreateTest: %w", err)
	}
	return nil
}

// SaveTest writes every mutable column of t and replaces its groups. It
// answers experiment_not_found when t is not a test of t.ShopID.
func saveTest(ctx context.Context, q querier, t *experiment.Test) error {
	shared, err := json.Marshal(t.Shared)
	if err != nil {
		return fmt.Errorf("store.SaveTest: %w", err)
	}
	start, end := scheduleTimes(t.Schedule)
	analysis, guardrails, err := analysisColumns(t)
	if err != nil {
		return fmt.Errorf("store.SaveTest %d: %w", t.ID, err)
	}
	tag, err := q.Exec(ctx, `UPDATE experiments SET status=$3, name=$4, hypothesis=$5, primary_metric=$6,
		traffic_allocation=$7, shared=$8, audience=$9, schedule_start_at=$10, schedule_end_at=$11,
		assignment_version=$12, checks_pending=$13, failure_reason=$14, updated_at=$15, started_at=$16, ended_at=$17,
		analysis=$18, guardrails=$19, pause_reason=$20,
		platform_released_at = CASE WHEN $3 = 'active' THEN NULL ELSE platform_released_at END
		WHERE shop_id=$1 AND id=$2`,
		t.ShopID, t.ID, t.Status, t.Name, t.Hypothesis, metricPtr(t.PrimaryMetric), t.TrafficAllocation,
		shared, jsonOrNil(t.Audience), start, end, t.AssignmentVersion, t.ChecksPending, t.FailureReason,
		t.UpdatedAt, t.StartedAt, t.EndedAt, analysis, guardrails, t.PauseReason)
	if err != nil {
		return fmt.Errorf("store.SaveTest %d: %w", t.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return errTestNotFound(t.ID)
	}
	if _, err := q.Exec(ctx, `DELETE FROM test_groups WHERE experiment_id=$1`, t.ID); err != nil {
		return fmt.Errorf("store.SaveTest %d: %w", t.ID, err)
	}
	if err := insertGroups(ctx, q, t); err != nil {
		return fmt.Errorf("store.SaveTest %d: %w", t.ID, err)
	}
	return nil
}

// SetChecksPending marks whether asynchronous launch checks run for a test.
func setChecksPending(ctx context.Context, q querier, shopID, id int64, pending bool, now time.Time) error {
	tag, err := q.Exec(ctx, `UPDATE experiments SET checks_pending=$3, updated_at=$4 WHERE shop_id=$1 AND id=$2`,
		shopID, id, pending, now)
	if err != nil {
		return fmt.Errorf("store.SetChecksPending %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return errTestNotFound(id)
	}
	return nil
}

func insertGroups(ctx context.Context, q querier, t *experiment.Test) error {
	for _, g := range t.Groups {
		content := g.Content
		if len(content) == 0 {
			content = json.RawMessage("{}")
		}
		if _, err := q.Exec(ctx, `INSERT INTO test_groups (experiment_id, idx, name, split, content)
			VALUES ($1,$2,$3,$4,$5)`, t.ID, g.Index, g.Name, g.Split, []byte(content)); err != nil {
			if isUniqueViolation(err) {
				return experiment.Errorf(experiment.KindConflict, "invalid_request", "Test group index %d appears twice.", g.Index)
			}
			return err
		}
	}
	return nil
}

// FindTestByID reads one test of the shop; lock takes a row lock for the rest
// of the transaction so concurrent actions on the test serialise. It answers
// experiment_not_found for an unknown id or a test of another shop.
func findTestByID(ctx context.Context, q querier, shopID, id int64, lock bool) (*experiment.Test, error) {
	sql := `SELECT ` + testColumns + ` FROM experiments WHERE shop_id=$1 AND id=$2`
	if lock {
		sql += ` FOR UPDATE`
	}
	t, err := scanTest(q.QueryRow(ctx, sql, shopID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errTestNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("store.FindTestByID %d: %w", id, err)
	}
	if err := loadGroups(ctx, q, []*experiment.Test{t}); err != nil {
		return nil, fmt.Errorf("store.FindTestByID %d: %w", id, err)
	}
	return t, nil
}

// testFilter is experiment.Filter and what only the store asks: tests
// running or ended since endedGE (FindTestsLiveAt). No use case filters on
// it, so the domain's Filter, and its fake, do without it.
type testFilter struct {
	experiment.Filter
	endedGE *time.Time
}

// findTests lists a shop's tests newest first, one page of f.Limit, and
// reports whether more follow.
func findTests(ctx context.Context, q querier, shopID int64, f testFilter) ([]*experiment.Test, bool, error) {
	where := []string{"shop_id=$1"}
	args := []any{shopID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
	}
	if len(f.Statuses) > 0 {
		add("status = ANY(?)", statusStrings(f.Statuses))
	}
	if len(f.Types) > 0 {
		add("type = ANY(?)", typeStrings(f.Types))
	}
	if f.Scheduled != nil {
		cond := `(status IN ('draft','preview') AND schedule_start_at IS NOT NULL)`
		if !*f.Scheduled {
			cond = "NOT " + cond
		}
		where = append(where, cond)
	}
	if f.CreatedGT != nil {
		add("created_at > ?", *f.CreatedGT)
	}
	if f.CreatedGE != nil {
		add("created_at >= ?", *f.CreatedGE)
	}
	if f.CreatedLT != nil {
		add("created_at < ?", *f.CreatedLT)
	}
	if f.CreatedLE != nil {
		add("created_at <= ?", *f.CreatedLE)
	}
	if f.endedGE != nil {
		add("(status IN ('active','paused') OR ended_at >= ?)", *f.endedGE)
	}
	if c := f.After; c != nil {
		args = append(args, c.CreatedAt, c.ID)
		where = append(where, fmt.Sprintf("(created_at, id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 10
	}
	args = append(args, limit+1)
	sql := fmt.Sprintf(`SELECT %s FROM experiments WHERE %s ORDER BY created_at DESC, id DESC LIMIT $%d`,
		testColumns, strings.Join(where, " AND "), len(args))
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, false, fmt.Errorf("store.FindTests: %w", err)
	}
	var out []*experiment.Test
	for rows.Next() {
		t, err := scanTest(rows)
		if err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("store.FindTests: %w", err)
		}
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store.FindTests: %w", err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	if err := loadGroups(ctx, q, out); err != nil {
		return nil, false, fmt.Errorf("store.FindTests: %w", err)
	}
	return out, more, nil
}

// FindDueActions lists tests whose schedule has come: drafts and previews
// past start_at are due a start (on installed shops), active and paused tests
// past end_at an end.
func (db *DB) FindDueActions(ctx context.Context, now time.Time, limit int) ([]experiment.DueAction, error) {
	rows, err := db.pool.Query(ctx, `
		(SELECT shop_id, id, 'start', schedule_start_at FROM experiments
		  WHERE status IN ('draft','preview') AND schedule_start_at <= $1 AND NOT checks_pending
		    AND shop_id IN (SELECT id FROM shops WHERE uninstalled_at IS NULL)
		  ORDER BY schedule_start_at LIMIT $2)
		UNION ALL
		(SELECT shop_id, id, 'end', schedule_end_at FROM experiments
		  WHERE status IN ('active','paused') AND schedule_end_at <= $1
		  ORDER BY schedule_end_at LIMIT $2)`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("store.FindDueActions: %w", err)
	}
	defer rows.Close()
	var out []experiment.DueAction
	for rows.Next() {
		var d experiment.DueAction
		var a string
		if err := rows.Scan(&d.ShopID, &d.TestID, &a, &d.At); err != nil {
			return nil, fmt.Errorf("store.FindDueActions: %w", err)
		}
		d.Action = experiment.Action(a)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store.FindDueActions: %w", err)
	}
	return out, nil
}

func scanTest(row pgx.Row) (*experiment.Test, error) {
	var t experiment.Test
	var shared, audience, analysis, guardrails []byte
	var metric, pgID, pgName *string
	var start, end *time.Time
	err := row.Scan(&t.ID, &t.ShopID, &t.Type, &t.Status, &t.Name, &t.Hypothesis, &metric, &t.TrafficAllocation,
		&shared, &audience, &start, &end, &t.HasForceAssignRules, &t.AssignmentVersion, &pgID, &pgName,
		&t.ChecksPending, &t.FailureReason, &t.CreatedAt, &t.UpdatedAt, &t.StartedAt, &t.EndedAt,
		&analysis, &guardrails, &t.PauseReason, &t.Bucketing)
	if err != nil {
		return nil, err
	}
	t.Analysis = experiment.DefaultAnalysis()
	if err := json.Unmarshal(analysis, &t.Analysis); err != nil {
		return nil, fmt.Errorf("analysis of test %d: %w", t.ID, err)
	}
	if err := json.Unmarshal(guardrails, &t.Guardrails); err != nil || t.Guardrails == nil {
		t.Guardrails = []experiment.Guardrail{}
	}
	if err := json.Unmarshal(shared, &t.Shared); err != nil {
		return nil, fmt.Errorf("shared of test %d: %w", t.ID, err)
	}
	if len(audience) > 0 {
		t.Audience = compactJSON(audience)
	}
	for k, v := range t.Shared {
		t.Shared[k] = compactJSON(v)
	}
	if metric != nil {
		m := experiment.Metric(*metric)
		t.PrimaryMetric = &m
	}
	if start != nil || end != nil {
		t.Schedule = &experiment.Schedule{StartAt: utcPtr(start), EndAt: utcPtr(end)}
	}
	if pgID != nil {
		t.ProductGroup = &experiment.ProductGroup{ID: *pgID, Name: derefString(pgName)}
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.StartedAt, t.EndedAt = utcPtr(t.StartedAt), utcPtr(t.EndedAt)
	return &t, nil
}

func loadGroups(ctx context.Context, q querier, ts []*experiment.Test) error {
	if len(ts) == 0 {
		return nil
	}
	byID := make(map[int64]*experiment.Test, len(ts))
	ids := make([]int64, len(ts))
	for i, t := range ts {
		byID[t.ID] = t
		ids[i] = t.ID
		t.Groups = []experiment.Group{}
	}
	rows, err := q.Query(ctx, `SELECT experiment_id, idx, name, split, content FROM test_groups
		WHERE experiment_id = ANY($1) ORDER BY experiment_id, idx`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var g experiment.Group
		var content []byte
		if err := rows.Scan(&id, &g.Index, &g.Name, &g.Split, &content); err != nil {
			return err
		}
		g.Content = compactJSON(content)
		byID[id].Groups = append(byID[id].Groups, g)
	}
	return rows.Err()
}

// compactJSON undoes jsonb's spacing so stored JSON reads back as it was sent.
// analysisColumns are the JSONB of t's analysis options (the defaults for a
// test built without them) and guardrails (never null).
func analysisColumns(t *experiment.Test) (analysis, guardrails []byte, err error) {
	if analysis, err = json.Marshal(t.Analysis.Normalized()); err != nil {
		return nil, nil, err
	}
	g := t.Guardrails
	if g == nil {
		g = []experiment.Guardrail{}
	}
	guardrails, err = json.Marshal(g)
	return analysis, guardrails, err
}

func compactJSON(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func scheduleTimes(s *experiment.Schedule) (start, end *time.Time) {
	if s == nil {
		return nil, nil
	}
	return s.StartAt, s.EndAt
}

func productGroup(p *experiment.ProductGroup) (id, name *string) {
	if p == nil {
		return nil, nil
	}
	return &p.ID, &p.Name
}

func metricPtr(m *experiment.Metric) *string {
	if m == nil {
		return nil
	}
	s := string(*m)
	return &s
}

func jsonOrNil(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func statusStrings(xs []experiment.Status) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func typeStrings(xs []experiment.Type) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// The methods below are the repository as the rest of Lift sees it: reads on
// the DB, writes on the Tx that DB.Write hands out (so audit and idempotency
// ride in the same transaction).

// FindTestByID reads one test of the shop (experiment_not_found otherwise).
func (db *DB) FindTestByID(ctx context.Context, shopID, id int64) (*experiment.Test, error) {
	return findTestByID(ctx, db.pool, shopID, id, false)
}

// FindTests lists a shop's tests newest first and reports whether more follow.
func (db *DB) FindTests(ctx context.Context, shopID int64, f experiment.Filter) ([]*experiment.Test, bool, error) {
	return findTests(ctx, db.pool, shopID, testFilter{Filter: f})
}

// Catalog is the shop catalog mirror that validation reads.
func (db *DB) Catalog() experiment.Catalog { return Catalog{Q: db.pool} }

// FindTestForUpdate reads a test and locks its row until the write ends, so
// concurrent changes to one test serialise.
func (tx *Tx) FindTestForUpdate(ctx context.Context, shopID, id int64) (*experiment.Test, error) {
	return findTestByID(ctx, tx.tx, shopID, id, true)
}

// CreateTest inserts t with its groups and sets t.ID.
func (tx *Tx) CreateTest(ctx context.Context, t *experiment.Test) error {
	return createTest(ctx, tx.tx, t)
}

// SaveTest writes t's mutable fields and groups.
func (tx *Tx) SaveTest(ctx context.Context, t *experiment.Test) error { return saveTest(ctx, tx.tx, t) }

// SetChecksPending marks whether asynchronous launch checks run for a test.
func (tx *Tx) SetChecksPending(ctx context.Context, shopID, id int64, pending bool) error {
	return setChecksPending(ctx, tx.tx, shopID, id, pending, tx.now)
}

// Catalog reads the catalog mirror inside the transaction.
func (tx *Tx) Catalog() experiment.Catalog { return Catalog{Q: tx.tx} }

// LiveTests lists the shop's active and paused tests after taking the
// shop's launch lock (transaction-scoped, advisory: only launches take it,
// so it orders nothing else). The list is read after the lock, and
// transactions read committed rows, so a launch committed while this one
// waited is in it.
func (tx *Tx) LiveTests(ctx context.Context, shopID int64) ([]*experiment.Test, error) {
	if _, err := tx.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('lift.launch:' || $1::bigint))`, shopID); err != nil {
		return nil, fmt.Errorf("store.LiveTests: %w", err)
	}
	tests, _, err := findTests(ctx, tx.tx, shopID, testFilter{Filter: experiment.Filter{
		Statuses: []experiment.Status{experiment.StatusActive, experiment.StatusPaused}, Limit: math.MaxInt32 - 1}})
	return tests, err
}

// ImportCatalog replaces the shop's catalog mirror with f.
func (tx *Tx) ImportCatalog(ctx context.Context, shopID int64, f *CatalogFile) error {
	return importCatalog(ctx, tx.tx, shopID, f)
}

// Experiments is experiment.Repository over Postgres: the reads on the pool,
// the unit of work on DB.Write, whose *Tx is the experiment.Tx.
type Experiments struct{ DB *DB }

var (
	_ experiment.Repository = Experiments{}
	_ experiment.Tx         = (*Tx)(nil)
)

// Write implements experiment.Repository with DB.Write: one transaction for
// the change, its audit record and the Idempotency-Key's response.
func (r Experiments) Write(ctx context.Context, meta experiment.WriteMeta,
	fn func(ctx context.Context, tx experiment.Tx) (experiment.WriteResult, error)) (experiment.WriteResult, error) {
	return r.DB.Write(ctx, meta, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) { return fn(ctx, tx) })
}

// FindShopByID implements experiment.Repository.
func (r Experiments) FindShopByID(ctx context.Context, shopID int64) (*experiment.Shop, error) {
	return r.DB.FindShopByID(ctx, shopID)
}

// FindTestByID implements experiment.Repository.
func (r Experiments) FindTestByID(ctx context.Context, shopID, id int64) (*experiment.Test, error) {
	return r.DB.FindTestByID(ctx, shopID, id)
}

// FindTests implements experiment.Repository.
func (r Experiments) FindTests(ctx context.Context, shopID int64, f experiment.Filter) ([]*experiment.Test, bool, error) {
	return r.DB.FindTests(ctx, shopID, f)
}

// Catalog implements experiment.Repository.
func (r Experiments) Catalog() experiment.Catalog { return r.DB.Catalog() }
