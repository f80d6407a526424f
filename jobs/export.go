package jobs

import (
	"context"
	"time"

	"github.com/liftab/lift/results"
)

// TypeExport writes the CSV of one export (POST /v1/experiments/{id}/exports).
const TypeExport = "export:run"

// ExportTask is the payload of TypeExport.
type ExportTask struct {
	ShopID   int64  `json:"shop_id"`
	ExportID string `json:"export_id"`
}

// ExportJob is the job of an export, on the low queue; its id is the
// export's, so it is queued once.
func ExportJob(shopID int64, exportID string) Job {
	return Job{Type: TypeExport, Payload: ExportTask{ShopID: shopID, ExportID: exportID},
		ID: "export:" + exportID, Queue: QueueLow, Timeout: 30 * time.Minute}
}

// HandleExports registers the export job on w: a failure is retried while
// the task has attempts left, and the last one marks the export failed.
func HandleExports(w *Worker, s *results.Service) {
	Handle(w, TypeExport, func(ctx context.Context, p ExportTask) error {
		return s.RunExport(ctx, p.ShopID, p.ExportID, lastAttempt(ctx))
	})
}
