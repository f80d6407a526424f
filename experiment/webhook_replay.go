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

// Replay queues a dead-lettered delivery for processing again, with fresh
// tries: in one unit (audited webhook.replay) the delivery is reopened,
// then its replay is queued as a task named by the dead letter. The dead
// letter stays until the delivery is processed (markProcessed removes it),
// so a replay whose queueing failed is still listed and is mended by
// replaying again, and replaying the same dead letter twice queues one
// task. KindNotFound delivery_not_found for an unknown delivery;
// KindConflict delivery_processed for one processed normally and
// delivery_pending for one not dead-lettered that is still being tried.
func (s *WebhookService) Replay(ctx context.Context, shopID int64, deliveryID string) error {
	var dead *WebhookDeadLetter
	_, err := s.Repo.Write(ctx, WriteMeta{ShopID: shopID, Action: "webhook.replay", ResourceType: "webhook_delivery"},
		func(ctx context.Context, tx WebhookTx) (WriteResult, error) {
			d, err := tx.FindDeliveryForUpdate(ctx, shopID, deliveryID)
			if err != nil {
				return WriteResult{}, err
			}
			dead, err = tx.FindDeadLetter(ctx, shopID, deliveryID)
			switch {
			case IsNotFound(err) && d.ProcessedAt != nil:
				return WriteResult{}, Errorf(KindConflict, "delivery_processed",
					"Delivery %s was processed (%s); only a dead-lettered delivery is replayed.", deliveryID, d.Outcome)
			case IsNotFound(err):
				return WriteResult{}, Errorf(KindConflict, "delivery_pending",
					"Delivery %s is still being tried; only a dead-lettered delivery is replayed.", deliveryID)
			case err != nil:
				return WriteResult{}, err
			}
			return WriteResult{ResourceID: deliveryID}, tx.ReopenDelivery(ctx, shopID, deliveryID)
		})
	if err != nil {
		return fmt.Errorf("experiment.WebhookService.Replay %s: %w", deliveryID, err)
	}
	if err := s.Queue.RequeueWebhook(ctx, shopID, deliveryID, dead.At); err != nil {
		return fmt.Errorf("experiment.WebhookService.Replay %s: reopened but not queued (replay it again): %w", deliveryID, err)
	}
	return nil
}
