package warehouse

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/liftab/lift/ingest"
)

// The storefront rows are ingest's (ingest/rows.go): the warehouse implements
// ingest.Sink over them. The aliases keep the warehouse's other writers (the
// webhook orders job, the benches, the tests) spelling them as before.
type (
	Event      = ingest.Event
	Assignment = ingest.Assignment
	Session    = ingest.Session
	PageView   = ingest.PageView
	Order      = ingest.Order
	Batch      = ingest.Batch
)

var _ ingest.Sink = (*Warehouse)(nil)

// Version of an assignment received at t: later receipts get lower versions,
// so ReplacingMergeTree(version), which keeps the highest, keeps the first.
func FirstWinsVersion(t time.Time) uint64 { return math.MaxUint64 - uint64(t.UnixNano()) }

// Insert writes every row of b, one INSERT per non-empty table. It is not
// atomic across tables: on error the caller retries the whole batch, and the
// rows that already landed are folded by their ids (see the row types).
func (w *Warehouse) Insert(ctx context.Context, b *Batch) error {
	for _, step := range []func(context.Context, *Batch) error{
		w.insertEvents, w.insertAssignments, w.insertSessions, w.insertPageViews, w.insertOrders,
	} {
		if err := step(ctx, b); err != nil {
			return fmt.Errorf("warehouse.Insert: %w", err)
		}
	}
	return nil
}
