package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"
)

// WebhookService receives inbound platform webhooks and applies each
// topic's effect. Receive records a delivery once per delivery id and queues
// it; Process applies it. Every effect is idempotent — orders are versioned
// rows that fold, Postgres updates set values — and a delivery is marked
// processed in the unit of its last write, so a retry after a crash repeats
// at most harmless work.
type WebhookService struct {
	Repo   WebhookRepository
	Orders WebhookOrders
	Queue  WebhookQueue // needed by Receive only
	// EndTest ends a test through the public API's lifecycle (the path of
	// POST /v1/experiments/{id}/end); APP_UNINSTALLED uses it. Nil leaves
	// live tests running and says so in the outcome.
	EndTest func(ctx context.Context, shop *Shop, testID int64) error
	// Uninstall removes what Lift put on the platform and clears the
	// shop's configuration (InstallService.Uninstall); APP_UNINSTALLED
	// runs it after ending the tests. Nil skips it.
	Uninstall func(ctx context.Context, shop *Shop) (string, error)
	// SyncStock copies an original variant's stock to the duplicates price
	// tests made of it (InstallService.SyncStock); INVENTORY_LEVELS_UPDATE
	// runs it while a price test is live. Nil only records the level.
	SyncStock func(ctx context.Context, shop *Shop, l InventoryLevel) (string, error)
	// ThemeBlock writes Lift's app block into a newly published theme
	// (InstallService.ReinstallThemeBlock); THEMES_PUBLISH runs it while a
	// test is live. Nil only records the theme and flags tests.
	ThemeBlock func(ctx context.Context, shop *Shop, themeID string) (string, error)
	Now        func() time.Time
	// MaxTries bounds how often a failing delivery is tried before it is
	// dead-lettered. Default 5.
	MaxTries int
	// RetryHorizon is how long after an order is placed its ORDERS_CREATE
	// may still be unprocessed: its delivery, then the queue's tries and
	// their backoff. Only an ORDERS_EDITED received within it of the
	// order's creation waits for the create (retries); one received later
	// finds what the create wrote or nothing, for good. Default
	// DefaultWebhookRetryHorizon.
	RetryHorizon time.Duration
	Logger       *slog.Logger
}

// DefaultWebhookMaxTries is MaxTries when unset.
const DefaultWebhookMaxTries = 5

// DefaultWebhookRetryHorizon is RetryHorizon when unset. The queue's default
// backoff (asynq.DefaultRetryDelayFunc: n⁴ + 15 s + 0–29 s × (n+1) before
// retry n+1) spreads DefaultWebhookMaxTries tries over about 5 minutes, at
// most about 7½ (jobs: TestWebhookRetryHorizonCoversTheBackoff bounds the
// four waits by 7 min 38 s); the rest is room for the create's own delivery
// and queueing.
const DefaultWebhookRetryHorizon = 15 * time.Minute

// maxDeliveryIDChars bounds the platform's delivery id.
const maxDeliveryIDChars = 255

// WebhookReceipt is a delivery whose signature the surface verified.
type WebhookReceipt struct {
	Topic      string
	ShopDomain string
	DeliveryID string
	Body       []byte
}

// Receive records a verified delivery and queues its processing. Returns
// KindInvalidRequest when a header is missing or the body holds what the
// stores would refuse (NUL, invalid UTF-8, not JSON) — refusing at once
// beats a delivery that can never be processed; KindUnavailable when the
// delivery could not be queued (the platform's retry is accepted). A
// delivery for a shop Lift does not know is acknowledged and dropped: there
// is nothing it could change.
func (s *WebhookService) Receive(ctx context.Context, r WebhookReceipt) error {
	r.Topic, r.DeliveryID = strings.TrimSpace(r.Topic), strings.TrimSpace(r.DeliveryID)
	r.ShopDomain = NormalizeShopDomain(r.ShopDomain)
	if r.Topic == "" || r.ShopDomain == "" || r.DeliveryID == "" {
		return Errorf(KindInvalidRequest, "invalid_request", "A delivery needs the topic, shop domain and webhook id headers.")
	}
	if len(r.DeliveryID) > maxDeliveryIDChars {
		// It was there: saying it was missing sent the reader looking for
		// the wrong fault (storefront audit 2, S8).
		return Errorf(KindInvalidRequest, "invalid_request", "The webhook id header is %d bytes; it may hold at most %d.", len(r.DeliveryID), maxDeliveryIDChars)
	}
	if err := checkWebhookBody(r.Body); err != nil {
		return err
	}
	shop, err := s.Repo.FindShopByDomain(ctx, r.ShopDomain)
	if IsNotFound(err) {
		s.logger().Warn("webhook for an unknown shop", "shop", r.ShopDomain, "topic", r.Topic, "delivery", r.DeliveryID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("experiment.WebhookService.Receive: %w", err)
	}
	var d *WebhookDelivery
	_, err = s.Repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "webhook.receive", ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx WebhookTx) (WriteResult, error) {
			var err error
			d, _, err = tx.InsertDelivery(ctx, WebhookDelivery{ShopID: shop.ID, ID: r.DeliveryID, Topic: r.Topic,
				Body: r.Body, ReceivedAt: s.now()})
			return WriteResult{ResourceID: r.DeliveryID}, err
		})
	if err != nil {
		return fmt.Errorf("experiment.WebhookService.Receive %s: %w", r.DeliveryID, err)
	}
	if d.ProcessedAt != nil {
		return nil
	}
	// A redelivery of an unprocessed delivery enqueues again: the queue
	// makes that a no-op while the first is queued, and it recovers a
	// delivery whose enqueue failed after it was recorded.
	if err := s.Queue.EnqueueWebhook(ctx, shop.ID, r.DeliveryID); err != nil {
		s.logger().Error("webhook enqueue failed", "shop_id", shop.ID, "delivery", r.DeliveryID, "err", err)
		return Errorf(KindUnavailable, "unavailable", "The delivery could not be queued; retry it.")
	}
	return nil
}

