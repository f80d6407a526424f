package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/liftab/lift/experiment"
)

// TypeCatalogRefresh reads a shop's catalog from the platform again and
// replaces its catalog mirror (experiment.InstallService.RefreshCatalog):
// the platform sends no product webhooks, so this is how products added,
// prices and unit costs changed after the install reach the mirror.
const TypeCatalogRefresh = "shop:catalog_refresh"

// CatalogRefreshTask is the payload of TypeCatalogRefresh.
type CatalogRefreshTask struct {
	ShopID int64     `json:"shop_id"`
	At     time.Time `json:"at"` // when the scheduler found it due: a task in Redis says which slot queued it
}

// CatalogRefreshTimeout bounds one refresh: a large catalog is read with a
// bulk operation the platform may queue behind another for minutes.
const CatalogRefreshTimeout = 30 * time.Minute

// CatalogRefreshSource gives, once per slot of every, one refresh job per
// shop find lists (store.DB.FindInstalledShopIDs: installed, with a
// platform token). The job id names the shop and the slot, so one shop's
// refresh is queued once a slot however many ticks or schedulers see it
// due, and a refresh that failed for good (its id kept archived) blocks no
// later slot. Should a slot's refresh, retries and all, outlast the
// interval, the next slot's waits for its bulk read (the platform client
// runs one per shop) and its write for the shop's row lock. The ticks in
// between ask nothing of Postgres.
func CatalogRefreshSource(every time.Duration, find func(ctx context.Context) ([]int64, error)) Source {
	slotOf := func(now time.Time) int64 { return catalogSlot(every, now) }
	return slotSource(slotOf, func(ctx context.Context, now time.Time, _ int64) ([]Job, error) {
		shops, err := find(ctx)
		if err != nil {
			return nil, err
		}
		jobs := make([]Job, len(shops))
		for i, id := range shops {
			jobs[i] = CatalogRefreshJob(id, every, now)
		}
		return jobs, nil
	})
}

// catalogSlot numbers the slot of every that now falls in, from 1 (so the
// source's zero "done" names none).
func catalogSlot(every time.Duration, now time.Time) int64 {
	return now.Unix()/max(int64(every/time.Second), 1) + 1
}

// CatalogRefreshJob is the refresh of a shop in the slot of every that
// now falls in. The finished task is kept for the slot only: its id names
// the slot, so no later tick can repeat it.
func CatalogRefreshJob(shopID int64, every time.Duration, now time.Time) Job {
	return Job{Type: TypeCatalogRefresh, Payload: CatalogRefreshTask{ShopID: shopID, At: now.UTC()},
		ID: fmt.Sprintf("catalog:%d:%d", shopID, catalogSlot(every, now)), Queue: QueueLow,
		Timeout: CatalogRefreshTimeout, Retention: every}
}

// HandleCatalogRefresh registers refresh, the composition root's call of
// the use case (it finds the shop and logs the outcome), as the handler of
// TypeCatalogRefresh; its error retries the task.
func HandleCatalogRefresh(w *Worker, refresh func(ctx context.Context, shopID int64) error) {
	Handle(w, TypeCatalogRefresh, func(ctx context.Context, p CatalogRefreshTask) error {
		// The audit log says the scheduler refreshed it.
		ctx = experiment.WithActor(ctx, experiment.Actor{Name: "scheduler"})
		return refresh(ctx, p.ShopID)
	})
}
