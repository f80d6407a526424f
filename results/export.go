package results

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/liftab/lift/experiment"
)

// Export statuses (DESIGN §9).
const (
	ExportPending   = "pending"
	ExportRunning   = "running"
	ExportCompleted = "completed"
	ExportFailed    = "failed"
	// ExportExpired is a completed export whose file was deleted after
	// Config.ExportRetention (ExpireExports). The contract knows no such
	// status: reading one answers 404 export_not_found, saying so.
	ExportExpired = "expired"
)

// Export is a CSV export of one test's orders.
type Export struct {
	ID           string
	ShopID       int64
	ExperimentID int64
	Status       string
	RowCount     *int64 // set when completed
	File         string // name of the CSV under the export directory, set when completed
	Failure      string // why it failed, for the log and support
	CreatedAt    time.Time
	StartedAt    *time.Time
	CompletedAt  *time.Time
	ExpiredAt    *time.Time // set when its file was deleted
}

// ExportHeader is the first line of an export's CSV: one row per order as it
// stands (its latest version), oldest first.
var ExportHeader = []string{"order_id", "created_at", "test_group_index", "test_group_name", "visitor_id",
	"session_id", "revenue", "cost", "profit", "currency", "line_items", "quantity", "order_version"}

// ExportFile is where an export's CSV lives under dir.
func ExportFile(dir, exportID string) string { return filepath.Join(dir, exportID+".csv") }

// CreateExport records a pending export of a test and queues its run, in
// one unit of work with its audit entry (export.create). respond renders the
// response inside that unit, so a request under an Idempotency-Key replays
// exactly what was sent; CreateExport returns what respond returned.
// Errors: KindNotFound experiment_not_found; 422 export_not_available for a
// test that has not run; KindUnavailable when the run cannot be queued
// (nothing is created).
func (s *Service) CreateExport(ctx context.Context, shop *experiment.Shop, testID int64,
	respond func(*Export) (status int, body []byte, err error)) (int, []byte, error) {
	t, err := s.cfg.Tests.FindTestByID(ctx, shop.ID, testID)
	if err != nil {
		return 0, nil, err
	}
	if !t.Launched() {
		return 0, nil, experiment.Refuse("export_not_available", "",
			"This test has not run yet (status %s), so it has no orders to export.", t.Status)
	}
	x := &Export{ID: experiment.NewID("export_"), ShopID: shop.ID, ExperimentID: t.ID}
	res, err := s.cfg.Repo.Write(ctx, experiment.WriteMeta{ShopID: shop.ID, Action: "export.create", ResourceType: "export"},
		func(ctx context.Context, tx Tx) (experiment.WriteResult, error) {
			if err := tx.CreateExport(ctx, x); err != nil {
				return experiment.WriteResult{}, err
			}
			if err := s.cfg.Jobs.EnqueueExport(ctx, shop.ID, x.ID); err != nil {
				return experiment.WriteResult{}, experiment.Errorf(experiment.KindUnavailable, "internal_error",
					"The export could not be queued; nothing was created. Retry.")
			}
			status, body, err := respond(x)
			if err != nil {
				return experiment.WriteResult{}, err
			}
			return experiment.WriteResult{ResourceID: x.ID, Status: status, Body: body}, nil
		})
	if err != nil {
		return 0, nil, err
	}
	return res.Status, res.Body, nil
}

// FindExport reads the shop's export. Errors: KindNotFound export_not_found
// (also another shop's, and an expired one, whose message says it expired).
func (s *Service) FindExport(ctx context.Context, shopID int64, id string) (*Export, error) {
	x, err := s.cfg.Repo.FindExport(ctx, shopID, id)
	if err != nil {
		return nil, err
	}
	if x.Status == ExportExpired {
		return nil, s.expired(x)
	}
	return x, nil
}

// RunExport writes the export's CSV and marks it completed with its row
// count. A failure is returned for a retry unless last, when the export is
// marked failed instead. An export already completed or failed, or one whose
// creating unit rolled back, is left alone.
func (s *Service) RunExport(ctx context.Context, shopID int64, id string, last bool) error {
	ctx = worker(ctx, id)
	var x *Export
	_, err := s.cfg.Repo.Write(ctx, experiment.WriteMeta{ShopID: shopID, Action: "export.start", ResourceType: "export"},
		func(ctx context.Context, tx Tx) (experiment.WriteResult, error) {
			var err error
			x, err = tx.StartExport(ctx, shopID, id)
			return experiment.WriteResult{ResourceID: id}, err
		})
	if experiment.IsNotFound(err) {
		// StartExport waits for the creating unit, so absent means it rolled back.
		return nil
	}
	if err != nil {
		return fmt.Errorf("results.RunExport %s: %w", id, err)
	}
	if x.Status != ExportRunning {
		return nil
	}
	err = s.settled(ctx, x.ShopID, x.ExperimentID)
	var rows int64
	if err == nil {
		rows, err = s.writeExport(ctx, x)
	}
	if err == nil {
		err = s.finishExport(ctx, x, "export.complete", func(ctx context.Context, tx Tx) error {
			return tx.CompleteExport(ctx, x.ShopID, x.ID, filepath.Base(ExportFile(s.cfg.ExportDir, x.ID)), rows)
		})
	}
	if err == nil {
		return nil
	}
	if !last {
		return fmt.Errorf("results.RunExport %s: %w", x.ID, err)
	}
	s.cfg.Logger.Error("export failed", "export", x.ID, "shop_id", x.ShopID, "err", err)
	ferr := s.finishExport(context.WithoutCancel(ctx), x, "export.fail", func(ctx context.Context, tx Tx) error {
		return tx.FailExport(ctx, x.ShopID, x.ID, err.Error())
	})
	if ferr != nil {
		return fmt.Errorf("results.RunExport %s: %w", x.ID, errors.Join(err, ferr))
	}
	return nil
}

func (s *Service) finishExport(ctx context.Context, x *Export, action string, fn func(ctx context.Context, tx Tx) error) error {
	_, err := s.cfg.Repo.Write(ctx, experiment.WriteMeta{ShopID: x.ShopID, Action: action, ResourceType: "export"},
		func(ctx context.Context, tx Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: x.ID}, fn(ctx, tx)
		})
	return err
}