// checkWebhookBody refuses a body Postgres or ClickHouse would refuse, or
// that no topic could read: such a delivery fails the same way on every try.
func checkWebhookBody(b []byte) error {
	switch {
	case !utf8.Valid(b):
		return Errorf(KindInvalidRequest, "invalid_request", "The delivery body is not valid UTF-8.")
	case bytes.IndexByte(b, 0) >= 0 || bytes.Contains(b, []byte(`\u0000`)):
		// \u0000 in a JSON string decodes to NUL, which Postgres text
		// refuses. A literal `\\u0000` (an escaped backslash) is refused
		// too: harmless, and no platform sends it.
		return Errorf(KindInvalidRequest, "invalid_request", "The delivery body holds a NUL character.")
	case !json.Valid(b):
		return Errorf(KindInvalidRequest, "invalid_request", "The delivery body is not JSON.")
	}
	return nil
}

// Process applies one delivery. A delivery already processed, or no longer
// recorded, does nothing; a body the topic cannot read is recorded as such
// and not retried. Any other failure returns an error so the queue retries
// it — until the last try (attempt.Last, or MaxTries), which moves the
// delivery to the dead letters, marks it processed and returns nil: a
// poison delivery stops there instead of failing forever.
func (s *WebhookService) Process(ctx context.Context, shopID int64, deliveryID string, attempt WebhookAttempt) error {
	ctx = WithActor(ctx, Actor{Name: "webhook", RequestID: deliveryID})
	d, err := s.Repo.FindDelivery(ctx, shopID, deliveryID)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("experiment.WebhookService.Process: %w", err)
	}
	if d.ProcessedAt != nil {
		return nil
	}
	last := attempt.Last || attempt.Try >= s.maxTries()
	err = s.apply(ctx, d)
	if err == nil {
		return nil
	}
	if last && errors.Is(err, errEditBeforeCreate) {
		// The create did not come in time: the edit is final, unattributed,
		// not a fault for the dead letters.
		return s.markProcessed(ctx, d, outcomeUnattributed, nil)
	}
	err = fmt.Errorf("experiment.WebhookService.Process %s %s: %w", d.Topic, d.ID, err)
	if !last {
		return err
	}
	if dlErr := s.deadLetter(ctx, d, err, attempt.Try); dlErr != nil {
		return errors.Join(err, dlErr)
	}
	s.logger().Error("webhook dead-lettered", "shop_id", d.ShopID, "delivery", d.ID, "topic", d.Topic, "tries", attempt.Try, "err", err)
	return nil
}

// apply runs the topic's effect and marks the delivery processed.
func (s *WebhookService) apply(ctx context.Context, d *WebhookDelivery) error {
	shop, err := s.Repo.FindShopByID(ctx, d.ShopID)
	if err != nil {
		return err
	}
	var outcome string
	var effect txEffect
	if !shop.Installed() && mirrorsPlatform[d.Topic] {
		// The uninstall cleared the shop's mirror of the platform; a late
		// delivery must not write into it (orders still count: they are
		// the results of tests that ran).
		return s.markProcessed(ctx, d, "ignored: the shop has uninstalled Lift", nil)
	}
	switch d.Topic {
	case TopicOrdersCreate, TopicOrdersEdited:
		outcome, effect, err = s.order(ctx, shop, d)
	case TopicAppUninstalled:
		outcome, effect, err = s.uninstalled(ctx, shop)
	case TopicShopUpdate:
		outcome, effect, err = s.shopUpdate(shop, d)
	case TopicThemesPublish:
		outcome, effect, err = s.themePublished(ctx, shop, d)
	case TopicInventoryLevelsUpdate:
		outcome, effect, err = s.inventory(ctx, shop, d)
	default:
		outcome = "ignored: topic not handled"
	}
	var e *unreadableBody
	if errors.As(err, &e) {
		outcome, effect, err = "unreadable: "+e.msg, nil, nil
		s.logger().Warn("webhook body unreadable", "shop_id", shop.ID, "delivery", d.ID, "topic", d.Topic, "err", e.msg)
	}
	if err != nil {
		return err
	}
	return s.markProcessed(ctx, d, outcome, effect)
}

