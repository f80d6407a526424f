package experiment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/liftab/lift/experiment"
)

// TestWebhookInventorySyncsStock: INVENTORY_LEVELS_UPDATE copies the level
// to duplicate variants only while a price test is live and the level has
// a quantity; a failed copy leaves the delivery for a retry.
func TestWebhookInventorySyncsStock(t *testing.T) {
	t.Parallel()
	price := &experiment.Test{ID: 1, Type: experiment.TypePrice, Status: experiment.StatusActive}
	redirect := &experiment.Test{ID: 2, Type: experiment.TypeURLRedirect, Status: experiment.StatusActive}
	for _, tc := range []struct {
		name     string
		live     []*experiment.Test
		body     string
		syncErr  error
		synced   int
		outcome  string
		wantFail bool
	}{
		{"price test live", []*experiment.Test{redirect, price}, `{"inventory_item_id":101,"location_id":7,"available":3}`, nil, 1, "stock copied", false},
		{"no price test", []*experiment.Test{redirect}, `{"inventory_item_id":101,"location_id":7,"available":3}`, nil, 0, "inventory level recorded", false},
		{"no quantity", []*experiment.Test{price}, `{"inventory_item_id":101,"location_id":7,"available":null}`, nil, 0, "inventory level recorded", false},
		{"platform refused", []*experiment.Test{price}, `{"inventory_item_id":101,"location_id":7,"available":3}`, errors.New("403"), 1, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newWebhookFakes()
			f.live = tc.live
			svc := f.service()
			var got []experiment.InventoryLevel
			svc.SyncStock = func(_ context.Context, _ *experiment.Shop, l experiment.InventoryLevel) (string, error) {
				got = append(got, l)
				return "stock copied to 1 duplicate variants", tc.syncErr
			}
			ctx := context.Background()
			if err := svc.Receive(ctx, experiment.WebhookReceipt{Topic: experiment.TopicInventoryLevelsUpdate, ShopDomain: "a.example",
				DeliveryID: "d1", Body: []byte(tc.body)}); err != nil {
				t.Fatal(err)
			}
			err := svc.Process(ctx, 1, "d1", experiment.WebhookAttempt{Try: 1})
			if (err != nil) != tc.wantFail || len(got) != tc.synced {
				t.Fatalf("process = %v, %d syncs %v", err, len(got), got)
			}
			if tc.synced > 0 && (got[0].InventoryItemID != "101" || got[0].LocationID != "7" || *got[0].Available != 3) {
				t.Fatalf("synced level %+v", got[0])
			}
			d := f.deliveries["1/d1"]
			if tc.wantFail {
				if d.ProcessedAt != nil {
					t.Fatal("a failed copy marked the delivery processed")
				}
				return
			}
			if d.ProcessedAt == nil || !strings.Contains(d.Outcome, tc.outcome) {
				t.Fatalf("outcome %q", d.Outcome)
			}
		})
	}
}
