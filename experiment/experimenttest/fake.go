// Package experimenttest holds what tests of experiment.Service share: an
// in-memory fake of every port the service declares, and the use-case suite
// (suite.go) that runs against the fake in package experiment and against
// Postgres in package store — the same cases on both, as pkgsite runs its
// API tests on "fake" and "db".
package experimenttest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
)

// AuditRecord is one unit of work a repository kept.
type AuditRecord struct {
	ShopID     int64
	Action     string
	Actor      string
	ResourceID string
	Reason     string
}

// Repo is an in-memory experiment.Repository. A unit of work runs on a copy
// of the tests and replaces them only when it succeeds, so a failed unit
// leaves nothing behind; units run one at a time, as row locks would make
// them on one test.
type Repo struct {
	now experiment.Clock

	wmu      sync.Mutex // one unit of work at a time
	mu       sync.Mutex // guards the fields below
	shops    map[int64]*experiment.Shop
	tests    map[int64]*experiment.Test
	catalogs map[int64]*experiment.CatalogView
	audit    []AuditRecord
	claims   []experiment.WriteResult // responses kept for Idempotency-Key claims
	released map[int64]time.Time      // test id → when its platform resources went
	warnings map[int64][]experiment.Finding
	nextID   int64
}

// FindTestWarnings implements experiment.TestWarningReader.
func (r *Repo) FindTestWarnings(_ context.Context, _, testID int64) ([]experiment.Finding, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]experiment.Finding(nil), r.warnings[testID]...), nil
}

// SetLiftRates says whether a zone of the shop's catalog offers Lift
// rates, as a refresh would find it.
func (r *Repo) SetLiftRates(shopID int64, zoneID string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	z := r.catalogs[shopID].Zones[zoneID]
	z.LiftRates = on
	r.catalogs[shopID].Zones[zoneID] = z
}

// NewRepo returns an empty repository whose units of work are stamped by now.
func NewRepo(now experiment.Clock) *Repo {
	return &Repo{now: now, shops: map[int64]*experiment.Shop{}, tests: map[int64]*experiment.Test{},
		catalogs: map[int64]*experiment.CatalogView{}, released: map[int64]time.Time{}}
}

// AddShop installs a shop with the demo catalog (experiment/catalogdata) and
// returns it with its id and the catalog's currency.
func (r *Repo) AddShop(s experiment.Shop) (*experiment.Shop, error) {
	view, currency, err := demoCatalog()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	s.ID, s.Currency = r.nextID, currency
	r.shops[s.ID] = &s
	r.catalogs[s.ID] = view
	out := s
	return &out, nil
}

// PutZone adds a delivery zone to the shop's catalog mirror, or replaces
// the one of its id.
func (r *Repo) PutZone(shopID int64, z experiment.Zone) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.catalogs[shopID].Zones[z.ID] = z
}

// UpdateShop replaces a shop's settings.
func (r *Repo) UpdateShop(s experiment.Shop) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shops[s.ID] = &s
}

// Audit lists a shop's units of work, newest first.
func (r *Repo) Audit(shopID int64) []AuditRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []AuditRecord
	for i := len(r.audit) - 1; i >= 0; i-- {
		if r.audit[i].ShopID == shopID {
			out = append(out, r.audit[i])
		}
	}
	return out
}

// Claims lists the responses completed for Idempotency-Key claims, oldest
// first.
func (r *Repo) Claims() []experiment.WriteResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]experiment.WriteResult(nil), r.claims...)
}

