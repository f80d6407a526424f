package results

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// RollupPreparer is a Warehouse whose reads use a finalized copy of each
// test's rollup base (the ClickHouse warehouse). The first read after
// ClickHouse makes a new base writes that copy, seconds for a large test;
// PrepareRollup writes it ahead of the reads, when the base is large
// enough and has none, and says whether it wrote one.
type RollupPreparer interface {
	PrepareRollup(ctx context.Context, shopID int64, experimentID string) (built bool, err error)
}

// Settler is a Warehouse whose deletes run in the background (reset
// analytics' erase is a ClickHouse mutation): WaitErased returns once no
// delete of the test's rows is pending, or with ctx's error.
type Settler interface {
	WaitErased(ctx context.Context, shopID int64, experimentID string) error
}

// settled waits, where the warehouse can say, until the test's erased rows
// are gone: a snapshot, custom query or export kept from a read during the
// erase would show the erased numbers for hours, and a session analytics
// answer the erased numbers the merchant just reset.
func (s *Service) settled(ctx context.Context, shopID, testID int64) error {
	return settled(ctx, s.cfg.Warehouse, shopID, testID)
}

func settled(ctx context.Context, w Warehouse, shopID, testID int64) error {
	if w, ok := w.(Settler); ok {
		return w.WaitErased(ctx, shopID, strconv.FormatInt(testID, 10))
	}
	return nil
}

// RunningTest names a running test.
type RunningTest struct{ ShopID, TestID int64 }

// PrepareEvery is how often the worker looks at each running test's
// rollup: a new base part appears when ClickHouse merges the old one, which
// for a large test is rare, so a look costs one small query most times.
const PrepareEvery = 15 * time.Minute

// RollupsToPrepare lists up to limit running tests for the worker to keep
// their rollups copied (PrepareRollup); none when the warehouse has no
// rollup to prepare.
func (s *Service) RollupsToPrepare(ctx context.Context, limit int) ([]RunningTest, error) {
	if _, ok := s.cfg.Warehouse.(RollupPreparer); !ok {
		return nil, nil
	}
	tests, err := s.cfg.Repo.FindRunningTests(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("results.RollupsToPrepare: %w", err)
	}
	return tests, nil
}

// PrepareRollup writes the finalized copy of a test's new rollup base, so
// the admin panel's next view, snapshot or custom query reads it instead
// of writing it. A test without a large enough rollup, or already copied,
// is left as it is.
func (s *Service) PrepareRollup(ctx context.Context, shopID, testID int64) error {
	p, ok := s.cfg.Warehouse.(RollupPreparer)
	if !ok {
		return nil
	}
	built, err := p.PrepareRollup(ctx, shopID, strconv.FormatInt(testID, 10))
	if err != nil {
		return fmt.Errorf("results.PrepareRollup %d: %w", testID, err)
	}
	if built {
		s.cfg.Logger.Info("results: rollup copy written ahead of reads", "shop_id", shopID, "experiment_id", testID)
	}
	return nil
}
