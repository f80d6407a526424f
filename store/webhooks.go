package store

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/liftab/lift/experiment"
)

// Delivery is one inbound platform webhook delivery (POST /api/webhooks).
type Delivery = experiment.WebhookDelivery

// InventoryLevel is the stock of an inventory item at a location.
type InventoryLevel = experiment.InventoryLevel

// DeadLetter is a delivery the worker gave up on.
type DeadLetter = experiment.WebhookDeadLetter

// WebhookRepo is the webhook service's repository (experiment.WebhookRepository)
// over db: its Write runs the unit of work of DB.Write and hands the *Tx on
// as the service's WebhookTx.
type WebhookRepo struct{ *DB }

var _ experiment.WebhookRepository = WebhookRepo{}
var _ experiment.WebhookTx = (*Tx)(nil)

// Write is DB.Write with the transaction seen as an experiment.WebhookTx.
func (r WebhookRepo) Write(ctx context.Context, meta experiment.WriteMeta,
	fn func(ctx context.Context, tx experiment.WebhookTx) (experiment.WriteResult, error)) (experiment.WriteResult, error) {
	return r.DB.Write(ctx, meta, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) { return fn(ctx, tx) })
}

// InsertDelivery keeps a delivery unless its id was seen for the shop
// before. It returns the stored delivery (the earlier one for a redelivery)
// and whether this call created it. A zero ReceivedAt takes the unit's time.
func (tx *Tx) InsertDelivery(ctx context.Context, d Delivery) (*Delivery, bool, error) {
	at := d.ReceivedAt
	if at.IsZero() {
		at = tx.now
	}
	tag, err := tx.tx.Exec(ctx, `INSERT INTO webhook_deliveries (shop_id, id, topic, body, received_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (shop_id, id) DO NOTHING`, d.ShopID, d.ID, d.Topic, d.Body, at)
	if err != nil {
		return nil, false, fmt.Errorf("store.InsertDelivery %s: %w", d.ID, err)
	}
	out, err := findDelivery(ctx, tx.tx, d.ShopID, d.ID, false)
	if err != nil {
		return nil, false, fmt.Errorf("store.InsertDelivery %s: %w", d.ID, err)
	}
	return out, tag.RowsAffected() == 1, nil
}

// InsertDeadLetter keeps a delivery the worker gave up on. The last error
// may quote what the stores refused (NUL, invalid UTF-8), so it is cleaned
// before it meets a text column; the body is bytea and kept as signed.
func (tx *Tx) InsertDeadLetter(ctx context.Context, l DeadLetter) error {
	at := l.At
	if at.IsZero() {
		at = tx.now
	}
	msg := strings.ToValidUTF8(strings.ReplaceAll(l.LastError, "\x00", ""), "\uFFFD")
	_, err := tx.tx.Exec(ctx, `INSERT INTO webhook_dead_letters (shop_id, webhook_id, topic, body, last_error, tries, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (shop_id, webhook_id)
		DO UPDATE SET last_error = EXCLUDED.last_error, tries = EXCLUDED.tries, created_at = EXCLUDED.created_at`,
		l.ShopID, l.DeliveryID, l.Topic, l.Body, msg, l.Tries, at)
	if err != nil {
		return fmt.Errorf("store.InsertDeadLetter %s: %w", l.DeliveryID, err)
	}
	return nil
}

// FindDeadLetter returns the delivery's dead letter; KindNotFound
// dead_letter_not_found when it has none.
func (tx *Tx) FindDeadLetter(ctx context.Context, shopID int64, id string) (*DeadLetter, error) {
	var l DeadLetter
	err := tx.tx.QueryRow(ctx, `SELECT shop_id, webhook_id, topic, body, last_error, tries, created_at
		FROM webhook_dead_letters WHERE shop_id = $1 AND webhook_id = $2`, shopID, id).
		Scan(&l.ShopID, &l.DeliveryID, &l.Topic, &l.Body, &l.LastError, &l.Tries, &l.At)
	if err != nil {
		return nil, fmt.Errorf("store.FindDeadLetter %s: %w", id, notFound(err, "dead_letter_not_found", "delivery %s has no dead letter", id))
	}
	return &l, nil
}