// Write implements experiment.Repository.
func (r *Repo) Write(ctx context.Context, meta experiment.WriteMeta, fn func(ctx context.Context, tx experiment.Tx) (experiment.WriteResult, error)) (experiment.WriteResult, error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	tx := &fakeTx{repo: r, tests: make(map[int64]*experiment.Test, len(r.tests)), now: r.now().UTC(),
		warnings: make(map[int64][]experiment.Finding, len(r.warnings))}
	for id, t := range r.tests {
		tx.tests[id] = t
	}
	for id, w := range r.warnings {
		tx.warnings[id] = append([]experiment.Finding(nil), w...)
	}
	r.mu.Unlock()
	res, err := fn(ctx, tx)
	if err != nil {
		return res, err
	}
	if res.ShopID == 0 {
		res.ShopID = meta.ShopID
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tests, r.warnings = tx.tests, tx.warnings
	for id := range tx.relaunched {
		delete(r.released, id)
	}
	maps.Copy(r.released, tx.released)
	r.nextID = max(r.nextID, tx.lastID)
	r.audit = append(r.audit, AuditRecord{ShopID: res.ShopID, Action: meta.Action,
		Actor: experiment.ActorFrom(ctx).Name, ResourceID: res.ResourceID, Reason: meta.Reason})
	if _, ok := experiment.ClaimFrom(ctx); ok {
		r.claims = append(r.claims, res)
	}
	return res, nil
}

// FindShopByID implements experiment.Repository.
func (r *Repo) FindShopByID(_ context.Context, shopID int64) (*experiment.Shop, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.shops[shopID]
	if !ok {
		return nil, experiment.Errorf(experiment.KindNotFound, "shop_not_found", "No shop with id %d.", shopID)
	}
	out := *s
	return &out, nil
}

// FindTestByID implements experiment.Repository.
func (r *Repo) FindTestByID(_ context.Context, shopID, id int64) (*experiment.Test, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return findTest(r.tests, shopID, id)
}

// FindTests implements experiment.Repository.
func (r *Repo) FindTests(_ context.Context, shopID int64, f experiment.Filter) ([]*experiment.Test, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*experiment.Test
	for _, t := range r.tests {
		if t.ShopID == shopID && matches(t, f) {
			out = append(out, cloneTest(t))
		}
	}
	sort.Slice(out, func(i, j int) bool { return newer(out[i], out[j]) })
	limit := f.Limit
	if limit <= 0 {
		limit = 10
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// Catalog implements experiment.Repository.
func (r *Repo) Catalog() experiment.Catalog { return catalog{r: r} }

// ReleasesDue implements experiment.Repository.
func (r *Repo) ReleasesDue(_ context.Context, endedBefore time.Time, afterID int64, limit int) ([]experiment.TestRef, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []experiment.TestRef
	for _, t := range r.tests {
		ended := t.UpdatedAt
		if t.EndedAt != nil {
			ended = *t.EndedAt
		}
		_, done := r.released[t.ID]
		if t.ID > afterID && !done && (t.Status == experiment.StatusEnded || t.Status == experiment.StatusArchived ||
			t.Status == experiment.StatusFailed) &&
			!ended.After(endedBefore) && r.shops[t.ShopID].Installed() {
			out = append(out, experiment.TestRef{ShopID: t.ShopID, TestID: t.ID})
		}
	}
	slices.SortFunc(out, func(a, b experiment.TestRef) int { return cmp.Compare(a.TestID, b.TestID) })
	return out[:min(len(out), limit)], nil
}

// Released reports when a test was marked released, if it was.
func (r *Repo) Released(testID int64) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.released[testID]
	return at, ok
}

func newer(a, b *experiment.Test) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

func matches(t *experiment.Test, f experiment.Filter) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, t.Status) || len(f.Types) > 0 && !slices.Contains(f.Types, t.Type) {
		return false
	}
	if f.Scheduled != nil && *f.Scheduled != t.Scheduled() {
		return false
	}
	c := t.CreatedAt
	if f.CreatedGT != nil && !c.After(*f.CreatedGT) || f.CreatedGE != nil && c.Before(*f.CreatedGE) ||
		f.CreatedLT != nil && !c.Before(*f.CreatedLT) || f.CreatedLE != nil && c.After(*f.CreatedLE) {
		return false
	}
	return f.After == nil || newer(&experiment.Test{CreatedAt: f.After.CreatedAt, ID: f.After.ID}, t)
}

func findTest(tests map[int64]*experiment.Test, shopID, id int64) (*experiment.Test, error) {
	t, ok := tests[id]
	if !ok || t.ShopID != shopID {
		return nil, experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test with id %d.", id)
	}
	return cloneTest(t), nil
}

// fakeTx is a unit of work on a copy of the tests.
type fakeTx struct {
	repo     *Repo
	tests    map[int64]*experiment.Test
	now      time.Time
	lastID   int64
	released map[int64]time.Time
	// relaunched are tests this unit made active again: a release before
	// no longer stands (the store clears platform_released_at).
	relaunched map[int64]bool
	warnings   map[int64][]experiment.Finding
}

