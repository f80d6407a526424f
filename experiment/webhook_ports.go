package experiment

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Inbound platform webhooks (session document parts 4.6 and 6.2;
// docs/webhooks-exports.md): the types and the ports WebhookService needs.
// store implements WebhookRepository, warehouse WebhookOrders, jobs
// WebhookQueue.

// Topics of the inbound webhooks.
const (
	TopicAppUninstalled        = "APP_UNINSTALLED"
	TopicOrdersCreate          = "ORDERS_CREATE"
	TopicOrdersEdited          = "ORDERS_EDITED"
	TopicInventoryLevelsUpdate = "INVENTORY_LEVELS_UPDATE"
	TopicShopUpdate            = "SHOP_UPDATE"
	TopicThemesPublish         = "THEMES_PUBLISH"
)

// WebhookDelivery is one inbound delivery as recorded: the dedupe record
// (one per shop and delivery id) and the raw, signed body.
type WebhookDelivery struct {
	ShopID      int64
	ID          string // the platform's delivery id
	Topic       string
	Body        []byte
	ReceivedAt  time.Time
	ProcessedAt *time.Time
	Outcome     string // what processing did, in a few words
}

// WebhookDeadLetter is a delivery whose processing kept failing: kept with
// its last error so it can be looked at and replayed, never retried again.
type WebhookDeadLetter struct {
	ShopID     int64
	DeliveryID string
	Topic      string
	Body       []byte
	LastError  string
	Tries      int
	At         time.Time
	// Reopened is a dead letter replayed and not processed yet (its
	// replay queued, or to be replayed again if queueing failed).
	Reopened bool
}

// InventoryLevel is the stock of an inventory item at a location.
type InventoryLevel struct {
	InventoryItemID string
	LocationID      string
	Available       *int64
	// UpdatedAt is when the platform set the level (its updated_at, else
	// the delivery's receipt): an older level never replaces a newer one.
	UpdatedAt time.Time
}

// WebhookRepository is where deliveries and the shop state they change live
// (Postgres). Reads run on their own; every change runs in Write's unit.
type WebhookRepository interface {
	// Write runs fn in one all-or-nothing unit of work with its audit
	// record (meta, the actor on ctx). Returns whatever fn returns (nothing
	// kept); KindUnavailable when the change collides with another.
	Write(ctx context.Context, meta WriteMeta, fn func(ctx context.Context, tx WebhookTx) (WriteResult, error)) (WriteResult, error)
	// FindShopByDomain returns KindNotFound shop_not_found when no shop has it.
	FindShopByDomain(ctx context.Context, domain string) (*Shop, error)
	// FindShopByID returns KindNotFound shop_not_found when absent.
	FindShopByID(ctx context.Context, id int64) (*Shop, error)
	// FindDelivery returns KindNotFound delivery_not_found when absent.
	FindDelivery(ctx context.Context, shopID int64, id string) (*WebhookDelivery, error)
	// FindLiveTests returns every active or paused test of the shop, with
	// its groups.
	FindLiveTests(ctx context.Context, shopID int64) ([]*Test, error)
	// FindTestsLiveAt returns, with their groups, at least every test of
	// the shop that was running at at (Test.LiveAt tells them apart).
	FindTestsLiveAt(ctx context.Context, shopID int64, at time.Time) ([]*Test, error)
	// VariantCosts returns the unit cost of each given variant (numeric
	// ids) the catalog mirror knows; unknown ones are absent.
	VariantCosts(ctx context.Context, shopID int64, numericIDs []string) (map[string]float64, error)
	// FindInventoryLevel returns KindNotFound inventory_level_not_found when
	// the platform never reported the item at the location.
	FindInventoryLevel(ctx context.Context, shopID int64, itemID, locationID string) (*InventoryLevel, error)
	// FindDeadLetters returns the shop's dead-lettered deliveries, oldest
	// first.
	FindDeadLetters(ctx context.Context, shopID int64) ([]WebhookDeadLetter, error)
}

// WebhookTx is a unit of work in progress.
type WebhookTx interface {
	// InsertDelivery keeps d unless its id was recorded for the shop
	// before; it returns the stored delivery (the earlier one for a
	// redelivery) and whether this call created it.
	InsertDelivery(ctx context.Context, d WebhookDelivery) (*WebhookDelivery, bool, error)
	// FindDeliveryForUpdate locks the delivery until the unit ends.
	// KindNotFound delivery_not_found when absent.
	FindDeliveryForUpdate(ctx context.Context, shopID int64, id string) (*WebhookDelivery, error)
	// MarkDeliveryProcessed records the delivery's outcome.
	MarkDeliveryProcessed(ctx context.Context, shopID int64, id, outcome string) error
	// InsertDeadLetter keeps a delivery that will not be retried; the last
	// error is stored in a form the database accepts whatever it holds.
	InsertDeadLetter(ctx context.Context, l WebhookDeadLetter) error
	// FindDeadLetter returns the delivery's dead letter; KindNotFound
	// dead_letter_not_found when it has none.
	FindDeadLetter(ctx context.Context, shopID int64, id string) (*WebhookDeadLetter, error)
	// DeleteDeadLetter removes the delivery's dead letter, if any.
	DeleteDeadLetter(ctx context.Context, shopID int64, id string) error
	// ReopenDelivery marks the delivery not processed, with no outcome.
	ReopenDelivery(ctx context.Context, shopID int64, id string) error
	// SetShopName refreshes the shop's name ("" keeps the stored one) as
	// the platform set it at at; a name set earlier than the stored one is
	// ignored.
	SetShopName(ctx context.Context, shopID int64, name string, at time.Time) error
	// UninstallShop marks the shop uninstalled (the first time stands).
	UninstallShop(ctx context.Context, shopID int64) error
	// PublishTheme records the theme (numeric id; gid when the mirror does
	// not know it yet) as the published one, every other unpublished.
	PublishTheme(ctx context.Context, shopID int64, themeID, gid, name string) error
	// SetTestWarning raises or restates a warning on a test.
	SetTestWarning(ctx context.Context, shopID, testID int64, w Finding) error
	// ClearTestWarning lifts a warning.
	ClearTestWarning(ctx context.Context, testID int64, code string) error
	// SetInventoryLevel records the level the platform reported.
	SetInventoryLevel(ctx context.Context, shopID int64, l InventoryLevel) error
}

// SignedOrder is one attributed order row written from a signed webhook.
// The sink stores it so that it always stands above any order of the same
// id from the unauthenticated legacy endpoint, whatever arrives last.
type SignedOrder struct {
	ShopID       int64
	ExperimentID string
	OrderID      string
	Version      uint64 // Unix ms of the order's last update; the latest stands among signed rows
	TestGroup    int16
	VisitorID    string
	SessionID    string
	Revenue      decimal.Decimal // exact, in Currency (package money)
	Cost         decimal.Decimal
	// Shipping is what the order charged for shipping as it stands;
	// ShippingRecorded is false when the payload did not say (then
	// Shipping is zero and means nothing).
	Shipping         decimal.Decimal
	ShippingRecorded bool
	Currency         string
	LineProductIDs   []string
	LineVariantIDs   []string
	LineQuantities   []uint32
	LinePrices       []decimal.Decimal
	CreatedAt        time.Time
}

// OrderAttribution is how an order stands for one test: the group, visitor
// and session it is attributed to.
type OrderAttribution struct {
	ExperimentID string
	TestGroup    int16 // -1 when the visitor is excluded
	VisitorID    string
	SessionID    string
	CreatedAt    time.Time
	Version      uint64 // Unix ms, as SignedOrder.Version
}

// WebhookOrders is the warehouse side of order webhooks (ClickHouse).
type WebhookOrders interface {
	// WriteSignedOrders stores the rows. Rewriting a row (same key and
	// version) folds into it.
	WriteSignedOrders(ctx context.Context, rows []SignedOrder) error
	// SignedOrderAttributions returns, per test, how a signed order stands
	// (its latest signed version); legacy rows are not read. None when the
	// order never came through a webhook.
	SignedOrderAttributions(ctx context.Context, shopID int64, orderID string) ([]OrderAttribution, error)
	// VisitorAssignments returns the visitor's standing group (the first
	// assignment) in every test it was assigned in; VisitorID and Version
	// are left empty.
	VisitorAssignments(ctx context.Context, shopID int64, visitorID string) ([]OrderAttribution, error)
}

// WebhookQueue hands a recorded delivery to the workers.
type WebhookQueue interface {
	// EnqueueWebhook queues the processing of a delivery; a delivery
	// already queued is not an error. Any error means it is not queued.
	EnqueueWebhook(ctx context.Context, shopID int64, deliveryID string) error
	// RequeueWebhook queues the replay of a dead-lettered delivery: a task
	// of its own (the first may still be kept as done under its id), named
	// by the dead letter (deadLetteredAt), so replaying the same dead letter
	// again queues nothing more. Any error means it is not queued.
	RequeueWebhook(ctx context.Context, shopID int64, deliveryID string, deadLetteredAt time.Time) error
}

// WebhookAttempt says which try of a delivery's processing is running.
type WebhookAttempt struct {
	Try  int  // 1 for the first
	Last bool // the queue will not retry a failure of this one
}
