package warehouse

import (
	"context"
	"fmt"
	"strconv"

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
