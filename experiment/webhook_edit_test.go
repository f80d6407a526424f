package experiment_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
)

// TestEditRetriedOnlyWhileCreateMayBePending: an ORDERS_EDITED that finds no
// attributed order waits for its create (the queue retries it) only when it
// is received within the retry horizon of the order's creation; an edit to
// an order placed earlier ends unattributed at once, on its first try and
// with no dead letter, instead of four failed tries and their backoff for
// the same outcome (review 4, item 5).
func TestEditRetriedOnlyWhileCreateMayBePending(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		received time.Time
		noTime   bool          // the body states no created_at
		horizon  time.Duration // 0: the default
		attempt  experiment.WebhookAttempt
		retried  bool
	}{
		{name: "JustPlaced", received: created.Add(2 * time.Minute), attempt: experiment.WebhookAttempt{Try: 1}, retried: true},
		{name: "JustInsideTheHorizon", received: created.Add(experiment.DefaultWebhookRetryHorizon - time.Second),
			attempt: experiment.WebhookAttempt{Try: 4}, retried: true},
		{name: "AtTheHorizon", received: created.Add(experiment.DefaultWebhookRetryHorizon), attempt: experiment.WebhookAttempt{Try: 1}},
		{name: "PlacedDaysAgo", received: created.AddDate(0, 0, 3), attempt: experiment.WebhookAttempt{Try: 1}},
		{name: "PlacedAheadOfReceipt", received: created.Add(-time.Minute), attempt: experiment.WebhookAttempt{Try: 1}, retried: true},
		{name: "NoCreationTime", received: created.AddDate(0, 0, 3), noTime: true, attempt: experiment.WebhookAttempt{Try: 1}, retried: true},
		{name: "RecentOnTheLastTry", received: created.Add(time.Minute), attempt: experiment.WebhookAttempt{Try: 5, Last: true}},
		{name: "RecentOnTheServicesLastTry", received: created.Add(time.Minute), attempt: experiment.WebhookAttempt{Try: experiment.DefaultWebhookMaxTries}},
		{name: "LongerHorizon", received: created.Add(time.Hour), horizon: 2 * time.Hour, attempt: experiment.WebhookAttempt{Try: 1}, retried: true},
		{name: "ShorterHorizon", received: created.Add(2 * time.Minute), horizon: time.Minute, attempt: experiment.WebhookAttempt{Try: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newWebhookFakes()
			f.live = []*experiment.Test{{ID: 42, Status: experiment.StatusActive, Groups: []experiment.Group{{Index: 0}, {Index: 1}}}}
			placed := ""
			if !tc.noTime {
				placed = fmt.Sprintf(`"created_at":%q,`, created.Format(time.RFC3339))
			}
			body := `{"id":5001,` + placed + `"updated_at":"` + tc.received.Format(time.RFC3339) + `","current_total_price":"30.00"}`
			if _, _, err := f.InsertDelivery(ctx, experiment.WebhookDelivery{ShopID: 1, ID: "e", Topic: experiment.TopicOrdersEdited,
				Body: []byte(body), ReceivedAt: tc.received}); err != nil {
				t.Fatal(err)
			}
			svc := f.service()
			svc.RetryHorizon = tc.horizon
			err := svc.Process(ctx, 1, "e", tc.attempt)
			d, _ := f.FindDelivery(ctx, 1, "e")
			if tc.retried {
				if err == nil || d.ProcessedAt != nil {
					t.Fatalf("want a retry: err %v, outcome %q", err, d.Outcome)
				}
				return
			}
			if err != nil || d.ProcessedAt == nil || !strings.HasPrefix(d.Outcome, "unattributed") || len(f.dead) != 0 || len(f.orders) != 0 {
				t.Fatalf("want final and unattributed: err %v, outcome %q, dead letters %d, orders %d", err, d.Outcome, len(f.dead), len(f.orders))
			}
		})
	}
}
