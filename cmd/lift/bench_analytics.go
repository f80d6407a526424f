package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/results"
	"github.com/liftab/lift/warehouse"
)

// benchTests is the one shop and test of `lift bench results`, for the
// analytics service (which looks its test up like the API does).
type benchTests struct {
	shop *experiment.Shop
	test *experiment.Test
}

func (b benchTests) FindTestByID(_ context.Context, shopID, id int64) (*experiment.Test, error) {
	if shopID != b.shop.ID || id != b.test.ID {
		return nil, experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "No test %d.", id)
	}
	return b.test, nil
}

func (b benchTests) FindShopByID(_ context.Context, id int64) (*experiment.Shop, error) {
	return b.shop, nil
}

func (b benchTests) CollectionProducts(context.Context, int64, string) ([]string, error) {
	return nil, nil
}

// benchAnalytics times the admin panel's session analytics over the bench
// test (issue 14: under 1 s warm, 3 s cold): each view once cold (a fresh
// service, so an empty cache) and then warm (the same request again, served
// from the cache after the data-version read).
func benchAnalytics(ctx context.Context, out io.Writer, wh *warehouse.Warehouse, shop *experiment.Shop, test *experiment.Test, from, to string) error {
	req := results.AnalyticsRequest{DateStart: from, DateFinish: to}
	filtered := results.AnalyticsRequest{DateStart: from, DateFinish: to, Countries: []string{"US", "DE"}, DeviceType: "MOBILE"}
	views := []struct {
		name string
		run  func(*results.Analytics) error
	}{
		{"analytics v1 (visitor-based)", report(ctx, shop, test, results.ViewV1, req)},
		{"analytics v2 (journey)", report(ctx, shop, test, results.ViewV2, req)},
		{"analytics product-based", report(ctx, shop, test, results.ViewProduct, req)},
		{"analytics v2 storewide", report(ctx, shop, test, results.ViewStorewideV2, req)},
		// The shipping view reads the orders' shipping beside the sums, which
		// the rollup's cube does not keep: it takes the copy's visitors.
		{"analytics shipping", report(ctx, shop, test, results.ViewShipping, req)},
		{"analytics v1, mobile in US/DE", report(ctx, shop, test, results.ViewV1, filtered)},
		{"analytics timeseries", func(a *results.Analytics) error {
			_, err := a.Timeseries(ctx, shop, test.ID, results.TimeseriesRequest{DateStart: from, DateFinish: to, TotalViews: []int64{1, 1}})
			return err
		}},
	}
	var worstCold, worstWarm time.Duration
	for _, v := range views {
		a := results.NewAnalytics(results.AnalyticsConfig{Tests: benchTests{shop, test}, Warehouse: wh, Activity: wh})
		t0 := time.Now()
		if err := v.run(a); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		cold := time.Since(t0)
		t0 = time.Now()
		if err := v.run(a); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		warm := time.Since(t0)
		worstCold, worstWarm = max(worstCold, cold), max(worstWarm, warm)
		fmt.Fprintf(out, "%-30s cold %8s  warm %8s\n", v.name, cold.Round(time.Millisecond), warm.Round(time.Millisecond))
	}
	fmt.Fprintf(out, "session analytics: slowest cold %s (target < 3s: %s), slowest warm %s (target < 1s: %s)\n",
		worstCold.Round(time.Millisecond), metOrMissed(worstCold < 3*time.Second),
		worstWarm.Round(time.Millisecond), metOrMissed(worstWarm < time.Second))
	return nil
}

func report(ctx context.Context, shop *experiment.Shop, test *experiment.Test, view results.View, req results.AnalyticsRequest) func(*results.Analytics) error {
	return func(a *results.Analytics) error {
		_, err := a.Report(ctx, shop, test.ID, view, req)
		return err
	}
}
