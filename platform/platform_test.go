package platform_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/web/tracker"
)

func TestPrepareLaunch(t *testing.T) {
	t.Parallel()
	shop := &experiment.Shop{Domain: "a.myshopify.com"}
	price := priceTest()
	theme := &experiment.Test{ID: 8, Type: experiment.TypeTheme, Groups: []experiment.Group{
		{Index: 1, Content: json.RawMessage(`{"theme_id":"gid://shopify/OnlineStoreTheme/2"}`)}}}
	ship := &experiment.Test{ID: 9, Type: experiment.TypeShipping}

	t.Run("Succeeds", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		fake.Token = "tok"
		c := platform.NewClient(url, "tok")
		c.RatesURL = "https://lift.test/api/carrier/rates"
		for _, tt := range []*experiment.Test{price, theme, ship} {
			if err := c.PrepareLaunch(context.Background(), shop, tt); err != nil {
				t.Fatalf("%s: %v", tt.Type, err)
			}
		}
		if _, ok := fake.CartTransform(shop.Domain, platform.PriceFunction); !ok {
			t.Fatal("no cart transform registered")
		}
		// The block is the anti-flicker snippet the theme renders in <head>
		// (lift.js comes by the script tag), not a snippet rendering itself.
		if got := fake.AppBlock(shop.Domain, "gid://shopify/OnlineStoreTheme/2"); got != tracker.AntiFlicker(2*time.Second) {
			t.Fatalf("app block written = %q, want the anti-flicker snippet", got)
		}
	})
	t.Run("InjectedFailure", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		fake.Fail(shop.Domain, platform.OpCartTransform, http.StatusInternalServerError)
		err := platform.NewClient(url, "").PrepareLaunch(context.Background(), shop, price)
		var pe *platform.Error
		if !errors.As(err, &pe) || pe.Op != "register cart transform" || pe.Status != 500 {
			t.Fatalf("got %v", err)
		}
		fake.Fail(shop.Domain, platform.OpCartTransform, http.StatusUnprocessableEntity)
		if err := platform.NewClient(url, "").PrepareLaunch(context.Background(), shop, price); err == nil {
			t.Fatal("a refused cart transform launched")
		}
		fake.Heal(shop.Domain)
		if err := platform.NewClient(url, "").PrepareLaunch(context.Background(), shop, price); err != nil {
			t.Fatalf("after heal: %v", err)
		}
		// The attempts' duplicates are reused, not made again each time.
		if d := fake.Duplicates(shop.Domain, "gid://shopify/ProductVariant/1"); len(d) != 1 {
			t.Fatalf("three launches of one test left duplicates %v, want one", d)
		}
		// Another test of the same variant gets its own.
		other := priceTest()
		other.ID = 70
		if err := platform.NewClient(url, "").PrepareLaunch(context.Background(), shop, other); err != nil {
			t.Fatal(err)
		}
		if d := fake.Duplicates(shop.Domain, "gid://shopify/ProductVariant/1"); len(d) != 2 {
			t.Fatalf("a second test's launch left duplicates %v, want one each", d)
		}
	})
	t.Run("OneCartTransformForEveryPriceTest", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		c := platform.NewClient(url, "")
		// The platform keeps one cart transform per function: the second
		// test's register is answered FUNCTION_ALREADY_REGISTERED, which
		// means the transform both tests use is in place.
		second := priceTest()
		second.ID = 71
		for _, tt := range []*experiment.Test{priceTest(), second, priceTest()} {
			if err := c.PrepareLaunch(context.Background(), shop, tt); err != nil {
				t.Fatalf("launch of test %d: %v", tt.ID, err)
			}
		}
		if n := fake.Calls(shop.Domain, platform.OpCartTransform); n != 3 {
			t.Fatalf("%d registers, want one a launch", n)
		}
		if n := fake.LiftResources(shop.Domain); n != 2+1 {
			t.Fatalf("%d resources on the shop, want a duplicate a test and one cart transform", n)
		}
		// The uninstall finds it by Lift's function mark.
		if _, err := c.Cleanup(context.Background(), shop.Domain, ""); err != nil {
			t.Fatal(err)
		}
		if _, ok := fake.CartTransform(shop.Domain, platform.PriceFunction); ok {
			t.Fatal("the cleanup left the price function's cart transform")
		}
	})
	t.Run("MoreVariantsThanOneCallTakes", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		// The platform refuses an array argument over 250: 260 duplicates
		// take two calls, and a second start makes none.
		var prices []string
		for i := range 260 {
			prices = append(prices, fmt.Sprintf(`{"product_variant_id":"gid://shopify/ProductVariant/%d"}`, 1000+i))
		}
		big := &experiment.Test{ID: 11, Type: experiment.TypePrice, Groups: []experiment.Group{{Index: 0, Content: json.RawMessage(`{}`)},
			{Index: 1, Content: json.RawMessage(`{"prices":[` + strings.Join(prices, ",") + `]}`)}}}
		c := platform.NewClient(url, "")
		for range 2 {
			if err := c.PrepareLaunch(context.Background(), shop, big); err != nil {
				t.Fatal(err)
			}
		}
		if n := fake.LiftResources(shop.Domain); n != 260+1 { // and the cart transform
			t.Fatalf("%d resources on the shop, want 260 duplicates and a cart transform", n)
		}
		if n := fake.Calls(shop.Domain, platform.OpDuplicateVariants); n != 2 {
			t.Fatalf("%d duplicate calls, want 2", n)
		}
	})
	t.Run("ACreateIsNotSentTwice", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		c := platform.NewClient(url, "")
		c.Retry = platform.Retry{Attempts: 4, Base: time.Millisecond}
		// A 503 may come after the platform made the copies: sending again
		// could make a second set, so the launch fails instead.
		fake.FailNext(shop.Domain, platform.OpDuplicateVariants, http.StatusServiceUnavailable)
		var pe *platform.Error
		if err := c.PrepareLaunch(context.Background(), shop, price); !errors.As(err, &pe) || pe.Status != http.StatusServiceUnavailable {
			t.Fatalf("launch after a 503 = %v, want the 503", err)
		}
		if n := fake.Attempts(shop.Domain, platform.OpDuplicateVariants); n != 1 {
			t.Fatalf("%d sends after a 503, want 1", n)
		}
		// A 429 ran nothing: it is sent again, and the launch goes through.
		fake.FailNext(shop.Domain, platform.OpDuplicateVariants, http.StatusTooManyRequests)
		if err := c.PrepareLaunch(context.Background(), shop, price); err != nil {
			t.Fatal(err)
		}
		if n := fake.Attempts(shop.Domain, platform.OpDuplicateVariants); n != 3 {
			t.Fatalf("%d sends in all, want 3 (the 503, the 429, its retry)", n)
		}
		if d := fake.Duplicates(shop.Domain, "gid://shopify/ProductVariant/1"); len(d) != 1 {
			t.Fatalf("duplicates %v, want one", d)
		}
	})
	t.Run("AnOfferIsDiscountedOnce", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		c := platform.NewClient(url, "")
		offer := &experiment.Test{ID: 12, Type: experiment.TypeOffer}
		other := &experiment.Test{ID: 13, Type: experiment.TypeOffer}
		// A start retried after a failed one launches the test again: one
		// discount each, or every order of the group would be discounted twice.
		for _, tt := range []*experiment.Test{offer, offer, other, offer} {
			if err := c.PrepareLaunch(context.Background(), shop, tt); err != nil {
				t.Fatal(err)
			}
		}
		if n := fake.Calls(shop.Domain, platform.OpDiscountFunctions); n != 2 {
			t.Fatalf("%d discounts created for two offer tests, want 2", n)
		}
	})
	t.Run("ABlockGoesOnThePublishedThemeByID", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		fake.SetShop(shop.Domain, experiment.ShopInfo{}, experiment.CatalogSnapshot{Themes: []experiment.Theme{
			{ID: "gid://shopify/OnlineStoreTheme/4", Role: "unpublished"}, {ID: "gid://shopify/OnlineStoreTheme/5", Role: "main"}}})
		// A visual-editor test names no theme: the block goes on the
		// published one, which the theme files mutation takes by id.
		edit := &experiment.Test{ID: 14, Type: experiment.TypeVisualEditor}
		if err := platform.NewClient(url, "").PrepareLaunch(context.Background(), shop, edit); err != nil {
			t.Fatal(err)
		}
		if !fake.HasAppBlock(shop.Domain, "gid://shopify/OnlineStoreTheme/5") || fake.HasAppBlock(shop.Domain, "main") {
			t.Fatal("the block is not on the published theme 5")
		}
	})
	t.Run("BadToken", func(t *testing.T) {
		t.Parallel()
		fake, url := fakeServer(t)
		fake.Token = "right"
		err := platform.NewClient(url, "wrong").PrepareLaunch(context.Background(), shop, ship)
		var pe *platform.Error
		if !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized {
			t.Fatalf("got %v", err)
		}
	})
}

func priceTest() *experiment.Test {
	return &experiment.Test{ID: 7, Type: experiment.TypePrice, Groups: []experiment.Group{
		{Index: 0, Content: json.RawMessage(`{}`)},
		{Index: 1, Content: json.RawMessage(`{"prices":[{"product_variant_id":"gid://shopify/ProductVariant/1"}]}`)}}}
}