// mirrorsPlatform are the topics that only keep Lift's copy of the shop's
// platform state (name, themes, stock) up to date.
var mirrorsPlatform = map[string]bool{TopicShopUpdate: true, TopicThemesPublish: true, TopicInventoryLevelsUpdate: true}

// txEffect is a topic's Postgres effect, run in the unit that marks the
// delivery processed.
type txEffect func(ctx context.Context, tx WebhookTx) error

// markProcessed records the outcome; fn, when set, runs in the same unit.
func (s *WebhookService) markProcessed(ctx context.Context, d *WebhookDelivery, outcome string, fn txEffect) error {
	_, err := s.Repo.Write(ctx, WriteMeta{ShopID: d.ShopID, Action: "webhook." + strings.ToLower(d.Topic), ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx WebhookTx) (WriteResult, error) {
			cur, err := tx.FindDeliveryForUpdate(ctx, d.ShopID, d.ID)
			if err != nil {
				return WriteResult{}, err
			}
			if cur.ProcessedAt == nil && fn != nil {
				if err := fn(ctx, tx); err != nil {
					return WriteResult{}, err
				}
			}
			// A replayed delivery's dead letter goes once it is processed.
			if err := tx.DeleteDeadLetter(ctx, d.ShopID, d.ID); err != nil {
				return WriteResult{}, err
			}
			return WriteResult{ResourceID: d.ID}, tx.MarkDeliveryProcessed(ctx, d.ShopID, d.ID, outcome)
		})
	return err
}

// deadLetter keeps the delivery with its last error and marks it processed
// (outcome "dead-lettered: …"), so neither the queue nor a redelivery
// tries it again.
func (s *WebhookService) deadLetter(ctx context.Context, d *WebhookDelivery, cause error, tries int) error {
	msg := cause.Error()
	_, err := s.Repo.Write(ctx, WriteMeta{ShopID: d.ShopID, Action: "webhook.dead_letter", ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx WebhookTx) (WriteResult, error) {
			cur, err := tx.FindDeliveryForUpdate(ctx, d.ShopID, d.ID)
			if err != nil || cur.ProcessedAt != nil {
				return WriteResult{}, err // processed meanwhile: nothing to keep
			}
			if err := tx.InsertDeadLetter(ctx, WebhookDeadLetter{ShopID: d.ShopID, DeliveryID: d.ID, Topic: d.Topic,
				Body: d.Body, LastError: msg, Tries: tries, At: s.now()}); err != nil {
				return WriteResult{}, err
			}
			return WriteResult{ResourceID: d.ID}, tx.MarkDeliveryProcessed(ctx, d.ShopID, d.ID, "dead-lettered: "+printable(msg, 200))
		})
	if err != nil {
		return fmt.Errorf("experiment.WebhookService.deadLetter %s: %w", d.ID, err)
	}
	return nil
}

// printable is msg cut to n runes, without NUL or invalid UTF-8, for a
// column that must accept it whatever the failure quoted.
func printable(msg string, n int) string {
	msg = strings.ToValidUTF8(strings.ReplaceAll(msg, "\x00", ""), "\uFFFD")
	if r := []rune(msg); len(r) > n {
		msg = string(r[:n]) + "…"
	}
	return msg
}

// unreadableBody is a body the topic cannot use; retrying will not help.
type unreadableBody struct{ msg string }

func (e *unreadableBody) Error() string { return e.msg }

func decodeDelivery(d *WebhookDelivery, v any) error {
	if err := json.Unmarshal(d.Body, v); err != nil {
		return &unreadableBody{msg: err.Error()}
	}
	return nil
}

func (s *WebhookService) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

func (s *WebhookService) maxTries() int {
	if s.MaxTries <= 0 {
		return DefaultWebhookMaxTries
	}
	return s.MaxTries
}

func (s *WebhookService) retryHorizon() time.Duration {
	if s.RetryHorizon <= 0 {
		return DefaultWebhookRetryHorizon
	}
	return s.RetryHorizon
}