// SetTestWarning implements experiment.Tx.
func (tx *fakeTx) SetTestWarning(_ context.Context, _, testID int64, w experiment.Finding) error {
	w.Severity = experiment.SeverityWarning
	list := tx.warnings[testID]
	if i := slices.IndexFunc(list, func(f experiment.Finding) bool { return f.Code == w.Code }); i >= 0 {
		list[i].Message, list[i].Param = w.Message, w.Param
		return nil
	}
	tx.warnings[testID] = append(list, w)
	return nil
}

// ClearTestWarning implements experiment.Tx.
func (tx *fakeTx) ClearTestWarning(_ context.Context, testID int64, code string) error {
	tx.warnings[testID] = slices.DeleteFunc(tx.warnings[testID], func(f experiment.Finding) bool { return f.Code == code })
	return nil
}

func (tx *fakeTx) FindTestForUpdate(_ context.Context, shopID, id int64) (*experiment.Test, error) {
	return findTest(tx.tests, shopID, id)
}

func (tx *fakeTx) CreateTest(_ context.Context, t *experiment.Test) error {
	seen := map[int]bool{}
	for _, g := range t.Groups {
		if seen[g.Index] {
			return experiment.Errorf(experiment.KindConflict, "invalid_request", "Test group index %d appears twice.", g.Index)
		}
		seen[g.Index] = true
	}
	tx.repo.mu.Lock()
	tx.lastID = max(tx.repo.nextID, tx.lastID) + 1
	tx.repo.mu.Unlock()
	t.ID = tx.lastID
	tx.tests[t.ID] = cloneTest(t)
	return nil
}

func (tx *fakeTx) SaveTest(_ context.Context, t *experiment.Test) error {
	cur, ok := tx.tests[t.ID]
	if !ok || cur.ShopID != t.ShopID {
		return experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test with id %d.", t.ID)
	}
	next := cloneTest(t)
	// What the store never rewrites after a create.
	next.Type, next.CreatedAt, next.ProductGroup, next.HasForceAssignRules = cur.Type, cur.CreatedAt, cur.ProductGroup, cur.HasForceAssignRules
	tx.tests[t.ID] = next
	if next.Status == experiment.StatusActive {
		if tx.relaunched == nil {
			tx.relaunched = map[int64]bool{}
		}
		tx.relaunched[t.ID] = true
		delete(tx.released, t.ID)
	}
	return nil
}

func (tx *fakeTx) SetChecksPending(_ context.Context, shopID, id int64, pending bool) error {
	cur, ok := tx.tests[id]
	if !ok || cur.ShopID != shopID {
		return experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test with id %d.", id)
	}
	next := cloneTest(cur)
	next.ChecksPending, next.UpdatedAt = pending, tx.now
	tx.tests[id] = next
	return nil
}

// ForgetResults implements experiment.Tx. The snapshots and custom queries
// it drops are the results domain's rows, which this fake does not keep.
func (tx *fakeTx) ForgetResults(_ context.Context, shopID, id int64) error {
	_, err := findTest(tx.tests, shopID, id)
	return err
}

func (tx *fakeTx) Catalog() experiment.Catalog { return catalog{r: tx.repo} }

// MarkReleased implements experiment.Tx.
func (tx *fakeTx) MarkReleased(_ context.Context, shopID, id int64, at time.Time) error {
	if _, err := findTest(tx.tests, shopID, id); err != nil {
		return err
	}
	if tx.released == nil {
		tx.released = map[int64]time.Time{}
	}
	tx.released[id] = at
	return nil
}

// LiveTests implements experiment.Tx; the fake's units run one at a time,
// which is the launch lock.
func (tx *fakeTx) LiveTests(_ context.Context, shopID int64) ([]*experiment.Test, error) {
	var out []*experiment.Test
	for _, t := range tx.tests {
		if t.ShopID == shopID && (t.Status == experiment.StatusActive || t.Status == experiment.StatusPaused) {
			out = append(out, cloneTest(t))
		}
	}
	return out, nil
}

