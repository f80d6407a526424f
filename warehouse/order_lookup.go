package warehouse

import (
	"context"
	"fmt"
	"time"

	"github.com/liftab/lift/experiment"
)

// OrderLookup implements experiment.OrderLookup over w: the admin tools'
// read of how one order was attributed.
type OrderLookup struct{ W *Warehouse }

var _ experiment.OrderLookup = OrderLookup{}

// Every stored version, unmerged: the admin tool shows the edits and
// refunds an order went through, not only the standing row.
const findOrderSQL = `SELECT experiment_id, version, test_group, revenue, currency, source, created_at,
	length(line_product_ids)
FROM %s.orders
WHERE shop_id = ? AND order_id = ?
ORDER BY experiment_id, version`

// FindOrder returns every version of order orderID of shop per test, oldest
// first; KindNotFound order_not_found when the warehouse holds none.
func (o OrderLookup) FindOrder(ctx context.Context, shopID int64, orderID string) ([]experiment.OrderVersion, error) {
	rows, err := o.W.conn.Query(ctx, fmt.Sprintf(findOrderSQL, o.W.db), shopID, orderID)
	if err != nil {
		return nil, fmt.Errorf("warehouse.FindOrder %s: %w", orderID, err)
	}
	defer rows.Close()
	var out []experiment.OrderVersion
	for rows.Next() {
		var v experiment.OrderVersion
		var created time.Time
		var lines uint64
		if err := rows.Scan(&v.ExperimentID, &v.Version, &v.TestGroup, &v.Revenue, &v.Currency, &v.Source, &created, &lines); err != nil {
			return nil, fmt.Errorf("warehouse.FindOrder %s: %w", orderID, err)
		}
		v.CreatedAt, v.LineItems = created.UTC(), int(lines)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("warehouse.FindOrder %s: %w", orderID, err)
	}
	if len(out) == 0 {
		return nil, experiment.Errorf(experiment.KindNotFound, "order_not_found", "No order %s is attributed in this shop.", orderID)
	}
	return out, nil
}