// DeleteDeadLetter removes the delivery's dead letter, if any: it was
// replayed and is now processed.
func (tx *Tx) DeleteDeadLetter(ctx context.Context, shopID int64, id string) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM webhook_dead_letters WHERE shop_id = $1 AND webhook_id = $2`, shopID, id); err != nil {
		return fmt.Errorf("store.DeleteDeadLetter %s: %w", id, err)
	}
	return nil
}

// ReopenDelivery marks the delivery not processed, for a replay.
func (tx *Tx) ReopenDelivery(ctx context.Context, shopID int64, id string) error {
	_, err := tx.tx.Exec(ctx, `UPDATE webhook_deliveries SET processed_at = NULL, outcome = ''
		WHERE shop_id = $1 AND id = $2`, shopID, id)
	if err != nil {
		return fmt.Errorf("store.ReopenDelivery %s: %w", id, err)
	}
	return nil
}

// FindDeadLetters returns the shop's dead-lettered deliveries, oldest first.
func (db *DB) FindDeadLetters(ctx context.Context, shopID int64) ([]DeadLetter, error) {
	rows, err := db.pool.Query(ctx, `SELECT l.shop_id, l.webhook_id, l.topic, l.body, l.last_error, l.tries, l.created_at,
			coalesce(d.processed_at IS NULL, false)
		FROM webhook_dead_letters l LEFT JOIN webhook_deliveries d ON d.shop_id = l.shop_id AND d.id = l.webhook_id
		WHERE l.shop_id = $1 ORDER BY l.created_at, l.webhook_id`, shopID)
	if err != nil {
		return nil, fmt.Errorf("store.FindDeadLetters %d: %w", shopID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeadLetter, error) {
		var l DeadLetter
		err := r.Scan(&l.ShopID, &l.DeliveryID, &l.Topic, &l.Body, &l.LastError, &l.Tries, &l.At, &l.Reopened)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("store.FindDeadLetters %d: %w", shopID, err)
	}
	return out, nil
}

// FindDelivery returns KindNotFound delivery_not_found when absent.
func (db *DB) FindDelivery(ctx context.Context, shopID int64, id string) (*Delivery, error) {
	d, err := findDelivery(ctx, db.pool, shopID, id, false)
	if err != nil {
		return nil, fmt.Errorf("store.FindDelivery %s: %w", id, err)
	}
	return d, nil
}

// FindDeliveryForUpdate locks the delivery for the rest of the transaction,
// so two workers never process it at once.
func (tx *Tx) FindDeliveryForUpdate(ctx context.Context, shopID int64, id string) (*Delivery, error) {
	return findDelivery(ctx, tx.tx, shopID, id, true)
}

func findDelivery(ctx context.Context, q querier, shopID int64, id string, lock bool) (*Delivery, error) {
	sql := `SELECT shop_id, id, topic, body, received_at, processed_at, outcome
		FROM webhook_deliveries WHERE shop_id = $1 AND id = $2`
	if lock {
		sql += " FOR UPDATE"
	}
	var d Delivery
	err := q.QueryRow(ctx, sql, shopID, id).Scan(&d.ShopID, &d.ID, &d.Topic, &d.Body, &d.ReceivedAt, &d.ProcessedAt, &d.Outcome)
	if err != nil {
		return nil, notFound(err, "delivery_not_found", "no webhook delivery %s", id)
	}
	return &d, nil
}

// MarkDeliveryProcessed records that the delivery's effect is done, in the
// transaction of the effect when there is one.
func (tx *Tx) MarkDeliveryProcessed(ctx context.Context, shopID int64, id, outcome string) error {
	_, err := tx.tx.Exec(ctx, `UPDATE webhook_deliveries SET processed_at = $3, outcome = $4
		WHERE shop_id = $1 AND id = $2`, shopID, id, tx.now, outcome)
	if err != nil {
		return fmt.Errorf("store.MarkDeliveryProcessed %s: %w", id, err)
	}
	return nil
}

// SetShopName refreshes a shop's name from the platform (SHOP_UPDATE); an
// empty name keeps the stored one.
func (tx *Tx) SetShopName(ctx context.Context, shopID int64, name string, at time.Time) error {
	_, err := tx.tx.Exec(ctx, `UPDATE shops SET name = COALESCE(NULLIF($2, ''), name), name_at = $4, updated_at = $3
		WHERE id = $1 AND (name_at IS NULL OR name_at <= $4)`, shopID, name, tx.now, at)
	if err != nil {
		return fmt.Errorf("store.SetShopName %d: %w", shopID, err)
	}
	return nil
}

// UninstallShop marks the shop uninstalled: from now on its tokens read as
// invalid_token. Uninstalling twice keeps the first time.
func (tx *Tx) UninstallShop(ctx context.Context, shopID int64) error {
	_, err := tx.tx.Exec(ctx, `UPDATE shops SET uninstalled_at = COALESCE(uninstalled_at, $2), updated_at = $2
		WHERE id = $1`, shopID, tx.now)
	if err != nil {
		return fmt.Errorf("store.UninstallShop %d: %w", shopID, err)
	}
	return nil
}

// PublishTheme records the theme with numeric id themeID as the shop's
// published theme in the catalog mirror (role main; every other theme
// unpublished). A theme the mirror does not know yet is added as gid.
func (tx *Tx) PublishTheme(ctx context.Context, shopID int64, themeID, gid, name string) error {
	wrap := func(err error) error { return fmt.Errorf("store.PublishTheme %d %s: %w", shopID, themeID, err) }
	// Two publishes at once each unpublished the other's old main and left
	// two mains: the shop's row lock makes them one after the other.
	if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM shops WHERE id = $1 FOR UPDATE`, shopID); err != nil {
		return wrap(err)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE catalog_themes SET role = 'unpublished'
		WHERE shop_id = $1 AND substring(id from '[0-9]+$') <> $2 AND role = 'main'`, shopID, themeID); err != nil {
		return wrap(err)
	}
	tag, err := tx.tx.Exec(ctx, `UPDATE catalog_themes SET role = 'main', name = COALESCE(NULLIF($3, ''), name)
		WHERE shop_id = $1 AND substring(id from '[0-9]+$') = $2`, shopID, themeID, name)
	if err != nil {
		return wrap(err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO catalog_themes (shop_id, id, name, role) VALUES ($1, $2, $3, 'main')`,
		shopID, gid, name); err != nil {
		return wrap(err)
	}
	return nil
}

