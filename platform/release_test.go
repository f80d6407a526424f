package platform_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
)

func TestReleaseTest(t *testing.T) {
	t.Parallel()
	shop := &experiment.Shop{Domain: "r.myshopify.com"}
	ctx := context.Background()
	launch := func(t *testing.T, c *platform.Client, tests ...*experiment.Test) {
		t.Helper()
		for _, tt := range tests {
			if err := c.PrepareLaunch(ctx, shop, tt); err != nil {
				t.Fatalf("launch of %d: %v", tt.ID, err)
			}
		}
	}

	t.Run("OnlyTheTestsOwn", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		c := platform.NewClient(url, "")
		ended, live := priceTest(), priceTest()
		live.ID = 70
		offer, liveOffer := &experiment.Test{ID: 12, Type: experiment.TypeOffer}, &experiment.Test{ID: 13, Type: experiment.TypeOffer}
		launch(t, c, ended, live, offer, liveOffer)

		rep, err := c.ReleaseTest(ctx, shop, ended)
		if err != nil || rep != (experiment.ReleaseReport{DuplicateVariants: 1}) {
			t.Fatalf("release of the price test = %+v, %v; want its 1 duplicate", rep, err)
		}
		// The other test of the same variant keeps its duplicate, and every
		// price test keeps the shop's price function.
		if d := fake.Duplicates(shop.Domain, "gid://shopify/ProductVariant/1"); len(d) != 1 {
			t.Fatalf("duplicates of variant 1 after the release: %v, want the live test's", d)
		}
		if _, ok := fake.CartTransform(shop.Domain, platform.PriceFunction); !ok {
			t.Fatal("the release took the price function's cart transform from the live test")
		}
		rep, err = c.ReleaseTest(ctx, shop, offer)
		if err != nil || rep != (experiment.ReleaseReport{Discounts: 1}) {
			t.Fatalf("release of the offer test = %+v, %v; want its 1 discount", rep, err)
		}
		if fake.Discounts(shop.Domain, "12") != 0 || fake.Discounts(shop.Domain, "13") != 1 {
			t.Fatal("the offer release did not delete exactly its own discount")
		}
		// Run again (a sweep retried after its mark failed): nothing left.
		for _, tt := range []*experiment.Test{ended, offer} {
			if rep, err := c.ReleaseTest(ctx, shop, tt); err != nil || rep != (experiment.ReleaseReport{}) {
				t.Fatalf("second release of %d = %+v, %v; want nothing", tt.ID, rep, err)
			}
		}
	})
	t.Run("ARefusalNamesItsStep", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		c := platform.NewClient(url, "")
		launch(t, c, priceTest())
		fake.Fail(shop.Domain, platform.OpDeleteDuplicates, http.StatusInternalServerError)
		_, err := c.ReleaseTest(ctx, shop, priceTest())
		var pe *platform.Error
		if !errors.As(err, &pe) || pe.Op != "delete duplicate variants" {
			t.Fatalf("release against a failing platform = %v, want a platform error of the delete", err)
		}
		fake.Heal(shop.Domain)
		if rep, err := c.ReleaseTest(ctx, shop, priceTest()); err != nil || rep.DuplicateVariants != 1 {
			t.Fatalf("release after heal = %+v, %v; want the duplicate deleted", rep, err)
		}
	})
}

// TestCarrierService: a shipping test's launch registers Lift's carrier
// service answering at RatesURL once, ignores another app's, and turns
// Lift's on again when the merchant turned it off.
func TestCarrierService(t *testing.T) {
	t.Parallel()
	shop := &experiment.Shop{Domain: "c.myshopify.com"}
	ship := &experiment.Test{ID: 9, Type: experiment.TypeShipping}
	const ours = "https://lift.test/api/carrier/rates"
	fake, url := fakeServer(t)
	fake.PutCarrierService(shop.Domain, "https://other-app.test/rates", true)
	c := platform.NewClient(url, "")
	c.RatesURL = ours
	for range 2 {
		if err := c.PrepareLaunch(context.Background(), shop, ship); err != nil {
			t.Fatal(err)
		}
	}
	if got := fake.ActiveCarriers(shop.Domain); len(got) != 2 || got[0] != "https://lift.test/api/carrier/rates" {
		t.Fatalf("active carriers %v, want Lift's once beside the other app's", got)
	}
	if n := fake.Calls(shop.Domain, "CarrierServiceCreate"); n != 1 {
		t.Fatalf("%d carrier services registered over two launches, want 1", n)
	}

	off := "d.myshopify.com"
	fake.PutCarrierService(off, ours, false)
	if err := c.PrepareLaunch(context.Background(), &experiment.Shop{Domain: off}, ship); err != nil {
		t.Fatal(err)
	}
	if got := fake.ActiveCarriers(off); len(got) != 1 || got[0] != ours || fake.Calls(off, "CarrierServiceCreate") != 0 {
		t.Fatalf("after relaunch with Lift's carrier off: active %v, %d created; want it on again, none created",
			got, fake.Calls(off, "CarrierServiceCreate"))
	}
	// Without a callback URL there is nothing to register.
	c.RatesURL = ""
	if err := c.PrepareLaunch(context.Background(), &experiment.Shop{Domain: "e.myshopify.com"}, ship); err == nil {
		t.Fatal("a launch without RatesURL registered a carrier service")
	}
}
