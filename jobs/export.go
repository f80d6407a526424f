package jobs

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/store"
	"github.com/liftab/lift/warehouse"
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

// ExportHeader is the first line of an export's CSV: one row per order as it
// stands (its latest version), oldest first.
var ExportHeader = []string{"order_id", "created_at", "test_group_index", "test_group_name", "visitor_id",
	"session_id", "revenue", "cost", "profit", "currency", "line_items", "quantity", "order_version"}

// Exports runs export jobs.
type Exports struct {
	DB        *store.DB
	Warehouse *warehouse.Warehouse
	Dir       string // data_dir/exports; the API serves downloads from it
	Logger    *slog.Logger
}

// HandleExports registers the export job on w.
func HandleExports(w *Worker, e *Exports) { Handle(w, TypeExport, e.Run) }

// ExportFile is where an export's CSV lives under dir.
func ExportFile(dir, exportID string) string { return filepath.Join(dir, exportID+".csv") }

// Run writes the export's CSV and marks it completed with its row count. A
// failure is retried while the job has attempts left; the last one marks
// the export failed. An export already completed or failed is left alone.
func (e *Exports) Run(ctx context.Context, p ExportTask) error {
	ctx = experiment.WithActor(ctx, experiment.Actor{Name: "worker", RequestID: p.ExportID})
	x, err := e.DB.StartExport(ctx, p.ShopID, p.ExportID)
	if isNotFoundErr(err) {
		// The API enqueues inside the transaction that records the export;
		// StartExport waits for it, so absent means it rolled back.
		return nil
	}
	if err != nil {
		return fmt.Errorf("jobs.Exports.Run %s: %w", p.ExportID, err)
	}
	if x.Status != store.ExportRunning {
		return nil
	}
	rows, err := e.write(ctx, x)
	if err == nil {
		err = e.DB.CompleteExport(ctx, x.ShopID, x.ID, filepath.Base(ExportFile(e.Dir, x.ID)), rows)
	}
	if err == nil {
		return nil
	}
	if !exportLastAttempt(ctx) {
		return fmt.Errorf("jobs.Exports.Run %s: %w", x.ID, err)
	}
	e.logger().Error("export failed", "export", x.ID, "shop_id", x.ShopID, "err", err)
	if ferr := e.DB.FailExport(context.WithoutCancel(ctx), x.ShopID, x.ID, err.Error()); ferr != nil {
		return fmt.Errorf("jobs.Exports.Run %s: %w", x.ID, errors.Join(err, ferr))
	}
	return nil
}

// exportLastAttempt reports whether a failure now is final: the task has no
// retries left, or the handler runs outside asynq (tests, tools).
func exportLastAttempt(ctx context.Context) bool {
	n, ok1 := asynq.GetRetryCount(ctx)
	max, ok2 := asynq.GetMaxRetry(ctx)
	return !ok1 || !ok2 || n >= max
}

// write streams the test's orders from ClickHouse into a temporary file and
// renames it into place once complete, so a download never sees half a file.
func (e *Exports) write(ctx context.Context, x *store.Export) (int64, error) {
	t, err := e.DB.FindTestByID(ctx, x.ShopID, x.ExperimentID)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(e.Dir, 0o750); err != nil {
		return 0, fmt.Errorf("export dir: %w", err)
	}
	final := ExportFile(e.Dir, x.ID)
	f, err := os.CreateTemp(e.Dir, x.ID+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename this finds nothing
	defer f.Close()
	bw := bufio.NewWriterSize(f, 64<<10)
	w := csv.NewWriter(bw)
	if err := w.Write(ExportHeader); err != nil {
		return 0, err
	}
	rec := make([]string, len(ExportHeader))
	n, err := e.Warehouse.ExportOrders(ctx, x.ShopID, strconv.FormatInt(x.ExperimentID, 10), func(r *warehouse.ExportRow) error {
		fillExportRecord(rec, r, t)
		return w.Write(rec)
	})
	if err != nil {
		return 0, err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	if err := os.Rename(f.Name(), final); err != nil {
		return 0, fmt.Errorf("export file: %w", err)
	}
	return n, nil
}

func fillExportRecord(rec []string, r *warehouse.ExportRow, t *experiment.Test) {
	name := ""
	if g := t.Group(int(r.TestGroup)); g != nil {
		name = g.Name
	}
	money := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	rec[0] = r.OrderID
	rec[1] = r.CreatedAt.UTC().Format(time.RFC3339)
	rec[2] = strconv.Itoa(int(r.TestGroup))
	rec[3] = name
	rec[4] = r.VisitorID
	rec[5] = r.SessionID
	rec[6] = money(r.Revenue)
	rec[7] = money(r.Cost)
	rec[8] = money(r.Revenue - r.Cost)
	rec[9] = r.Currency
	rec[10] = strconv.FormatUint(r.LineItems, 10)
	rec[11] = strconv.FormatUint(r.Quantity, 10)
	rec[12] = strconv.FormatUint(r.Version, 10)
}

func (e *Exports) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.Default()
	}
	return e.Logger
}