// SetTestWarning raises (or restates) a warning on a test.
func (tx *Tx) SetTestWarning(ctx context.Context, shopID, testID int64, w experiment.Finding) error {
	_, err := tx.tx.Exec(ctx, `INSERT INTO experiment_warnings (experiment_id, shop_id, code, message, param, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (experiment_id, code) DO UPDATE SET message = EXCLUDED.message, param = EXCLUDED.param`,
		testID, shopID, w.Code, w.Message, w.Param, tx.now)
	if err != nil {
		return fmt.Errorf("store.SetTestWarning %d: %w", testID, err)
	}
	return nil
}

// ClearTestWarning removes a warning once its condition is gone.
func (tx *Tx) ClearTestWarning(ctx context.Context, testID int64, code string) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM experiment_warnings WHERE experiment_id = $1 AND code = $2`, testID, code); err != nil {
		return fmt.Errorf("store.ClearTestWarning %d: %w", testID, err)
	}
	return nil
}

// FindTestWarnings returns the warnings webhooks raised on a test, oldest
// first, as findings of severity warning (what a results snapshot shows).
func (db *DB) FindTestWarnings(ctx context.Context, shopID, testID int64) ([]experiment.Finding, error) {
	rows, err := db.pool.Query(ctx, `SELECT code, message, param FROM experiment_warnings
		WHERE shop_id = $1 AND experiment_id = $2 ORDER BY created_at, code`, shopID, testID)
	if err != nil {
		return nil, fmt.Errorf("store.FindTestWarnings %d: %w", testID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (experiment.Finding, error) {
		f := experiment.Finding{Severity: experiment.SeverityWarning}
		err := r.Scan(&f.Code, &f.Message, &f.Param)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("store.FindTestWarnings %d: %w", testID, err)
	}
	return out, nil
}

// SetInventoryLevel records the level the platform reported.
func (tx *Tx) SetInventoryLevel(ctx context.Context, shopID int64, l InventoryLevel) error {
	at := l.UpdatedAt
	if at.IsZero() {
		at = tx.now
	}
	// The newest level stands, whatever order deliveries are processed in.
	_, err := tx.tx.Exec(ctx, `INSERT INTO inventory_levels (shop_id, inventory_item_id, location_id, available, updated_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (shop_id, inventory_item_id, location_id)
		DO UPDATE SET available = EXCLUDED.available, updated_at = EXCLUDED.updated_at
		WHERE inventory_levels.updated_at <= EXCLUDED.updated_at`,
		shopID, l.InventoryItemID, l.LocationID, l.Available, at)
	if err != nil {
		return fmt.Errorf("store.SetInventoryLevel %d: %w", shopID, err)
	}
	return nil
}

// FindInventoryLevel returns KindNotFound inventory_level_not_found when the
// platform never reported the item at the location.
func (db *DB) FindInventoryLevel(ctx context.Context, shopID int64, itemID, locationID string) (*InventoryLevel, error) {
	l := InventoryLevel{InventoryItemID: itemID, LocationID: locationID}
	err := db.pool.QueryRow(ctx, `SELECT available, updated_at FROM inventory_levels
		WHERE shop_id = $1 AND inventory_item_id = $2 AND location_id = $3`, shopID, itemID, locationID).Scan(&l.Available, &l.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("store.FindInventoryLevel: %w", notFound(err, "inventory_level_not_found", "no level for %s at %s", itemID, locationID))
	}
	return &l, nil
}

// VariantCosts returns the unit cost the catalog mirror knows for each of
// the given variants, keyed by numeric id (the form order line items use).
// Variants without a known cost are absent.
func (db *DB) VariantCosts(ctx context.Context, shopID int64, numericIDs []string) (map[string]float64, error) {
	out := map[string]float64{}
	if len(numericIDs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT substring(id from '[0-9]+$'), cost::float8 FROM catalog_variants
		WHERE shop_id = $1 AND cost IS NOT NULL AND substring(id from '[0-9]+$') = ANY($2)`, shopID, numericIDs)
	if err != nil {
		return nil, fmt.Errorf("store.VariantCosts %d: %w", shopID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var cost float64
		if err := rows.Scan(&id, &cost); err != nil {
			return nil, fmt.Errorf("store.VariantCosts %d: %w", shopID, err)
		}
		out[id] = cost
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store.VariantCosts %d: %w", shopID, err)
	}
	return out, nil
}

