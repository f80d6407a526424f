package warehouse_test

import (
	"context"
	"testing"

	"github.com/liftab/lift/warehouse"
)

// PrepareRollup writes the copy a read would write, once, and only for a
// base large enough to have one.
func TestPrepareRollup(t *testing.T) {
	w := openTestWarehouse(t)
	rollupPopulation(t, w, 17, true)
	stopMerges(t, w, "agg_visitors")
	ctx := context.Background()
	builds := func() uint64 {
		t.Helper()
		var n uint64
		if err := w.Conn().QueryRow(ctx, `SELECT count() FROM agg_visitors_copy_builds
			WHERE shop_id = 1 AND experiment_id = '31'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	restore := warehouse.SetCopyMinVisitors(1 << 62)
	if built, err := w.PrepareRollup(ctx, 1, "31"); err != nil || built || builds() != 0 {
		t.Fatalf("below the copy's size: built=%v err=%v builds=%d; want nothing written", built, err, builds())
	}
	restore()
	defer warehouse.SetCopyMinVisitors(0)()
	if built, err := w.PrepareRollup(ctx, 1, "31"); err != nil || !built || builds() != 1 {
		t.Fatalf("first preparation: built=%v err=%v builds=%d; want one build", built, err, builds())
	}
	if built, err := w.PrepareRollup(ctx, 1, "31"); err != nil || built || builds() != 1 {
		t.Errorf("second preparation: built=%v err=%v builds=%d; want none more", built, err, builds())
	}
	// A read now finds the copy instead of writing one.
	q := warehouse.MetricsQuery{ShopID: 1, ExperimentID: "31", Timezone: "UTC", From: "2026-05-30", To: "2026-06-30",
		Basis: warehouse.BasisVisitors}
	if _, ok, err := w.RollupGroupMetrics(q); err != nil || !ok || builds() != 1 {
		t.Errorf("read after the preparation: ok=%v err=%v builds=%d; want the prepared copy used", ok, err, builds())
	}
	if built, err := w.PrepareRollup(ctx, 1, "no-such-test"); err != nil || built {
		t.Errorf("a test without rows: built=%v err=%v", built, err)
	}
}
