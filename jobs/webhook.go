package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
)

// TypeWebhook processes one inbound platform webhook delivery. POST
// /api/webhooks records the delivery and enqueues it; the effect runs here.
const TypeWebhook = "webhook:process"

// Topics of the inbound webhooks (session document part 6.2).
const (
	TopicAppUninstalled        = "APP_UNINSTALLED"
	TopicOrdersCreate          = "ORDERS_CREATE"
	TopicOrdersEdited          = "ORDERS_EDITED"
	TopicInventoryLevelsUpdate = "INVENTORY_LEVELS_UPDATE"
	TopicShopUpdate            = "SHOP_UPDATE"
	TopicThemesPublish         = "THEMES_PUBLISH"
)

// WebhookTask is the payload of TypeWebhook: the delivery to process. The
// body stays in Postgres (webhook_deliveries), so the task is small and the
// job reads exactly what was signed.
type WebhookTask struct {
	ShopID     int64  `json:"shop_id"`
	DeliveryID string `json:"delivery_id"`
}

// WebhookJob is the job of a delivery. Its id names the shop and the
// delivery, so a redelivery, or a retried enqueue, never queues it twice.
func WebhookJob(shopID int64, deliveryID string) Job {
	return Job{Type: TypeWebhook, Payload: WebhookTask{ShopID: shopID, DeliveryID: deliveryID},
		ID: fmt.Sprintf("webhook:%d:%s", shopID, deliveryID), Queue: QueueCritical, Timeout: 2 * time.Minute}
}

// Webhooks applies the effect of each webhook topic. Every effect is
// idempotent — orders are versioned rows that fold, Postgres updates set
// values — and a delivery is marked processed in the transaction of its
// last write, so a retry after a crash repeats at most harmless work.
type Webhooks struct {
	DB        *store.DB
	Warehouse *warehouse.Warehouse
	// EndTest ends a test through the public API's lifecycle (the same path
	// as POST /v1/experiments/{id}/end); APP_UNINSTALLED uses it.
	EndTest func(ctx context.Context, shop *experiment.Shop, testID int64) error
	Logger  *slog.Logger
}

// HandleWebhooks registers the webhook processor on w.
func HandleWebhooks(w *Worker, h *Webhooks) { Handle(w, TypeWebhook, h.Process) }

// Process applies one delivery. A delivery already processed, or no longer
// recorded, does nothing; a body the topic cannot read is recorded as such
// and not retried; other failures return an error so the job is retried.
func (h *Webhooks) Process(ctx context.Context, p WebhookTask) error {
	ctx = experiment.WithActor(ctx, experiment.Actor{Name: "webhook", RequestID: p.DeliveryID})
	d, err := h.DB.FindDelivery(ctx, p.ShopID, p.DeliveryID)
	if isNotFoundErr(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jobs.Webhooks.Process: %w", err)
	}
	if d.ProcessedAt != nil {
		return nil
	}
	shop, err := h.DB.FindShopByID(ctx, p.ShopID)
	if err != nil {
		return fmt.Errorf("jobs.Webhooks.Process: %w", err)
	}
	var outcome string
	var effect txEffect
	switch d.Topic {
	case TopicOrdersCreate, TopicOrdersEdited:
		outcome, effect, err = h.order(ctx, shop, d)
	case TopicAppUninstalled:
		outcome, effect, err = h.uninstalled(ctx, shop)
	case TopicShopUpdate:
		outcome, effect, err = h.shopUpdate(ctx, shop, d)
	case TopicThemesPublish:
		outcome, effect, err = h.themePublished(ctx, shop, d)
	case TopicInventoryLevelsUpdate:
		outcome, effect, err = h.inventory(ctx, shop, d)
	default:
		outcome = "ignored: topic not handled"
	}
	var e *unreadable
	if errors.As(err, &e) {
		outcome, err = "unreadable: "+e.msg, nil
		h.logger().Warn("webhook body unreadable", "shop_id", shop.ID, "delivery", d.ID, "topic", d.Topic, "err", e.msg)
	}
	if err != nil {
		return fmt.Errorf("jobs.Webhooks.Process %s %s: %w", d.Topic, d.ID, err)
	}
	return h.markProcessed(ctx, d, outcome, effect)
}

// txEffect is a topic's Postgres effect, run in the transaction that marks
// the delivery processed.
type txEffect func(ctx context.Context, tx *store.Tx) error

func (h *Webhooks) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}

