package experiment

import (
	"context"
	"fmt"
)

// Replaying dead letters (docs/webhooks-exports.md): a delivery the worker
// gave up on keeps its signed body, so once the cause is mended (a bug
// fixed, a store back) it can be processed as if it had just arrived.

// DeadLetters returns the shop's dead-lettered deliveries, oldest first.
func (s *WebhookService) DeadLetters(ctx context.Context, shopID int64) ([]WebhookDeadLetter, error) {
	l, err := s.Repo.FindDeadLetters(ctx, shopID)
	if err != nil {
		return nil, fmt.Errorf("experiment.WebhookService.DeadLetters: %w", err)
	}
	return l, nil
}

// Replay queues a dead-lettered delivery for processing again: in one unit
// (audited webhook.replay) its dead letter is removed and the delivery
// reopened, then its processing is queued as a new task, which gets the
// usual tries. A delivery that is still unprocessed (queued, or replayed
// before and not queued because the queue failed) is queued again, so a
// replay that failed halfway is mended by replaying again. KindNotFound
// delivery_not_found for an unknown delivery; KindConflict
// delivery_processed for one processed normally.
func (s *WebhookService) Replay(ctx context.Context, shopID int64, deliveryID string) error {
	_, err := s.Repo.Write(ctx, WriteMeta{ShopID: shopID, Action: "webhook.replay", ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx WebhookTx) (WriteResult, error) {
			d, err := tx.FindDeliveryForUpdate(ctx, shopID, deliveryID)
			if err != nil {
				return WriteResult{}, err
			}
			dead, err := tx.TakeDeadLetter(ctx, shopID, deliveryID)
			switch {
			case err != nil:
				return WriteResult{}, err
			case dead:
				return WriteResult{ResourceID: deliveryID}, tx.ReopenDelivery(ctx, shopID, deliveryID)
			case d.ProcessedAt == nil:
				return WriteResult{ResourceID: deliveryID}, nil
			}
			return WriteResult{}, Errorf(KindConflict, "delivery_processed",
				"Delivery %s was processed (%s); only a dead-lettered delivery is replayed.", deliveryID, d.Outcome)
		})
	if err != nil {
		return fmt.Errorf("experiment.WebhookService.Replay %s: %w", deliveryID, err)
	}
	if err := s.Queue.RequeueWebhook(ctx, shopID, deliveryID); err != nil {
		return fmt.Errorf("experiment.WebhookService.Replay %s: reopened but not queued (replay it again): %w", deliveryID, err)
	}
	return nil
}
