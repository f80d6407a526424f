package results_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

var start = time.Date(2026, 6, 1, 14, 0, 0, 0, time.UTC)

// bundle is a Service over one backend: the in-memory fake of every port,
// or the real Postgres and ClickHouse. Both take the same cases.
type bundle struct {
	svc    *results.Service
	cfg    results.Config
	clock  *clock
	queue  *queue
	shop   *experiment.Shop
	create func(t *testing.T, tt *experiment.Test)
	save   func(t *testing.T, tt *experiment.Test)
	plant  func(t *testing.T, tt *experiment.Test, units []plantedUnit)
	wh     *warehouse.Warehouse // the db backend's
}

var backends = []struct {
	name  string
	setup func(t *testing.T) *bundle
}{{"fake", fakeBundle}, {"db", dbBundle}}

// onEachBackend runs fn as a parallel subtest on each backend (the fakes,
// then the real stores), with a fresh bundle whose clock reads at.
func onEachBackend(t *testing.T, at time.Time, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			b := be.setup(t)
			b.clock.Set(at)
			fn(t, b)
		})
	}
}

func newConfig(b *bundle, repo results.Repository, tests results.Tests, wh results.Warehouse, dir string) {
	b.cfg = results.Config{Repo: repo, Tests: tests, Warehouse: wh, Jobs: b.queue, Now: b.clock.Now,
		ExportDir: dir, SigningSecret: []byte("secret-one")}
	b.svc = results.New(b.cfg)
}

func fakeBundle(t *testing.T) *bundle {
	b := &bundle{clock: &clock{now: start}, queue: &queue{}}
	m := newMemory(b.clock.Now)
	b.shop = &experiment.Shop{ID: 1, Domain: "fake.myshopify.com", Timezone: "America/New_York", Currency: "EUR"}
	m.shops[1] = b.shop
	b.create = func(_ *testing.T, tt *experiment.Test) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.nextID++
		tt.ID = m.nextID
		c := *tt
		m.tests[tt.ID] = &c
	}
	b.save = func(_ *testing.T, tt *experiment.Test) {
		m.mu.Lock()
		defer m.mu.Unlock()
		c := *tt
		m.tests[tt.ID] = &c
	}
	b.plant = func(_ *testing.T, tt *experiment.Test, units []plantedUnit) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.units[strconv.FormatInt(tt.ID, 10)] = append(m.units[strconv.FormatInt(tt.ID, 10)], units...)
	}
	newConfig(b, m, m, m, t.TempDir())
	return b
}

