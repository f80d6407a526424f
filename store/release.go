package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/liftab/lift/experiment"
)

// ReleasesDue implements experiment.Repository: the ended, archived and
// failed tests of installed shops, by id, whose platform resources are due
// to go. An archived test that never ended counts from its archiving, a
// failed one from its last change (its failure, or an edit since).
func (r Experiments) ReleasesDue(ctx context.Context, endedBefore time.Time, afterID int64, limit int) ([]experiment.TestRef, error) {
	rows, err := r.DB.pool.Query(ctx, `SELECT e.shop_id, e.id FROM experiments e JOIN shops s ON s.id = e.shop_id
		WHERE e.platform_released_at IS NULL AND e.status IN ('ended', 'archived', 'failed') AND e.id > $2
		  AND coalesce(e.ended_at, e.updated_at) <= $1 AND s.uninstalled_at IS NULL
		ORDER BY e.id LIMIT $3`, endedBefore, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("store.ReleasesDue: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (experiment.TestRef, error) {
		var ref experiment.TestRef
		return ref, row.Scan(&ref.ShopID, &ref.TestID)
	})
	if err != nil {
		return nil, fmt.Errorf("store.ReleasesDue: %w", err)
	}
	return out, nil
}

// MarkReleased implements experiment.Tx.
func (tx *Tx) MarkReleased(ctx context.Context, shopID, id int64, at time.Time) error {
	tag, err := tx.tx.Exec(ctx, `UPDATE experiments SET platform_released_at=$3 WHERE shop_id=$1 AND id=$2`, shopID, id, at)
	if err != nil {
		return fmt.Errorf("store.MarkReleased %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return errTestNotFound(id)
	}
	return nil
}
