package results_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/warehouse"
)

// A legacy order (the contract's body: no visitorId, no currency) is in
// the snapshot and in the export alike, in its group, and the export
// prices it in the shop's currency; a signed order keeps the currency it
// was sent in. Real Postgres and ClickHouse.
func TestExportOfLegacyOrders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := dbBundle(t)
	tt := b.test(t, experiment.StatusActive)
	exp := strconv.FormatInt(tt.ID, 10)
	at := start.Add(time.Minute)
	legacy := func(id string, group int16, revenue float64) warehouse.Order {
		return warehouse.Order{ShopID: b.shop.ID, ExperimentID: exp, OrderID: id, Version: uint64(at.UnixMilli()),
			TestGroup: group, Revenue: revenue, CreatedAt: at, Source: "legacy"}
	}
	signed := legacy("3", 1, 30)
	signed.VisitorID, signed.Currency, signed.Source = "v1", "USD", "webhook"
	signed.Version = warehouse.SignedOrderVersion(signed.Version)
	batch := &warehouse.Batch{
		Assignments: []warehouse.Assignment{{ShopID: b.shop.ID, ExperimentID: exp, VisitorID: "v1", AssignmentID: "v1",
			TestGroup: 1, Device: "desktop", AssignedAt: at, ReceivedAt: at}},
		Orders: []warehouse.Order{legacy("1", 0, 10), legacy("2", 1, 20), signed},
	}
	if err := b.wh.Insert(ctx, batch); err != nil {
		t.Fatal(err)
	}

	snap, err := b.svc.ComputeSnapshot(ctx, b.shop, tt, start.Add(time.Hour), false)
	if err != nil {
		t.Fatal(err)
	}
	var doc results.SnapshotDoc
	if err := json.Unmarshal(snap.Body, &doc); err != nil {
		t.Fatal(err)
	}
	type totals struct {
		orders  int64
		revenue string
	}
	got := map[int]totals{}
	for _, g := range doc.TestGroups {
		got[g.TestGroupIndex] = totals{g.Orders, g.Revenue.Amount}
	}
	if want := map[int]totals{0: {1, "10.00"}, 1: {2, "50.00"}}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("snapshot orders/revenue %v, want %v", got, want)
	}

	render := func(x *results.Export) (int, []byte, error) { return 202, nil, nil }
	if _, _, err := b.svc.CreateExport(ctx, b.shop, tt.ID, render); err != nil {
		t.Fatal(err)
	}
	id := b.queue.exports[len(b.queue.exports)-1]
	if err := b.svc.RunExport(ctx, b.shop.ID, id, true); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(results.ExportFile(b.cfg.ExportDir, id))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cur := map[string]string{}
	csvTotals := map[string]float64{}
	for _, r := range rows[1:] {
		cur[r[0]] = r[9]
		rev, _ := strconv.ParseFloat(r[6], 64)
		csvTotals[r[2]] += rev
	}
	if want := map[string]string{"1": "EUR", "2": "EUR", "3": "USD"}; len(cur) != 3 || cur["1"] != want["1"] ||
		cur["2"] != want["2"] || cur["3"] != want["3"] {
		t.Errorf("currency by order %v, want %v (the shop's for legacy orders)", cur, want)
	}
	if csvTotals["0"] != 10 || csvTotals["1"] != 50 {
		t.Errorf("export revenue by group %v, want the snapshot's 10 and 50", csvTotals)
	}
}