func dbBundle(t *testing.T) *bundle {
	ctx := context.Background()
	b := &bundle{clock: &clock{now: start}, queue: &queue{}}
	db, err := store.Open(ctx, store.Config{URL: lifttest.PostgresURL(t), Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	addr, chdb := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: addr, Database: chdb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	b.wh = wh
	if b.shop, err = db.CreateShop(ctx, experiment.Shop{Domain: lifttest.Name("results") + ".myshopify.com", Name: "R",
		Timezone: "America/New_York", Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, fn func(ctx context.Context, tx *store.Tx) error) {
		t.Helper()
		_, err := db.Write(ctx, experiment.WriteMeta{ShopID: b.shop.ID, Action: "test.setup", ResourceType: "experiment"},
			func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
				return experiment.WriteResult{}, fn(ctx, tx)
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	b.create = func(t *testing.T, tt *experiment.Test) {
		write(t, func(ctx context.Context, tx *store.Tx) error { return tx.CreateTest(ctx, tt) })
	}
	b.save = func(t *testing.T, tt *experiment.Test) {
		write(t, func(ctx context.Context, tx *store.Tx) error { return tx.SaveTest(ctx, tt) })
	}
	b.plant = func(t *testing.T, tt *experiment.Test, units []plantedUnit) {
		exp := strconv.FormatInt(tt.ID, 10)
		var batch warehouse.Batch
		for i, u := range units {
			v := fmt.Sprintf("v%d-%d", u.group, i)
			sid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			batch.Assignments = append(batch.Assignments, warehouse.Assignment{ShopID: b.shop.ID, ExperimentID: exp, VisitorID: v,
				AssignmentID: v, SessionID: sid, TestGroup: int16(u.group), Device: u.device, Country: "US", VisitorType: "new",
				AssignedAt: u.at, ReceivedAt: u.at})
			batch.Sessions = append(batch.Sessions, warehouse.Session{ShopID: b.shop.ID, ExperimentID: exp, SessionID: sid,
				RecordID: v + "-r", VisitorID: v, SeenAt: u.at, PagePath: "/"})
			if u.orders > 0 {
				batch.Orders = append(batch.Orders, warehouse.Order{ShopID: b.shop.ID, ExperimentID: exp, OrderID: strconv.Itoa(1000 + i),
					Version: 1, TestGroup: int16(u.group), VisitorID: v, Revenue: u.revenue, Currency: "EUR", CreatedAt: u.at})
			}
			// Pre-exposure orders: a week before the assignment, recorded
			// under an earlier test.
			for k := 0; k < u.preOrders; k++ {
				batch.Orders = append(batch.Orders, warehouse.Order{ShopID: b.shop.ID, ExperimentID: exp + "-earlier",
					OrderID: fmt.Sprintf("pre-%d-%d", i, k), Version: 1, VisitorID: v, Revenue: u.preRevenue / float64(u.preOrders),
					Currency: "EUR", CreatedAt: u.at.Add(-7 * 24 * time.Hour)})
			}
		}
		if err := wh.Insert(ctx, &batch); err != nil {
			t.Fatal(err)
		}
	}
	newConfig(b, store.ResultsRepository{DB: db}, db, wh, t.TempDir())
	return b
}

// test stores a two-group test in status, started at start.
// query creates, runs and reads back a custom query of the shop's test,
// decoded; any step failing fails t.
func (b *bundle) query(t *testing.T, testID int64, req results.QueryRequest) results.QueryDoc {
	t.Helper()
	ctx := context.Background()
	q, err := b.svc.CreateQuery(ctx, b.shop, testID, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RunQuery(ctx, q.ID, true); err != nil {
		t.Fatal(err)
	}
	done, err := b.svc.FindQuery(ctx, b.shop, testID, q.ID)
	if err != nil || done.Status != results.QueryCompleted {
		t.Fatalf("query = %+v, %v", done, err)
	}
	var doc results.QueryDoc
	if err := json.Unmarshal(done.Body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func (b *bundle) test(t *testing.T, status experiment.Status) *experiment.Test {
	t.Helper()
	tt := &experiment.Test{ShopID: b.shop.ID, Type: experiment.TypeURLRedirect, Status: status, Name: "t",
		TrafficAllocation: 100, AssignmentVersion: 1, Shared: map[string]json.RawMessage{},
		Groups:    []experiment.Group{{Index: 0, Name: "Control", Split: 50}, {Index: 1, Name: "Variant", Split: 50}},
		CreatedAt: start.Add(-time.Hour), UpdatedAt: start}
	if status != experiment.StatusDraft && status != experiment.StatusPreview {
		s := start
		tt.StartedAt = &s
	}
	b.create(t, tt)
	return tt
}

func (b *bundle) setStatus(t *testing.T, tt *experiment.Test, status experiment.Status) {
	t.Helper()
	now := b.clock.Now()
	tt.Status, tt.UpdatedAt = status, now
	if status == experiment.StatusEnded {
		tt.EndedAt = &now
	}
	b.save(t, tt)
}

// visitors are n visitors a group on desktop; every tenth orders for 20.
func visitors(n int) []plantedUnit {
	var out []plantedUnit
	for g := 0; g < 2; g++ {
		for i := 0; i < n; i++ {
			u := plantedUnit{group: g, device: "desktop", at: start.Add(time.Duration(i) * time.Second)}
			if i%10 == 0 {
				u.orders, u.revenue = 1, 20
			}
			out = append(out, u)
		}
	}
	return out
}

func wantCode(t *testing.T, err error, code, param string) {
	t.Helper()
	e, ok := experiment.AsError(err)
	if !ok || e.Code != code || e.Param != param {
		t.Fatalf("err = %v, want %s (param %q)", err, code, param)
	}
}

func TestServiceSnapshots(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := be.setup(t)
			tt := b.test(t, experiment.StatusActive)
			b.plant(t, tt, visitors(120))
			due := func(at time.Time) []results.SnapshotDue {
				t.Helper()
				d, err := b.svc.SnapshotsDue(ctx, at, 10)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			if d := due(start.Add(14 * time.Minute)); len(d) != 0 {
				t.Fatalf("due 14 minutes after the launch: %+v", d)
			}
			if d := due(start.Add(15 * time.Minute)); len(d) != 1 || d[0].TestID != tt.ID || d[0].Final {
				t.Fatalf("due 15 minutes after the launch: %+v", d)
			}
			if l, err := b.svc.LatestSnapshot(ctx, b.shop, tt.ID); err != nil || l.Snapshot != nil {
				t.Fatalf("before the first snapshot: %+v, %v", l, err)
			}
			at := start.Add(15 * time.Minute)
			b.clock.Set(at)
			if err := b.svc.TakeSnapshot(ctx, b.shop.ID, tt.ID, false); err != nil {
				t.Fatal(err)
			}
			l, err := b.svc.LatestSnapshot(ctx, b.shop, tt.ID)
			if err != nil || l.Snapshot == nil || !l.Snapshot.ComputedAt.Equal(at) || l.IsRefreshing ||
				l.NextRefreshAt == nil || !l.NextRefreshAt.Equal(at.Add(6*time.Hour)) {
				t.Fatalf("latest = %+v, %v", l, err)
			}
			var doc results.SnapshotDoc
			if err := json.Unmarshal(l.Snapshot.Body, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.TestGroups) != 2 || doc.TestGroups[0].SampleSize != 120 || doc.TestGroups[1].Orders != 12 ||
				doc.Breakdown.Dimension != "device" || len(doc.Breakdown.Rows) != 2 || doc.DateRange.GTE != "2026-06-01" {
				t.Fatalf("snapshot = %s", l.Snapshot.Body)
			}
			if sum, err := b.svc.Summary(ctx, b.shop.ID, tt.ID); err != nil || !strings.Contains(string(sum), `"primary_metric":"conversion_rate"`) {
				t.Fatalf("summary = %s, %v", sum, err)
			}
			if d := due(at.Add(6*time.Hour - time.Second)); len(d) != 0 {
				t.Fatalf("due within 6 hours: %+v", d)
			}
			b.clock.Set(at.Add(6 * time.Hour))
			if l, _ := b.svc.LatestSnapshot(ctx, b.shop, tt.ID); !l.IsRefreshing {
				t.Fatalf("6 hours on, not refreshing: %+v", l)
			}

			b.setStatus(t, tt, experiment.StatusPaused)
			if err := b.svc.TakeSnapshot(ctx, b.shop.ID, tt.ID, false); err != nil {
				t.Fatal(err)
			}
			if l, _ := b.svc.LatestSnapshot(ctx, b.shop, tt.ID); !l.Snapshot.ComputedAt.Equal(at) || l.NextRefreshAt != nil || l.IsRefreshing {
				t.Fatalf("paused: %+v, want the numbers it had and no refresh", l)
			}
			b.setStatus(t, tt, experiment.StatusEnded)
			if d := due(b.clock.Now()); len(d) != 1 || !d[0].Final {
				t.Fatalf("due after the end: %+v", d)
			}
			if err := b.svc.TakeSnapshot(ctx, b.shop.ID, tt.ID, true); err != nil {
				t.Fatal(err)
			}
			if l, _ := b.svc.LatestSnapshot(ctx, b.shop, tt.ID); !l.Snapshot.Final || l.NextRefreshAt != nil {
				t.Fatalf("final: %+v", l)
			}
			if d := due(b.clock.Now()); len(d) != 0 {
				t.Fatalf("due after the final one: %+v", d)
			}

			draft := b.test(t, experiment.StatusDraft)
			_, err = b.svc.LatestSnapshot(ctx, b.shop, draft.ID)
			wantCode(t, err, "results_not_available", "id")
			_, err = b.svc.LatestSnapshot(ctx, b.shop, 999999)
			wantCode(t, err, "experiment_not_found", "")
			if err := b.svc.TakeSnapshot(ctx, b.shop.ID, 999999, false); err != nil {
				t.Fatalf("a snapshot of a deleted test = %v, want nothing done", err)
			}
		})
	}
}

func TestServiceQueries(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := be.setup(t)
			b.clock.Set(start.Add(time.Hour))
			tt := b.test(t, experiment.StatusActive)
			b.plant(t, tt, visitors(50))
			str := func(s string) *string { return &s }
			for _, c := range []struct {
				name        string
				req         results.QueryRequest
				code, param string
			}{
				{"UnknownDimension", results.QueryRequest{Breakdown: []string{"os"}}, "invalid_breakdown_dimension", "breakdown[0]"},
				{"DuplicateDimension", results.QueryRequest{Breakdown: []string{"device", "device"}}, "duplicate_breakdown_dimension", "breakdown[1]"},
				{"TooMany", results.QueryRequest{Breakdown: []string{"device", "country", "date", "utm_source"}}, "breakdown_too_many_dimensions", "breakdown"},
				{"Reversed", results.QueryRequest{DateRange: &results.DateRangeRequest{GTE: str("2026-06-02"), LTE: str("2026-06-01")}}, "invalid_date_range", "date_range"},
				{"BeforeStart", results.QueryRequest{DateRange: &results.DateRangeRequest{LTE: str("2026-05-01")}}, "date_range_out_of_bounds", "date_range.lte"},
				{"Basis", results.QueryRequest{SampleBasis: str("orders")}, "sample_basis_unsupported", "sample_basis"},
				{"ProductGroup", results.QueryRequest{ProductGroupID: str("pg")}, "product_group_not_found", "product_group_id"},
				{"ProductAlone", results.QueryRequest{ProductID: str("1")}, "product_id_requires_product_group", "product_id"},
			} {
				t.Run(c.name, func(t *testing.T) {
					_, err := b.svc.CreateQuery(ctx, b.shop, tt.ID, c.req)
					wantCode(t, err, c.code, c.param)
				})
			}
			draft := b.test(t, experiment.StatusDraft)
			_, err := b.svc.CreateQuery(ctx, b.shop, draft.ID, results.QueryRequest{})
			wantCode(t, err, "results_not_available", "id")

			run := func(req results.QueryRequest) *results.ResultQuery {
				t.Helper()
				q, err := b.svc.CreateQuery(ctx, b.shop, tt.ID, req)
				if err != nil || q.Status != results.QueryPending {
					t.Fatalf("create = %+v, %v", q, err)
				}
				if got := b.queue.queries[len(b.queue.queries)-1]; got != q.ID {
					t.Fatalf("queued %s, want %s", got, q.ID)
				}
				if err := b.svc.RunQuery(ctx, q.ID, true); err != nil {
					t.Fatal(err)
				}
				done, err := b.svc.FindQuery(ctx, b.shop, tt.ID, q.ID)
				if err != nil || done.Status != results.QueryCompleted {
					t.Fatalf("query = %+v, %v", done, err)
				}
				return done
			}
			first := run(results.QueryRequest{Breakdown: []string{"device"}, DateRange: &results.DateRangeRequest{GTE: str("2026-05-01")}})
			var doc results.QueryDoc
			if err := json.Unmarshal(first.Body, &doc); err != nil {
				t.Fatal(err)
			}
			if !doc.FilterStale || doc.DateRange.GTE != "2026-06-01" || doc.Breakdown == nil || len(doc.Breakdown.Rows) != 2 ||
				doc.Breakdown.Rows[0]["sample_size"] != float64(50) || doc.Breakdown.Rows[0]["dimension_value"] != "desktop" {
				t.Fatalf("query = %s", first.Body)
			}
			b.clock.Set(start.Add(time.Hour + 59*time.Minute))
			again := run(results.QueryRequest{Breakdown: []string{"device"}, DateRange: &results.DateRangeRequest{GTE: str("2026-05-01")}})
			if again.ID == first.ID || !again.ComputedAt.Equal(*first.ComputedAt) {
				t.Fatalf("within the hour: computed %v, first %v", again.ComputedAt, first.ComputedAt)
			}
			_, err = b.svc.FindQuery(ctx, b.shop, draft.ID, first.ID)
			wantCode(t, err, "results_query_not_found", "")
		})
	}
}

func TestServiceExports(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := be.setup(t)
			tt := b.test(t, experiment.StatusActive)
			b.plant(t, tt, visitors(10))
			render := func(x *results.Export) (int, []byte, error) {
				body, err := json.Marshal(x.Status)
				return 202, body, err
			}

			draft := b.test(t, experiment.StatusDraft)
			_, _, err := b.svc.CreateExport(ctx, b.shop, draft.ID, render)
			wantCode(t, err, "export_not_available", "")
			status, body, err := b.svc.CreateExport(ctx, b.shop, tt.ID, render)
			if err != nil || status != 202 || string(body) != `"pending"` || len(b.queue.exports) != 1 {
				t.Fatalf("create = %s, %v (queued %v)", body, err, b.queue.exports)
			}
			id := b.queue.exports[0]
			b.queue.down = true
			_, _, err = b.svc.CreateExport(ctx, b.shop, tt.ID, render)
			wantCode(t, err, "internal_error", "")
			if _, err := b.svc.FindExport(ctx, b.shop.ID, b.queue.refused[0]); err == nil {
				t.Fatal("an export that could not be queued was created")
			}
			b.queue.down = false
			if err := b.svc.RunExport(ctx, b.shop.ID, id, true); err != nil {
				t.Fatal(err)
			}
			x, err := b.svc.FindExport(ctx, b.shop.ID, id)
			if err != nil || x.Status != results.ExportCompleted || x.RowCount == nil || *x.RowCount != 2 {
				t.Fatalf("export = %+v, %v", x, err)
			}
			if _, err := b.svc.FindExport(ctx, b.shop.ID+1, id); err == nil {
				t.Fatal("another shop read the export")
			}

			link, exp, ok := b.svc.DownloadLink("https://lift.example", x)
			if !ok || !exp.Equal(start.Add(results.DownloadTTL)) || !strings.HasPrefix(link, "https://lift.example/v1/exports/"+id+"/download?") {
				t.Fatalf("link = %s %v %v", link, exp, ok)
			}
			u, _ := url.Parse(link)
			open := func(svc *results.Service, expires, sig string) (string, error) {
				t.Helper()
				d, err := svc.OpenDownload(ctx, id, expires, sig)
				if err != nil {
					return "", err
				}
				defer d.File.Close()
				raw, err := io.ReadAll(d.File)
				return string(raw), err
			}
			csvText, err := open(b.svc, u.Query().Get("expires"), u.Query().Get("signature"))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
			if err != nil || len(rows) != 3 || strings.Join(rows[0], ",") != strings.Join(results.ExportHeader, ",") || rows[1][3] != "Control" {
				t.Fatalf("csv = %q, %v", csvText, err)
			}
			// Another node (or this one after a restart) with the same secret
			// honours the link; one with another secret does not.
			other := b.cfg
			if _, err := open(results.New(other), u.Query().Get("expires"), u.Query().Get("signature")); err != nil {
				t.Fatalf("same secret, another service: %v", err)
			}
			other.SigningSecret = []byte("secret-two")
			_, err = open(results.New(other), u.Query().Get("expires"), u.Query().Get("signature"))
			wantCode(t, err, "export_not_found", "")

			far := start.Add(results.DownloadTTL + time.Minute).Unix()
			farLink, _ := url.Parse(results.DownloadPath(b.cfg.SigningSecret, id, time.Unix(far, 0)))
			_, err = open(b.svc, farLink.Query().Get("expires"), farLink.Query().Get("signature"))
			wantCode(t, err, "invalid_request", "expires")
			_, err = open(b.svc, u.Query().Get("expires"), "0"+u.Query().Get("signature"))
			wantCode(t, err, "export_not_found", "")
			b.clock.Set(exp.Add(time.Second))
			_, err = open(b.svc, u.Query().Get("expires"), u.Query().Get("signature"))
			wantCode(t, err, "export_not_found", "")
		})
	}
}

