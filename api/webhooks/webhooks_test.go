package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/shopspring/decimal"

	"github.com/liftab/lift/api"
	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/jobs"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

func init() { gin.SetMode(gin.TestMode) }

const secret = "whsec-test"

// maxBody is the body limit of the surface under test.
const maxBody = 64 << 10

// bundle is a real webhook surface: the HTTP handler over httptest, real
// Postgres, Redis and ClickHouse, and an asynq worker in this process that
// runs the webhook jobs.
type bundle struct {
	db  *store.DB
	wh  *warehouse.Warehouse
	svc *experiment.WebhookService
	srv *httptest.Server
}

func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := context.Background()
	db := lifttest.DB(t)
	chAddr, chDB := lifttest.ClickHouse(t)
	wh, err := warehouse.Open(ctx, warehouse.Config{Addr: chAddr, Database: chDB})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	addr, rdb := lifttest.Redis(t)
	rc := jobs.Redis{Addr: addr, DB: rdb}
	jc := jobs.NewClient(rc)
	t.Cleanup(func() { jc.Close() })

	// One service for the surface and the worker, wired as in cmd/lift;
	// APP_UNINSTALLED ends tests through the API's lifecycle.
	tests := experiment.NewService(experiment.ServiceConfig{Repository: store.Experiments{DB: db}})
	svc := &experiment.WebhookService{Repo: store.WebhookRepo{DB: db}, Orders: warehouse.WebhookOrders{W: wh},
		Queue: jobs.WebhookQueue{Jobs: jc}, EndTest: func(ctx context.Context, shop *experiment.Shop, id int64) error {
			_, err := tests.Apply(ctx, shop, id, experiment.ActionEnd, nil)
			return err
		}}
	w := jobs.NewWorker(rc, jobs.WorkerConfig{Concurrency: 4})
	jobs.HandleWebhooks(w, svc)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)

	r := gin.New()
	(&webhooks.Handler{Service: svc, Secret: []byte(secret), MaxBodyBytes: maxBody}).Mount(r)
	// A probe behind the v1 auth path shows what the shop's tokens do.
	r.GET("/probe", api.UseSurface(api.SurfaceV1), api.Authenticate(db), func(c *gin.Context) { c.Status(http.StatusNoContent) })
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return &bundle{db: db, wh: wh, svc: svc, srv: srv}
}

var shopSeq atomic.Int64

// newShop installs an API-enabled shop with the demo catalog (variant costs
// 44001 → 9.50, 44005 → 41.00).
func (b *bundle) newShop(t *testing.T) *experiment.Shop {
	t.Helper()
	ctx := context.Background()
	domain := fmt.Sprintf("wh-%d-%d.myshopify.com", time.Now().UnixNano(), shopSeq.Add(1))
	s, err := b.db.CreateShop(ctx, experiment.Shop{Domain: domain, Name: "Before"})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if s, err = b.db.UpdateShop(ctx, s.ID, store.ShopUpdate{APIEnabled: &yes}); err != nil {
		t.Fatal(err)
	}
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.db.ImportCatalog(ctx, s.ID, f); err != nil {
		t.Fatal(err)
	}
	return s
}

const (
	dawn    = "gid://shopify/OnlineStoreTheme/1201"
	holiday = "gid://shopify/OnlineStoreTheme/1202"
	groups  = `[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,"content":%s}]`
)

func priceBody(name string) string {
	return fmt.Sprintf(`{"type":"price","name":%q,"shared":{"price":{"product_ids":["gid://shopify/Product/8101"]}},"test_groups":`+groups+`}`,
		name, `{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/44001","price":{"amount":"19.00","currency":"USD"}}]}`)
}

func templateBody() string {
	return fmt.Sprintf(`{"type":"template","name":"tpl","shared":{"template":{"theme_id":%q}},"test_groups":`+groups+`}`, dawn, `{"template":"product.alternate"}`)
}

func themeBody() string {
	return fmt.Sprintf(`{"type":"theme","name":"thm","shared":{"theme":{}},"test_groups":`+groups+`}`, fmt.Sprintf(`{"theme_id":%q}`, holiday))
}

