package experiment_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/experimenttest"
)

// TestService runs the use-case suite on the in-memory fake of the ports;
// store's tests run the same suite on Postgres.
func TestService(t *testing.T) {
	t.Parallel()
	experimenttest.Run(t, experimenttest.FakeBackend)
}

// TestReplyCompletesTheClaim: under a claimed Idempotency-Key the unit of
// work keeps exactly the bytes the surface rendered.
func TestReplyCompletesTheClaim(t *testing.T) {
	t.Parallel()
	clk := &experimenttest.Clock{}
	clk.Set(experimenttest.Epoch)
	repo := experimenttest.NewRepo(clk.Now)
	svc := experiment.NewService(experiment.ServiceConfig{Repository: repo, Now: clk.Now})
	shop, err := repo.AddShop(experiment.Shop{Domain: "claim.example", Features: []string{"price"}, SubscriptionActive: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := experiment.WithIdempotencyClaim(context.Background(), experiment.IdempotencyClaim{ShopID: shop.ID, Key: "k1"})
	out, err := svc.Create(ctx, shop, []byte(experimenttest.PriceTest("Claimed")), experimenttest.JSONReply(201))
	if err != nil {
		t.Fatal(err)
	}
	claims := repo.Claims()
	if len(claims) != 1 || claims[0].Status != 201 || string(claims[0].Body) != string(out.Body) ||
		claims[0].ResourceID != fmt.Sprint(out.Test.ID) || claims[0].ShopID != shop.ID {
		t.Fatalf("claims = %+v, want the create's response", claims)
	}
	// Without a Platform a start is a fault of the wiring, not a refusal.
	if _, err := svc.Apply(context.Background(), shop, out.Test.ID, experiment.ActionStart, nil); err == nil {
		t.Fatal("a start without a Platform succeeded")
	}
	if err := svc.RunChecks(context.Background(), shop.ID, out.Test.ID); err == nil {
		t.Fatal("checks without a Platform succeeded")
	}
}

func TestIsNotFound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{experiment.Errorf(experiment.KindNotFound, "experiment_not_found", "gone"), true},
		{fmt.Errorf("wrapped: %w", experiment.Errorf(experiment.KindNotFound, "shop_not_found", "gone")), true},
		{experiment.ErrNotFound, true},
		{experiment.Errorf(experiment.KindConflict, "checks_pending", "wait"), false},
		{errors.New("boom"), false},
		{nil, false},
	} {
		if got := experiment.IsNotFound(c.err); got != c.want {
			t.Errorf("IsNotFound(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestNewServiceNeedsARepository(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("NewService without a Repository did not panic")
		}
	}()
	experiment.NewService(experiment.ServiceConfig{})
}

// TestZoneWarningQueuesARecheck: a save warned that a zone does not offer
// Lift rates queues a refresh of the shop's catalog, so the merchant's fix
// shows on the next save within minutes; a save over zones that offer
// them queues none.
func TestZoneWarningQueuesARecheck(t *testing.T) {
	t.Parallel()
	clk := &experimenttest.Clock{}
	clk.Set(experimenttest.Epoch)
	repo := experimenttest.NewRepo(clk.Now)
	queue := &experimenttest.Queue{}
	svc := experiment.NewService(experiment.ServiceConfig{Repository: repo, Jobs: queue, Now: clk.Now})
	shop, err := repo.AddShop(experiment.Shop{Domain: "zones.example", SubscriptionActive: true, CarrierService: true})
	if err != nil {
		t.Fatal(err)
	}
	const nordics = "gid://shopify/DeliveryZone/509"
	repo.PutZone(shop.ID, experiment.Zone{ID: nordics, Name: "Nordics", Countries: []string{"SE"},
		Rates: []experiment.ZoneRate{{ID: "gid://shopify/DeliveryMethodDefinition/5091", Name: "Standard", Price: "9.00"}}})
	body := func(zone string) []byte {
		return []byte(fmt.Sprintf(`{"type":"shipping","name":"s","shared":{"shipping":{"zone_ids":[%q]}},"test_groups":[{"index":0,"name":"A","split":50},
			{"index":1,"name":"B","split":50,"content":{"rates":[{"zone_id":%q,"name":"Saver","price":{"amount":"1.00","currency":"USD"}}]}}]}`, zone, zone))
	}
	if _, err := svc.Create(context.Background(), shop, body(experimenttest.Domestic), experimenttest.JSONReply(201)); err != nil {
		t.Fatal(err)
	}
	if got := queue.Refreshes(); len(got) != 0 {
		t.Fatalf("a save over zones offering Lift rates queued refreshes %v", got)
	}
	out, err := svc.Create(context.Background(), shop, body(nordics), experimenttest.JSONReply(201))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) != 1 || out.Warnings[0].Code != experiment.WarnZoneWithoutLiftRates {
		t.Fatalf("warnings = %+v", out.Warnings)
	}
	if got := queue.Refreshes(); len(got) != 1 || got[0] != shop.ID {
		t.Fatalf("refreshes queued = %v, want the shop's", got)
	}
}