// TestSnapshotDueAfterAChange: a running test changed after its latest
// snapshot (here its analysis options and a guardrail) is due again at
// once, named by the change, not 6 hours later; the fresh snapshot uses the
// new options, and then nothing is due (stats audit S9).
func TestSnapshotDueAfterAChange(t *testing.T) {
	t.Parallel()
	onEachBackend(t, start, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		tt := b.test(t, experiment.StatusActive)
		b.plant(t, tt, visitors(120))
		at := start.Add(15 * time.Minute)
		b.clock.Set(at)
		if err := b.svc.TakeSnapshot(ctx, b.shop.ID, tt.ID, false); err != nil {
			t.Fatal(err)
		}
		changed := at.Add(time.Hour)
		tt.Analysis = experiment.AnalysisOptions{Sequential: true, Winsorize: 0.99, Correction: experiment.CorrectionNone}
		tt.UpdatedAt = changed
		tt.Guardrails = []experiment.Guardrail{{Metric: "conversion_rate", MaxHarm: 0.1}}
		b.save(t, tt)
		d, err := b.svc.SnapshotsDue(ctx, changed.Add(time.Minute), 10)
		if err != nil || len(d) != 1 || d[0].TestID != tt.ID || d[0].Final || d[0].ChangedAt == nil || !d[0].ChangedAt.Equal(changed) {
			t.Fatalf("due after the change: %+v, %v", d, err)
		}
		b.clock.Set(changed.Add(time.Minute))
		if doc := takeSnapshot(t, b.svc, b, tt); !doc.Analysis.Requested.Sequential || len(doc.Guardrails) != 1 {
			t.Errorf("the fresh snapshot's analysis %s, guardrails %s: want the new options", mustJSON(doc.Analysis), mustJSON(doc.Guardrails))
		}
		if d, err := b.svc.SnapshotsDue(ctx, changed.Add(2*time.Minute), 10); err != nil || len(d) != 0 {
			t.Fatalf("due again right after the fresh snapshot: %+v, %v", d, err)
		}
	})
}
