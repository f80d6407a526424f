package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/experiment"
)

// TypeWebhook processes one inbound platform webhook delivery. POST
// /api/webhooks records the delivery and enqueues it; the effect runs in
// experiment.WebhookService.Process.
const TypeWebhook = "webhook:process"

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

// WebhookProcessor applies a delivery; *experiment.WebhookService is one.
type WebhookProcessor interface {
	Process(ctx context.Context, shopID int64, deliveryID string, attempt experiment.WebhookAttempt) error
}

// HandleWebhooks registers the webhook processor on w. The processor learns
// which try runs, so the last one can dead-letter a poison delivery instead
// of failing it again.
func HandleWebhooks(w *Worker, p WebhookProcessor) {
	Handle(w, TypeWebhook, func(ctx context.Context, t WebhookTask) error {
		return p.Process(ctx, t.ShopID, t.DeliveryID, webhookAttempt(ctx))
	})
}

// webhookAttempt reads asynq's retry count: try n+1 of max+1. Outside a
// task (no count) it is a first try that the processor bounds itself.
func webhookAttempt(ctx context.Context) experiment.WebhookAttempt {
	n, ok1 := asynq.GetRetryCount(ctx)
	max, ok2 := asynq.GetMaxRetry(ctx)
	if !ok1 || !ok2 {
		return experiment.WebhookAttempt{Try: 1}
	}
	return experiment.WebhookAttempt{Try: n + 1, Last: n >= max}
}

// Enqueuer queues jobs; *Client is one.
type Enqueuer interface {
	Enqueue(ctx context.Context, j Job) error
}

// WebhookQueue implements experiment.WebhookQueue on the critical queue.
type WebhookQueue struct{ Jobs Enqueuer }

// EnqueueWebhook queues the delivery's job; one already queued (same task
// id) is not an error.
func (q WebhookQueue) EnqueueWebhook(ctx context.Context, shopID int64, deliveryID string) error {
	if err := q.Jobs.Enqueue(ctx, WebhookJob(shopID, deliveryID)); err != nil && !errors.Is(err, ErrDuplicate) {
		return err
	}
	return nil
}

// RequeueWebhook queues a replayed delivery as a task of its own (the first
// may be kept as done under WebhookJob's id for a day), named by the dead
// letter it replays: replaying the same dead letter twice queues one task.
func (q WebhookQueue) RequeueWebhook(ctx context.Context, shopID int64, deliveryID string, deadLetteredAt time.Time) error {
	j := WebhookJob(shopID, deliveryID)
	j.ID += fmt.Sprintf(":replay:%d", deadLetteredAt.UnixMicro())
	if err := q.Jobs.Enqueue(ctx, j); err != nil && !errors.Is(err, ErrDuplicate) {
		return err
	}
	return nil
}