// newTest stores a test in the given status (active and paused ones as
// launched), bypassing the platform: these tests are about webhooks.
func (b *bundle) newTest(t *testing.T, shop *experiment.Shop, body string, status experiment.Status) *experiment.Test {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	tt, err := experiment.ParseCreate([]byte(body), shop.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	tt.Status = status
	if status != experiment.StatusDraft && status != experiment.StatusPreview {
		tt.StartedAt = &now
	}
	_, err = b.db.Write(context.Background(), experiment.WriteMeta{ShopID: shop.ID, Action: "experiment.create", ResourceType: "experiment"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{}, tx.CreateTest(ctx, tt)
		})
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// deliver posts a delivery signed with sig ("" signs it with the secret).
func (b *bundle) deliver(t *testing.T, shop *experiment.Shop, topic, id, body, sig string) (int, string) {
	t.Helper()
	if sig == "" {
		sig = webhooks.Sign([]byte(secret), []byte(body))
	}
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/api/webhooks", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooks.HeaderSignature, sig)
	req.Header.Set(webhooks.HeaderTopic, topic)
	req.Header.Set(webhooks.HeaderShop, shop.Domain)
	req.Header.Set(webhooks.HeaderID, id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// process delivers a signed webhook, requires 200 with an empty body, and
// waits (with a deadline) until the worker has processed it.
func (b *bundle) process(t *testing.T, shop *experiment.Shop, topic, id, body string) *store.Delivery {
	t.Helper()
	status, raw := b.deliver(t, shop, topic, id, body, "")
	if status != http.StatusOK || raw != "" {
		t.Fatalf("delivery %s = %d %q, want 200 with an empty body", id, status, raw)
	}
	return b.waitProcessed(t, shop.ID, id)
}

func (b *bundle) waitProcessed(t *testing.T, shopID int64, id string) *store.Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		d, err := b.db.FindDelivery(context.Background(), shopID, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.ProcessedAt != nil {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %s not processed before the deadline", id)
		}
		<-tick.C
	}
}

func (b *bundle) orders(t *testing.T, shopID, testID int64) []warehouse.ExportRow {
	t.Helper()
	var out []warehouse.ExportRow
	_, err := b.wh.ExportOrders(context.Background(), shopID, fmt.Sprint(testID), func(r *warehouse.ExportRow) error {
		out = append(out, *r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rawOrderRows counts stored rows of an order, before any folding: it shows
// how many times the order was written.
func (b *bundle) rawOrderRows(t *testing.T, shopID int64, orderID string) uint64 {
	t.Helper()
	var n uint64
	err := b.wh.Conn().QueryRow(context.Background(),
		fmt.Sprintf("SELECT count() FROM %s.orders WHERE shop_id = ? AND order_id = ?", b.wh.Database()), shopID, orderID).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// orderJSON is an ORDERS_CREATE / ORDERS_EDITED body: two lines, variant
// 44001 ×2 at 28.00 and 44005 ×1 at 98.00.
func orderJSON(id, updatedAt, extra, attrs string) string {
	return fmt.Sprintf(`{"id":%s,"created_at":"2026-06-01T10:00:00Z","updated_at":%q,"total_price":"154.00","currency":"USD",
		"note_attributes":[%s],
		"line_items":[{"product_id":8101,"variant_id":44001,"quantity":2,"price":"28.00"},
		              {"product_id":8102,"variant_id":44005,"quantity":1,"price":"98.00"}]%s}`, id, updatedAt, attrs, extra)
}

func attrs(visitor, assignments string) string {
	return fmt.Sprintf(`{"name":"_lift_visitor_id","value":%q},{"name":"_lift_assignments","value":%q},{"name":"gift_note","value":"hi"}`,
		visitor, assignments)
}

func TestOrdersCreateAttributes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.newShop(t)
	fromStore := b.newTest(t, shop, priceBody("assigned in ClickHouse"), experiment.StatusActive)
	fromCart := b.newTest(t, shop, priceBody("named in the cart"), experiment.StatusActive)
	draft := b.newTest(t, shop, priceBody("never ran"), experiment.StatusDraft)
	excluded := b.newTest(t, shop, priceBody("excluded"), experiment.StatusPaused)
	now := time.Now().UTC()
	err := b.wh.Insert(ctx, &warehouse.Batch{Assignments: []warehouse.Assignment{
		{ShopID: shop.ID, ExperimentID: fmt.Sprint(fromStore.ID), VisitorID: "vis-1", SessionID: "sess-ch", TestGroup: 1, ReceivedAt: now},
		// A later assignment does not replace the first.
		{ShopID: shop.ID, ExperimentID: fmt.Sprint(fromStore.ID), VisitorID: "vis-1", TestGroup: 0, ReceivedAt: now.Add(time.Minute)},
		{ShopID: shop.ID, ExperimentID: fmt.Sprint(fromCart.ID), VisitorID: "vis-1", TestGroup: 1, ReceivedAt: now},
		{ShopID: shop.ID, ExperimentID: fmt.Sprint(excluded.ID), VisitorID: "vis-1", TestGroup: -1, ReceivedAt: now},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The cart attribute wins over ClickHouse for the test it names; the
	// draft test it names is not running, so it gets nothing.
	cart := fmt.Sprintf("%d:0, %d:1", fromCart.ID, draft.ID)
	d := b.process(t, shop, experiment.TopicOrdersCreate, "d-create", orderJSON("5001", "2026-06-01T10:00:00Z", "", attrs("vis-1", cart)))
	if d.Outcome != "attributed to 2 tests" {
		t.Errorf("outcome = %q", d.Outcome)
	}
	version := uint64(time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC).UnixMilli())
	want := func(group int16) []warehouse.ExportRow {
		return []warehouse.ExportRow{{OrderID: "5001", CreatedAt: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC), TestGroup: group,
			VisitorID: "vis-1", Revenue: decimal.NewFromInt(154), Cost: decimal.RequireFromString("9.5").Mul(decimal.NewFromInt(2)).Add(decimal.NewFromInt(41)), Currency: "USD", LineItems: 2, Quantity: 3, Version: version}}
	}
	cases := []struct {
		name string
		test *experiment.Test
		want []warehouse.ExportRow
	}{
		{"ClickHouse assignment, first stands", fromStore, want(1)},
		{"cart attribute", fromCart, want(0)},
		{"test that never ran", draft, nil},
		{"excluded visitor", excluded, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := b.orders(t, shop.ID, c.test.ID)
			for i := range got {
				got[i].SessionID = "" // from ClickHouse for one, empty for the other
			}
			if len(got) != len(c.want) || (len(got) == 1 && !sameRow(got[0], c.want[0])) {
				t.Fatalf("orders = %+v, want %+v", got, c.want)
			}
		})
	}
	t.Run("session from the visitor's assignment", func(t *testing.T) {
		if got := b.orders(t, shop.ID, fromStore.ID); len(got) != 1 || got[0].SessionID != "sess-ch" {
			t.Fatalf("orders = %+v", got)
		}
	})
	t.Run("order without cart attributes stays unattributed", func(t *testing.T) {
		d := b.process(t, shop, experiment.TopicOrdersCreate, "d-anon", orderJSON(`"gid://shopify/Order/5002"`, "2026-06-01T10:00:00Z", "", ""))
		if !strings.HasPrefix(d.Outcome, "unattributed") || b.rawOrderRows(t, shop.ID, "5002") != 0 {
			t.Fatalf("outcome %q, rows %d", d.Outcome, b.rawOrderRows(t, shop.ID, "5002"))
		}
	})
}

func sameRow(a, b warehouse.ExportRow) bool {
	eq := a.CreatedAt.Equal(b.CreatedAt) && a.Revenue.Equal(b.Revenue) && a.Cost.Equal(b.Cost)
	a.CreatedAt, b.CreatedAt = time.Time{}, time.Time{}
	a.Revenue, b.Revenue, a.Cost, b.Cost = decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero
	return eq && a == b
}

func TestDuplicateDeliveryProcessedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	test := b.newTest(t, shop, priceBody("p"), experiment.StatusActive)
	body := orderJSON("6001", "2026-06-01T10:00:00Z", "", attrs("vis-9", fmt.Sprintf("%d:1", test.ID)))
	// Twice before processing, once after: one record, one job, one write.
	for i := 0; i < 2; i++ {
		if status, raw := b.deliver(t, shop, experiment.TopicOrdersCreate, "dup-1", body, ""); status != http.StatusOK || raw != "" {
			t.Fatalf("delivery %d = %d %q", i, status, raw)
		}
	}
	first := b.waitProcessed(t, shop.ID, "dup-1")
	if status, _ := b.deliver(t, shop, experiment.TopicOrdersCreate, "dup-1", body, ""); status != http.StatusOK {
		t.Fatalf("redelivery after processing = %d", status)
	}
	again, err := b.db.FindDelivery(context.Background(), shop.ID, "dup-1")
	if err != nil {
		t.Fatal(err)
	}
	if !again.ProcessedAt.Equal(*first.ProcessedAt) {
		t.Errorf("processed again at %v (first %v)", again.ProcessedAt, first.ProcessedAt)
	}
	if n := b.rawOrderRows(t, shop.ID, "6001"); n != 1 {
		t.Errorf("order rows written = %d, want 1", n)
	}
	entries, err := b.db.FindAuditEntries(context.Background(), shop.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	processed := 0
	for _, e := range entries {
		if e.Action == "webhook.orders_create" {
			processed++
		}
	}
	if processed != 1 {
		t.Errorf("processing audit entries = %d, want 1", processed)
	}
}

func TestOrdersEditedWritesTheLatestVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	test := b.newTest(t, shop, priceBody("p"), experiment.StatusActive)
	cart := attrs("vis-2", fmt.Sprintf("%d:1", test.ID))
	b.process(t, shop, experiment.TopicOrdersCreate, "e-0", orderJSON("7001", "2026-06-01T10:00:00Z", "", cart))

	// An edit drops the sweater line (current_quantity 0) and refunds 28.00;
	// edits carry no cart attributes: the group comes from the stored order.
	edit := `{"id":7001,"updated_at":"2026-06-02T09:00:00Z","total_price":"154.00","currency":"USD",
		"line_items":[{"product_id":8101,"variant_id":44001,"quantity":2,"current_quantity":2,"price":"28.00"},
		              {"product_id":8102,"variant_id":44005,"quantity":1,"current_quantity":0,"price":"98.00"}],
		"refunds":[{"transactions":[{"kind":"refund","status":"success","amount":"98.00"},{"kind":"refund","status":"failure","amount":"5.00"}]}]}`
	d := b.process(t, shop, experiment.TopicOrdersEdited, "e-1", edit)
	if d.Outcome != "new version for 1 tests" {
		t.Errorf("outcome = %q", d.Outcome)
	}
	// A stale edit (older updated_at) delivered late loses to the newer one.
	stale := `{"id":7001,"updated_at":"2026-06-01T12:00:00Z","current_total_price":"150.00","line_items":[]}`
	b.process(t, shop, experiment.TopicOrdersEdited, "e-2", stale)

	got := b.orders(t, shop.ID, test.ID)
	want := warehouse.ExportRow{OrderID: "7001", CreatedAt: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC), TestGroup: 1, VisitorID: "vis-2",
		Revenue: decimal.NewFromInt(56), Cost: decimal.NewFromInt(19), Currency: "USD", LineItems: 1, Quantity: 2,
		Version: uint64(time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC).UnixMilli())}
	if len(got) != 1 || !sameRow(got[0], want) {
		t.Fatalf("orders = %+v\nwant %+v", got, want)
	}
	if n := b.rawOrderRows(t, shop.ID, "7001"); n != 3 {
		t.Errorf("versions written = %d, want 3", n)
	}

	t.Run("current_total_price wins", func(t *testing.T) {
		newer := `{"id":7001,"updated_at":"2026-06-03T09:00:00Z","current_total_price":"12.50","total_price":"154.00",
			"line_items":[{"product_id":8101,"variant_id":44001,"quantity":1,"price":"28.00"}]}`
		b.process(t, shop, experiment.TopicOrdersEdited, "e-3", newer)
		got := b.orders(t, shop.ID, test.ID)
		if len(got) != 1 || !got[0].Revenue.Equal(decimal.RequireFromString("12.5")) || !got[0].Cost.Equal(decimal.RequireFromString("9.5")) || got[0].LineItems != 1 {
			t.Fatalf("orders = %+v", got)
		}
	})
	t.Run("edit of an unknown order attributes it", func(t *testing.T) {
		b.process(t, shop, experiment.TopicOrdersEdited, "e-4", orderJSON("7002", "2026-06-01T11:00:00Z", "", cart))
		if n := b.rawOrderRows(t, shop.ID, "7002"); n != 1 {
			t.Fatalf("rows = %d", n)
		}
	})
}
