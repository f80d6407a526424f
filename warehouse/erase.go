package warehouse

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/liftab/lift/experiment"
)

// Eraser implements experiment.Eraser over w: reset analytics (session
// document part 3) deletes what storefronts recorded about one test.
type Eraser struct{ W *Warehouse }

var _ experiment.Eraser = Eraser{}

// erasable are the tables that hold a test's collected data, each ordered
// by (shop_id, experiment_id, …) so the delete touches only its range: the
// raw tables and the results' pre-aggregates fed from them (a reset test
// must not keep its numbers there).
var erasable = []string{"events", "assignments", "sessions", "page_views", "orders",
	"agg_event_activity", "agg_product_activity", "agg_custom_events", "agg_session_pages", "agg_visitors", "agg_visitors_copy",
	"agg_visitors_cube", "agg_visitors_copy_builds", "agg_storewide_events", "agg_orphan_loads"}

// erasingSQL counts the pending deletes of one test's rows. The command
// is matched by its text, as 18.16 writes it ("DELETE WHERE (shop_id = 1)
// AND (experiment_id = '5')") and current ClickHouse too (within
// parentheses).
const erasingSQL = `SELECT count() FROM system.mutations
WHERE database = ? AND is_done = 0 AND has(?, table) AND position(command, ?) > 0`

// WaitErased implements results.Settler: it returns once no delete
// EraseTest started for the test is pending, polling every 100 ms.
func (w *Warehouse) WaitErased(ctx context.Context, shopID int64, experimentID string) error {
	pattern := fmt.Sprintf("(shop_id = %d) AND (experiment_id = '%s')", shopID, experimentID)
	for {
		var pending uint64
		if err := w.conn.QueryRow(ctx, erasingSQL, w.db, erasable, pattern).Scan(&pending); err != nil {
			return fmt.Errorf("warehouse.WaitErased %s: %w", experimentID, err)
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("warehouse.WaitErased %s: %w", experimentID, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// EraseTest deletes the test's rows from every table. ClickHouse applies
// the delete as a mutation in the background (there is no synchronous
// delete on 18.16); reads stop seeing the rows once it finishes. On a
// sharded cluster each shard's replicas need the statement: it is not run
// ON CLUSTER here.
func (e Eraser) EraseTest(ctx context.Context, shopID, testID int64) error {
	for _, t := range erasable {
		q := fmt.Sprintf("ALTER TABLE %s.%s DELETE WHERE shop_id = ? AND experiment_id = ?", e.W.db, t)
		if err := e.W.conn.Exec(ctx, q, shopID, strconv.FormatInt(testID, 10)); err != nil {
			return fmt.Errorf("warehouse.EraseTest %s %d: %w", t, testID, err)
		}
	}
	return nil
}
