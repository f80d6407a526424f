package ingest

import "time"

// The rows ingest produces and its Sink stores: one struct per storefront
// table (DDL in clickhouse/0200_*.sql … 0299_*.sql). Ingest owns them because
// it is the one that makes them; the warehouse implements Sink over them and
// keeps aliases under its own name for its other callers. Times are stored as
// DateTime in UTC; local dates are computed at query time with toDate(t, shop
// timezone).
//
// Duplicates are expected: the WAL replays a batch after a crash or a failed
// insert, so a row may land twice. Each table is a ReplacingMergeTree whose
// sorting key ends with the row's own id, so merges fold duplicates; queries
// must not rely on merges having happened and dedupe themselves
// (uniqExact(event_id), argMin/argMax per key, or FINAL). Each struct says how.

// Event is one behavioral event (POST /api/track/event and the legacy
// add-to-cart and checkout endpoints), one row per experiment id it carries;
// an event without an active assignment has one row with ExperimentID "".
// Count events with uniqExact(event_id); a storewide count must dedupe on
// event_id across experiments too.
type Event struct {
	ShopID        int64
	ExperimentID  string
	EventID       string // client-sent or assigned on receipt; the dedupe key
	ReceivedAt    time.Time
	CreatedAt     time.Time // the client's time of the event
	SessionID     string
	VisitorID     string
	EventType     string // page_viewed, product_added_to_cart, …, or the custom prefix + name
	Source        string // script, webpixel, webhook, legacy
	PagePath      string
	PageType      string
	ProductIDs    []string // numeric ids, gid:// prefix removed
	VariantIDs    []string
	Quantity      uint32
	CheckoutToken string
	OrderID       string
	CustomName    string  // the <name> of a custom event
	Revenue       float64 // legacy checkout only
	TestGroup     *int16  // only the legacy endpoints state it
	IsBot         bool
	Payload       string // the raw payload object (≤ 10 KB), "" when absent
}

// Assignment is a visitor's group in a test. The first one received stands:
// the table keeps, per (shop_id, experiment_id, visitor_id), the row with the
// highest version, and the warehouse versions it "earlier is higher" (warehouse.FirstWinsVersion).
// Queries take argMax(test_group, version) per visitor, or read with FINAL.
type Assignment struct {
	ShopID       int64
	ExperimentID string
	VisitorID    string
	AssignmentID string // deterministic per (shop, experiment, visitor)
	SessionID    string
	TestGroup    int16 // 0 control, 1… variants, -1 excluded
	Reason       string
	Country      string
	Device       string // desktop, mobile, tablet, bot
	VisitorType  string // new, returning
	UTMSource    string
	UTMMedium    string
	UTMCampaign  string
	Gclid        string
	Fbclid       string
	AssignedAt   time.Time // the client's time of assignment
	ReceivedAt   time.Time
	IsBot        bool
}

// Session is one page load of a session in a test (GET /api/observe/session,
// called once per page load). Per session: start = min(seen_at), pages =
// uniqExact(record_id), landing page = argMin(page_path, seen_at).
type Session struct {
	ShopID       int64
	ExperimentID string
	SessionID    string
	RecordID     string // assigned on receipt; the dedupe key
	VisitorID    string
	SeenAt       time.Time
	PagePath     string
	Referrer     string
	Device       string
	Country      string
	VisitorType  string
	UTMSource    string
	UTMMedium    string
	UTMCampaign  string
	IsBot        bool
}

// PageView is one product page view in a test (GET /api/observe). Count with
// uniqExact(view_id).
type PageView struct {
	ShopID       int64
	ExperimentID string
	ProductID    string
	ViewID       string // assigned on receipt; the dedupe key
	SessionID    string
	VisitorID    string
	ViewedAt     time.Time
	IsBot        bool
}

// Order is one version of an order attributed to a test group. Edits and
// refunds are new rows with a higher Version; results take the latest with
// argMax(…, version) per (shop_id, experiment_id, order_id) or FINAL.
type Order struct {
	ShopID         int64
	ExperimentID   string
	OrderID        string
	Version        uint64 // higher wins; the legacy endpoint uses receipt time in ms
	TestGroup      int16
	VisitorID      string
	SessionID      string
	Revenue        float64 // in Currency
	Cost           float64
	Currency       string
	LineProductIDs []string // line items, one array element per line
	LineVariantIDs []string
	LineQuantities []uint32
	LinePrices     []float64
	CreatedAt      time.Time
	Source         string // legacy, webhook
	IsBot          bool
}

// Batch is a set of rows for all storefront tables, inserted together.
type Batch struct {
	Events      []Event
	Assignments []Assignment
	Sessions    []Session
	PageViews   []PageView
	Orders      []Order
}

// Len is the number of rows in b.
func (b *Batch) Len() int {
	return len(b.Events) + len(b.Assignments) + len(b.Sessions) + len(b.PageViews) + len(b.Orders)
}

// Reset empties b, keeping its capacity.
func (b *Batch) Reset() {
	clear(b.Events)
	clear(b.Assignments)
	clear(b.Sessions)
	clear(b.PageViews)
	clear(b.Orders)
	b.Events, b.Assignments, b.Sessions, b.PageViews, b.Orders = b.Events[:0], b.Assignments[:0], b.Sessions[:0], b.PageViews[:0], b.Orders[:0]
}