func (s *WebhookService) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// uninstalled ends every live test through the lifecycle, then marks the
// shop uninstalled: from then on its API tokens read as invalid_token.
func (s *WebhookService) uninstalled(ctx context.Context, shop *Shop) (string, txEffect, error) {
	live, err := s.Repo.FindLiveTests(ctx, shop.ID)
	if err != nil {
		return "", nil, err
	}
	ended := 0
	for _, t := range live {
		if s.EndTest == nil {
			break
		}
		if err := s.EndTest(ctx, shop, t.ID); err != nil && !IsNotFound(err) {
			return "", nil, fmt.Errorf("end test %d: %w", t.ID, err)
		}
		ended++
	}
	outcome := fmt.Sprintf("uninstalled; ended %d tests", ended)
	if s.EndTest == nil && len(live) > 0 {
		outcome = fmt.Sprintf("uninstalled; %d live tests left to end (no lifecycle configured)", len(live))
	}
	if s.Uninstall != nil {
		cleaned, err := s.Uninstall(ctx, shop)
		if err != nil {
			return "", nil, fmt.Errorf("uninstall cleanup: %w", err)
		}
		outcome += "; " + cleaned
	}
	return outcome, func(ctx context.Context, tx WebhookTx) error { return tx.UninstallShop(ctx, shop.ID) }, nil
}

// shopUpdatePayload is the part of SHOP_UPDATE Lift reads.
type shopUpdatePayload struct {
	ID        platformID `json:"id"`
	Name      string     `json:"name"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// shopUpdate refreshes the shop's name. Its domain is not touched: Lift keys
// a shop by its permanent platform domain, the one the tracker, session
// tokens and webhooks name it by, while the payload's domain is the
// storefront's primary (custom) domain. Taking it as the key stopped a
// running test's tracking, and a domain another shop held failed inside
// an aborted transaction until the delivery was dead-lettered.
func (s *WebhookService) shopUpdate(shop *Shop, d *WebhookDelivery) (string, txEffect, error) {
	var p shopUpdatePayload
	if err := decodeDelivery(d, &p); err != nil {
		return "", nil, err
	}
	return "shop refreshed", func(ctx context.Context, tx WebhookTx) error {
		at := d.ReceivedAt // an older rename processed after a newer one is ignored
		if p.UpdatedAt != nil {
			at = *p.UpdatedAt
		}
		return tx.SetShopName(ctx, shop.ID, p.Name, at)
	}, nil
}

// inventoryPayload is INVENTORY_LEVELS_UPDATE.
type inventoryPayload struct {
	InventoryItemID platformID `json:"inventory_item_id"`
	LocationID      platformID `json:"location_id"`
	Available       *int64     `json:"available"`
	UpdatedAt       *time.Time `json:"updated_at"`
}

// inventory records the level and, while a price test is live (its
// duplicate variants exist), copies it to the original's duplicates on the
// platform. The copy sets an absolute quantity, so a retry is harmless.
func (s *WebhookService) inventory(ctx context.Context, shop *Shop, d *WebhookDelivery) (string, txEffect, error) {
	var p inventoryPayload
	if err := decodeDelivery(d, &p); err != nil {
		return "", nil, err
	}
	if p.InventoryItemID == "" || p.LocationID == "" {
		return "", nil, &unreadableBody{msg: "inventory_item_id and location_id are required"}
	}
	level := InventoryLevel{InventoryItemID: string(p.InventoryItemID), LocationID: string(p.LocationID), Available: p.Available,
		UpdatedAt: d.ReceivedAt}
	if p.UpdatedAt != nil {
		level.UpdatedAt = *p.UpdatedAt
	}
	// Deliveries are processed in parallel and retried, so they arrive out
	// of order: an older level must neither replace the recorded one nor
	// be copied onto the duplicates.
	switch cur, err := s.Repo.FindInventoryLevel(ctx, shop.ID, level.InventoryItemID, level.LocationID); {
	case err != nil && !IsNotFound(err):
		return "", nil, err
	case err == nil && cur.UpdatedAt.After(level.UpdatedAt):
		return fmt.Sprintf("ignored: a newer level (%s) is recorded", cur.UpdatedAt.UTC().Format(time.RFC3339Nano)), nil, nil
	}
	outcome := "inventory level recorded"
	if s.SyncStock != nil && p.Available != nil {
		live, err := s.Repo.FindLiveTests(ctx, shop.ID)
		if err != nil {
			return "", nil, err
		}
		if anyPriceTest(live) {
			copied, err := s.SyncStock(ctx, shop, level)
			if err != nil {
				return "", nil, err
			}
			outcome += "; " + copied
		}
	}
	return outcome, func(ctx context.Context, tx WebhookTx) error {
		return tx.SetInventoryLevel(ctx, shop.ID, level)
	}, nil
}

// anyPriceTest: a live test with a price part has duplicate variants.
func anyPriceTest(live []*Test) bool {
	for _, t := range live {
		for _, k := range t.BundledTypes() {
			if k == TypePrice {
				return true
			}
		}
	}
	return false
}
