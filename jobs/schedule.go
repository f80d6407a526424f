package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
)

// TypeScheduledAction starts or ends a test whose schedule says so.
const TypeScheduledAction = "experiment:scheduled_action"

// ScheduledAction is the payload of TypeScheduledAction.
type ScheduledAction struct {
	ShopID int64             `json:"shop_id"`
	TestID int64             `json:"experiment_id"`
	Action experiment.Action `json:"action"`
	At     time.Time         `json:"at"`
}

// Actor applies a lifecycle action on the scheduler's behalf.
// *experiment.Service implements it, so a scheduled start runs the same
// checks and platform side effects as POST /v1/experiments/{id}/start.
type Actor interface {
	// RunScheduled applies action to the test if its schedule still asks for
	// it (the merchant may have moved or removed the schedule since the job
	// was enqueued, or acted by hand). A refusal the merchant must fix (an
	// entitlement, a validation finding) is recorded on the test and is not
	// an error; only failures worth a retry are.
	RunScheduled(ctx context.Context, shopID, testID int64, action experiment.Action) error
}

// ScheduleSource finds tests whose start_at or end_at has passed. The job id
// names the test, the action and the schedule time, so each scheduled moment
// is enqueued once however many ticks see it.
func ScheduleSource(find func(ctx context.Context, now time.Time, limit int) ([]experiment.DueAction, error), limit int) Source {
	return func(ctx context.Context, now time.Time) ([]Job, error) {
		due, err := find(ctx, now, limit)
		if err != nil {
			return nil, err
		}
		jobs := make([]Job, len(due))
		for i, d := range due {
			jobs[i] = Job{
				Type:    TypeScheduledAction,
				Payload: ScheduledAction{ShopID: d.ShopID, TestID: d.TestID, Action: d.Action, At: d.At},
				ID:      fmt.Sprintf("schedule:%s:%d:%d", d.Action, d.TestID, d.At.Unix()),
				Queue:   QueueCritical,
				Timeout: 2 * time.Minute,
			}
		}
		return jobs, nil
	}
}

// HandleScheduled registers the handler of scheduled actions on w.
func HandleScheduled(w *Worker, actor Actor) {
	Handle(w, TypeScheduledAction, func(ctx context.Context, p ScheduledAction) error {
		// One actor per task: the audit log says the scheduler did it.
		ctx = experiment.WithActor(ctx, experiment.Actor{Name: "scheduler"})
		return actor.RunScheduled(ctx, p.ShopID, p.TestID, p.Action)
	})
}

// TypeLaunchChecks runs the asynchronous checks a new theme or template test
// waits for (the Lift app block in each theme it shows). Until they finish
// the test answers 409 checks_pending to everything but archive.
const TypeLaunchChecks = "experiment:launch_checks"

// LaunchChecks is the payload of TypeLaunchChecks.
type LaunchChecks struct {
	ShopID int64 `json:"shop_id"`
	TestID int64 `json:"experiment_id"`
}

// Checker runs launch checks; *experiment.Service implements it.
type Checker interface {
	// RunChecks checks the test with the platform and clears its
	// checks_pending flag; an error retries the job.
	RunChecks(ctx context.Context, shopID, testID int64) error
}

// ChecksJob is the job that checks a newly created test.
func ChecksJob(shopID, testID int64) Job {
	return Job{Type: TypeLaunchChecks, Payload: LaunchChecks{ShopID: shopID, TestID: testID},
		ID: fmt.Sprintf("checks:%d", testID), Queue: QueueCritical, Timeout: time.Minute}
}

// HandleChecks registers the handler of launch checks on w.
func HandleChecks(w *Worker, c Checker) {
	Handle(w, TypeLaunchChecks, func(ctx context.Context, p LaunchChecks) error {
		ctx = experiment.WithActor(ctx, experiment.Actor{Name: "worker"})
		return c.RunChecks(ctx, p.ShopID, p.TestID)
	})
}

// ChecksQueue is the experiment.JobQueue over asynq: launch checks go to the
// critical queue under the test's job id, so a second enqueue is a no-op.
type ChecksQueue struct{ Client *Client }

// EnqueueCatalogRefresh implements experiment.JobQueue: a refresh of the
// shop's catalog, at most one every RecheckEvery (the job id names the
// shop and the slot, so the saves of a merchant fixing a zone queue one).
func (q ChecksQueue) EnqueueCatalogRefresh(ctx context.Context, shopID int64) error {
	j := CatalogRefreshJob(shopID, RecheckEvery, time.Now())
	j.ID = "catalog-recheck:" + strings.TrimPrefix(j.ID, "catalog:")
	err := q.Client.Enqueue(ctx, j)
	if errors.Is(err, ErrDuplicate) {
		return nil
	}
	return err
}

// RecheckEvery spaces the catalog refreshes a shop's saves queue.
const RecheckEvery = 5 * time.Minute

// EnqueueChecks implements experiment.JobQueue.
func (q ChecksQueue) EnqueueChecks(ctx context.Context, shopID, testID int64) error {
	err := q.Client.Enqueue(ctx, ChecksJob(shopID, testID))
	if errors.Is(err, ErrDuplicate) {
		return nil
	}
	return err
}