// cloneTest copies t deeply enough that a unit of work never changes what
// another holds.
func cloneTest(t *experiment.Test) *experiment.Test {
	c := *t
	c.Groups = make([]experiment.Group, len(t.Groups))
	for i, g := range t.Groups {
		g.Content = append(json.RawMessage(nil), g.Content...)
		c.Groups[i] = g
	}
	if t.Shared != nil {
		c.Shared = make(map[string]json.RawMessage, len(t.Shared))
		for k, v := range t.Shared {
			c.Shared[k] = append(json.RawMessage(nil), v...)
		}
	}
	if t.Schedule != nil {
		s := *t.Schedule
		c.Schedule = &s
	}
	c.Audience = append(json.RawMessage(nil), t.Audience...)
	if len(t.Audience) == 0 {
		c.Audience = nil
	}
	return &c
}

// catalog is the fake catalog mirror.
type catalog struct{ r *Repo }

// Lookup implements experiment.Catalog: the named objects the shop has.
func (c catalog) Lookup(_ context.Context, shopID int64, refs experiment.CatalogRefs) (*experiment.CatalogView, error) {
	c.r.mu.Lock()
	all := c.r.catalogs[shopID]
	c.r.mu.Unlock()
	if all == nil {
		all = &experiment.CatalogView{}
	}
	v := &experiment.CatalogView{
		Products: pick(all.Products, refs.Products), Variants: pick(all.Variants, refs.Variants),
		Collections: pick(all.Collections, refs.Collections), Themes: pick(all.Themes, refs.Themes),
		Zones: pick(all.Zones, refs.Zones), Markets: pick(all.Markets, refs.Markets),
	}
	for id, x := range all.Variants {
		if slices.Contains(refs.ProductVariants, x.ProductID) {
			v.Variants[id] = x
		}
	}
	for id, z := range all.Zones {
		if (z.RestOfWorld && len(refs.ZoneCountries) > 0) || slices.ContainsFunc(z.Countries, func(c string) bool { return slices.Contains(refs.ZoneCountries, c) }) {
			v.Zones[id] = z
		}
	}
	if x, ok := all.FindDearest(); ok && refs.Dearest {
		v.Dearest = &x
	}
	v.Floors = map[string]experiment.Item{}
	for _, id := range refs.CollectionFloors {
		if f, ok := all.Floor(id); ok {
			v.Floors[id] = f
		}
	}
	return v, nil
}

func pick[V any](all map[string]V, ids []string) map[string]V {
	out := map[string]V{}
	for _, id := range ids {
		if v, ok := all[id]; ok {
			out[id] = v
		}
	}
	return out
}

// demoCatalog reads the embedded demo catalog into a view of everything.
func demoCatalog() (*experiment.CatalogView, string, error) {
	var f struct {
		Currency string `json:"currency"`
		Products []struct {
			experiment.Product
			Variants []experiment.Variant `json:"variants"`
		} `json:"products"`
		Collections []experiment.Collection `json:"collections"`
		Themes      []experiment.Theme      `json:"themes"`
		Zones       []experiment.Zone       `json:"delivery_zones"`
		Markets     []experiment.Market     `json:"markets"`
	}
	if err := json.Unmarshal(catalogdata.Demo, &f); err != nil {
		return nil, "", fmt.Errorf("experimenttest: demo catalog: %w", err)
	}
	v := &experiment.CatalogView{Products: map[string]experiment.Product{}, Variants: map[string]experiment.Variant{},
		Collections: map[string]experiment.Collection{}, Themes: map[string]experiment.Theme{},
		Zones: map[string]experiment.Zone{}, Markets: map[string]experiment.Market{}}
	for _, p := range f.Products {
		v.Products[p.ID] = p.Product
		for _, x := range p.Variants {
			x.ProductID = p.ID
			v.Variants[x.ID] = x
		}
	}
	for _, x := range f.Collections {
		v.Collections[x.ID] = x
	}
	for _, x := range f.Themes {
		v.Themes[x.ID] = x
	}
	for _, x := range f.Zones {
		v.Zones[x.ID] = x
	}
	for _, x := range f.Markets {
		v.Markets[x.ID] = x
	}
	return v, f.Currency, nil
}