// markProcessed records the outcome; fn, when set, runs in the same
// transaction (the topic's Postgres effect).
func (h *Webhooks) markProcessed(ctx context.Context, d *store.Delivery, outcome string, fn txEffect) error {
	_, err := h.DB.Write(ctx, experiment.WriteMeta{ShopID: d.ShopID, Action: "webhook." + strings.ToLower(d.Topic), ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			cur, err := tx.FindDeliveryForUpdate(ctx, d.ShopID, d.ID)
			if err != nil {
				return experiment.WriteResult{}, err
			}
			if cur.ProcessedAt == nil && fn != nil {
				if err := fn(ctx, tx); err != nil {
					return experiment.WriteResult{}, err
				}
			}
			if err := tx.MarkDeliveryProcessed(ctx, d.ShopID, d.ID, outcome); err != nil {
				return experiment.WriteResult{}, err
			}
			return experiment.WriteResult{ResourceID: d.ID}, nil
		})
	if err != nil {
		return fmt.Errorf("jobs.Webhooks %s %s: %w", d.Topic, d.ID, err)
	}
	return nil
}

// unreadable is a body the topic cannot use; retrying will not help.
type unreadable struct{ msg string }

func (e *unreadable) Error() string { return e.msg }

func decodeDelivery(d *store.Delivery, v any) error {
	if err := json.Unmarshal(d.Body, v); err != nil {
		return &unreadable{msg: err.Error()}
	}
	return nil
}

func isNotFoundErr(err error) bool {
	e, ok := experiment.AsError(err)
	return ok && e.Kind == experiment.KindNotFound
}

// uninstalled ends every live test through the lifecycle, then marks the
// shop uninstalled: from then on its API tokens read as invalid_token.
func (h *Webhooks) uninstalled(ctx context.Context, shop *experiment.Shop) (string, txEffect, error) {
	live, err := h.DB.FindLiveTests(ctx, shop.ID)
	if err != nil {
		return "", nil, err
	}
	ended := 0
	for _, t := range live {
		if h.EndTest == nil {
			break
		}
		if err := h.EndTest(ctx, shop, t.ID); err != nil && !isNotFoundErr(err) {
			return "", nil, fmt.Errorf("end test %d: %w", t.ID, err)
		}
		ended++
	}
	outcome := fmt.Sprintf("uninstalled; ended %d tests", ended)
	if h.EndTest == nil && len(live) > 0 {
		outcome = fmt.Sprintf("uninstalled; %d live tests left to end (no lifecycle configured)", len(live))
	}
	return outcome, func(ctx context.Context, tx *store.Tx) error { return tx.UninstallShop(ctx, shop.ID) }, nil
}

// shopUpdatePayload is the part of SHOP_UPDATE Lift reads.
type shopUpdatePayload struct {
	ID     flexID `json:"id"`
	Name   string `json:"name"`
	Domain string `json:"domain"`
}

func (h *Webhooks) shopUpdate(ctx context.Context, shop *experiment.Shop, d *store.Delivery) (string, txEffect, error) {
	var p shopUpdatePayload
	if err := decodeDelivery(d, &p); err != nil {
		return "", nil, err
	}
	return "shop refreshed", func(ctx context.Context, tx *store.Tx) error {
		err := tx.SetShopIdentity(ctx, shop.ID, p.Name, strings.ToLower(strings.TrimSpace(p.Domain)))
		if e, ok := experiment.AsError(err); ok && e.Kind == experiment.KindConflict {
			// Another installed shop holds the domain: keep ours, refresh the name.
			return tx.SetShopIdentity(ctx, shop.ID, p.Name, "")
		}
		return err
	}, nil
}

// inventoryPayload is INVENTORY_LEVELS_UPDATE.
type inventoryPayload struct {
	InventoryItemID flexID `json:"inventory_item_id"`
	LocationID      flexID `json:"location_id"`
	Available       *int64 `json:"available"`
}

// inventory records the level. Copying stock to duplicate variants of price
// tests needs a platform call the platform.Admin interface does not offer
// yet, so the level is recorded for it.
func (h *Webhooks) inventory(ctx context.Context, shop *experiment.Shop, d *store.Delivery) (string, txEffect, error) {
	var p inventoryPayload
	if err := decodeDelivery(d, &p); err != nil {
		return "", nil, err
	}
	if p.InventoryItemID == "" || p.LocationID == "" {
		return "", nil, &unreadable{msg: "inventory_item_id and location_id are required"}
	}
	return "inventory level recorded", func(ctx context.Context, tx *store.Tx) error {
		return tx.SetInventoryLevel(ctx, shop.ID, store.InventoryLevel{
			InventoryItemID: string(p.InventoryItemID), LocationID: string(p.LocationID), Available: p.Available})
	}, nil
}

// flexID is a platform id sent as a number, a numeric string or a global id
// (gid://…/Type/123); it holds the numeric part.
type flexID string

var trailingDigits = regexp.MustCompile(`[0-9]+$`)

func (f *flexID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = ""
		return nil
	}
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		s = n.String()
	}
	if strings.HasPrefix(s, "gid://") {
		s = trailingDigits.FindString(s)
	}
	*f = flexID(s)
	return nil
}