// FindOpenTests lists the shop's tests not ended inside the unit of work,
// without the launch lock (LiveTests takes it): a catalog refresh only
// flags them.
func (tx *Tx) FindOpenTests(ctx context.Context, shopID int64) ([]*experiment.Test, error) {
	tests, _, err := findTests(ctx, tx.tx, shopID, testFilter{Filter: experiment.Filter{
		Statuses: []experiment.Status{experiment.StatusDraft, experiment.StatusPreview, experiment.StatusActive,
			experiment.StatusPaused, experiment.StatusFailed}, Limit: math.MaxInt32 - 1}})
	if err != nil {
		return nil, fmt.Errorf("store.Tx.FindOpenTests %d: %w", shopID, err)
	}
	return tests, nil
}

// FindLiveTests returns every active or paused test of the shop (the tests
// a webhook can affect), with their groups.
func (db *DB) FindLiveTests(ctx context.Context, shopID int64) ([]*experiment.Test, error) {
	out, err := db.allTests(ctx, shopID, testFilter{Filter: experiment.Filter{Statuses: []experiment.Status{experiment.StatusActive, experiment.StatusPaused}}})
	if err != nil {
		return nil, fmt.Errorf("store.FindLiveTests %d: %w", shopID, err)
	}
	return out, nil
}

// FindTestsLiveAt returns the shop's tests that may have been running at
// at: active or paused, or ended or archived no earlier than a minute
// before it (Test.LiveAt says which were).
func (db *DB) FindTestsLiveAt(ctx context.Context, shopID int64, at time.Time) ([]*experiment.Test, error) {
	since := at.Add(-experiment.LiveSkew)
	out, err := db.allTests(ctx, shopID, testFilter{endedGE: &since, Filter: experiment.Filter{Statuses: []experiment.Status{
		experiment.StatusActive, experiment.StatusPaused, experiment.StatusEnded, experiment.StatusArchived}}})
	if err != nil {
		return nil, fmt.Errorf("store.FindTestsLiveAt %d: %w", shopID, err)
	}
	return out, nil
}

// allTests pages through every test f selects.
func (db *DB) allTests(ctx context.Context, shopID int64, f testFilter) ([]*experiment.Test, error) {
	var out []*experiment.Test
	f.Limit = 500
	for {
		page, more, err := findTests(ctx, db.pool, shopID, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if !more || len(page) == 0 {
			return out, nil
		}
		last := page[len(page)-1]
		f.After = &experiment.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}
