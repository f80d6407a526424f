package experiment

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/liftab/lift/money"
)

// Cart attributes the storefront script sets on the cart, so the order
// webhook can tell which groups the buyer saw (docs/webhooks-exports.md). The
// platform copies them to the order's note_attributes.
const (
	AttrVisitorID   = "_lift_visitor_id"
	AttrSessionID   = "_lift_session_id"
	AttrAssignments = "_lift_assignments" // "experimentId:groupIndex,…", e.g. "42:1,57:0"
)

// orderPayload is the part of an ORDERS_CREATE / ORDERS_EDITED body Lift
// reads.
type orderPayload struct {
	ID                platformID      `json:"id"`
	CreatedAt         *time.Time      `json:"created_at"`
	UpdatedAt         *time.Time      `json:"updated_at"`
	TotalPrice        *platformAmount `json:"total_price"`
	CurrentTotalPrice *platformAmount `json:"current_total_price"`
	Currency          string          `json:"currency"`
	NoteAttributes    []struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	} `json:"note_attributes"`
	LineItems []struct {
		ProductID       platformID     `json:"product_id"`
		VariantID       platformID     `json:"variant_id"`
		Quantity        int64          `json:"quantity"`
		CurrentQuantity *int64         `json:"current_quantity"`
		Price           platformAmount `json:"price"`
	} `json:"line_items"`
	// ShippingLines is a pointer so that an order without the key (a
	// payload that does not say) differs from one that charged none ([]).
	ShippingLines *[]struct {
		Price           platformAmount  `json:"price"`
		DiscountedPrice *platformAmount `json:"discounted_price"`
	} `json:"shipping_lines"`
	Refunds []struct {
		Transactions []struct {
			Kind   string         `json:"kind"`
			Amount platformAmount `json:"amount"`
			Status string         `json:"status"`
		} `json:"transactions"`
		OrderAdjustments []struct {
			Kind   string         `json:"kind"`
			Amount platformAmount `json:"amount"`
		} `json:"order_adjustments"`
	} `json:"refunds"`
}

// checkTimes refuses order times no platform sends: before 2000 or more
// than a day after receipt. Such a time would become the row's version,
// and a version from year 1 wraps around and outranks every later edit.
func (o *orderPayload) checkTimes(received time.Time) error {
	for _, t := range []struct {
		name string
		at   *time.Time
	}{{"created_at", o.CreatedAt}, {"updated_at", o.UpdatedAt}} {
		if t.at != nil && (t.at.Year() < 2000 || t.at.After(received.Add(24*time.Hour))) {
			return &unreadableBody{msg: fmt.Sprintf("%s %s is out of range", t.name, t.at.Format(time.RFC3339))}
		}
	}
	return nil
}

// attribute returns the named cart attribute ("" when absent).
func (o *orderPayload) attribute(name string) string {
	for _, a := range o.NoteAttributes {
		if a.Name != name {
			continue
		}
		var s string
		if json.Unmarshal(a.Value, &s) == nil {
			return strings.TrimSpace(s)
		}
		return strings.TrimSpace(string(bytes.Trim(a.Value, `"`)))
	}
	return ""
}

// revenue is what the order is worth now: current_total_price when the
// platform sends it (it already reflects edits and refunds), else
// total_price less successful refund transactions; never below zero. The
// arithmetic is exact (decimals): no rounding until the amount is shown.
func (o *orderPayload) revenue() decimal.Decimal {
	if o.CurrentTotalPrice != nil {
		return decimal.Max(decimal.Zero, o.CurrentTotalPrice.Decimal)
	}
	total := decimal.Zero
	if o.TotalPrice != nil {
		total = o.TotalPrice.Decimal
	}
	for _, r := range o.Refunds {
		for _, t := range r.Transactions {
			if (t.Kind == "" || t.Kind == "refund") && (t.Status == "" || t.Status == "success") {
				total = total.Sub(t.Amount.Decimal)
			}
		}
	}
	return decimal.Max(decimal.Zero, total)
}

// shipping is what the order charged for shipping as it stands: its
// shipping lines after shipping discounts (discounted_price, else price),
// less shipping refunds (order adjustments of kind shipping_refund, whose
// amounts the platform sends negative), never below zero. recorded is false
// when the payload has no shipping_lines: the charge is unknown, not zero.
func (o *orderPayload) shipping() (charged decimal.Decimal, recorded bool) {
	if o.ShippingLines == nil {
		return decimal.Zero, false
	}
	for _, l := range *o.ShippingLines {
		if l.DiscountedPrice != nil {
			charged = charged.Add(l.DiscountedPrice.Decimal)
		} else {
			charged = charged.Add(l.Price.Decimal)
		}
	}
	for _, r := range o.Refunds {
		for _, a := range r.OrderAdjustments {
			if a.Kind == "shipping_refund" {
				charged = charged.Sub(a.Amount.Abs())
			}
		}
	}
	return decimal.Max(decimal.Zero, charged), true
}

// orderLine is one order line as it stands (current_quantity after edits).
type orderLine struct {
	productID, variantID string
	quantity             uint32
	price                decimal.Decimal
}

func (o *orderPayload) lines() []orderLine {
	var out []orderLine
	for _, li := range o.LineItems {
		q := li.Quantity
		if li.CurrentQuantity != nil {
			q = *li.CurrentQuantity
		}
		if q <= 0 {
			continue // removed by an edit or fully refunded
		}
		out = append(out, orderLine{productID: string(li.ProductID), variantID: string(li.VariantID),
			quantity: uint32(min(q, math.MaxUint32)), price: li.Price.Decimal})
	}
	return out
}

// order attributes an order (ORDERS_CREATE) or writes the next version of
// an attributed one (ORDERS_EDITED): one orders row per test the buyer is
// in, with the revenue, cost and lines as they stand. The version is the
// order's updated_at in milliseconds, so an older edit delivered late never
// replaces a newer one, and a redelivery folds into the row it repeats.
// The rows are signed: the sink keeps them above any legacy row of the
// order, and an edit reads only signed attributions, so an unauthenticated
// legacy order can neither replace a signed one nor choose its group.
func (s *WebhookService) order(ctx context.Context, shop *Shop, d *WebhookDelivery) (string, txEffect, error) {
	var o orderPayload
	if err := decodeDelivery(d, &o); err != nil {
		return "", nil, err
	}
	if o.ID == "" {
		return "", nil, &unreadableBody{msg: "the order has no id"}
	}
	if err := o.checkTimes(d.ReceivedAt); err != nil {
		return "", nil, err
	}
	if c := strings.ToUpper(o.Currency); c != "" && shop.Currency != "" && c != shop.Currency {
		// Results add revenue in the shop's currency, and Lift does not
		// convert: counting this order's amount as the shop's would be wrong.
		return fmt.Sprintf("not counted: the order is in %s and the shop's currency is %s (Lift does not convert amounts)",
			c, shop.Currency), nil, nil
	}
	createdAt := d.ReceivedAt
	if o.CreatedAt != nil {
		createdAt = *o.CreatedAt
	}
	var attrs []OrderAttribution
	edit := false
	if d.Topic == TopicOrdersEdited {
		var err error
		if attrs, err = s.Orders.SignedOrderAttributions(ctx, shop.ID, string(o.ID)); err != nil {
			return "", nil, err
		}
		edit = len(attrs) > 0
	}
	if !edit {
		var err error
		if attrs, err = s.attribute(ctx, shop, &o, createdAt); err != nil {
			return "", nil, err
		}
	}
	if len(attrs) == 0 && d.Topic == TopicOrdersEdited && createMayBePending(createdAt, d.ReceivedAt, s.retryHorizon()) {
		// Deliveries are processed in parallel and the platform does not
		// order them: an edit (a refund) may come before its order's
		// create, which carries the attribution. Marked processed, the
		// refund was lost for good (storefront audit 2, S2); retried, it
		// finds the create's rows, or ends unattributed on the last try
		// (Process).
		return "", nil, errEditBeforeCreate
	}
	if len(attrs) == 0 {
		return outcomeUnattributed, nil, nil
	}
	lines := o.lines()
	cost, err := s.cost(ctx, shop.ID, lines)
	if err != nil {
		return "", nil, err
	}
	version := orderVersion(&o, d, attrs)
	shipping, shippingRecorded := o.shipping()
	rows := make([]SignedOrder, 0, len(attrs))
	for _, a := range attrs {
		row := SignedOrder{ShopID: shop.ID, ExperimentID: a.ExperimentID, OrderID: string(o.ID), Version: version,
			TestGroup: a.TestGroup, VisitorID: a.VisitorID, SessionID: a.SessionID, Revenue: o.revenue(), Cost: cost,
			Shipping: shipping, ShippingRecorded: shippingRecorded,
			Currency: cmp.Or(strings.ToUpper(o.Currency), shop.Currency), CreatedAt: createdAt}
		if edit {
			row.CreatedAt = a.CreatedAt // an edit keeps the order's original time
		}
		for _, l := range lines {
			row.LineProductIDs = append(row.LineProductIDs, l.productID)
			row.LineVariantIDs = append(row.LineVariantIDs, l.variantID)
			row.LineQuantities = append(row.LineQuantities, l.quantity)
			row.LinePrices = append(row.LinePrices, l.price)
		}
		rows = append(rows, row)
	}
	if err := s.Orders.WriteSignedOrders(ctx, rows); err != nil {
		return "", nil, err
	}
	verb := "attributed to"
	if edit {
		verb = "new version for"
	}
	return fmt.Sprintf("%s %d tests", verb, len(attrs)), nil, nil
}

// errEditBeforeCreate asks the queue to try an unattributed edit again.
var errEditBeforeCreate = errors.New("no attributed order to edit yet (its create may not be processed): retried")

// outcomeUnattributed is the outcome of an order no test counts.
const outcomeUnattributed = "unattributed: no assignment in cart attributes or for the visitor"

// createMayBePending reports whether an order placed at createdAt may still
// have its ORDERS_CREATE unprocessed when an edit of it is received: only
// within horizon (the create's delivery and its tries). Retrying every
// unattributed edit cost most edits in most shops (orders no test counts)
// four failed tries and their backoff before the same outcome (review 4,
// item 5); an edit to an order placed earlier has had its create
// processed, or dead-lettered, already. An order time ahead of the receipt
// (clocks differ) counts as recent.
func createMayBePending(createdAt, received time.Time, horizon time.Duration) bool {
	return received.Sub(createdAt) < horizon
}

// orderVersion is updated_at in ms. Without it: an edit comes after every
// version stored, a create takes created_at, else the receipt time.
func orderVersion(o *orderPayload, d *WebhookDelivery, prior []OrderAttribution) uint64 {
	if o.UpdatedAt != nil {
		return uint64(o.UpdatedAt.UnixMilli())
	}
	v := uint64(d.ReceivedAt.UnixMilli())
	if d.Topic == TopicOrdersCreate && o.CreatedAt != nil {
		v = uint64(o.CreatedAt.UnixMilli())
	}
	for _, a := range prior {
		v = max(v, a.Version+1)
	}
	return v
}

// attribute finds the tests the buyer is in: first the cart attribute
// _lift_assignments, then, for tests it does not name, the visitor's
// standing assignment in ClickHouse. Only tests running when the order was
// placed (at) count, in a group the test has: one that has ended since
// still gets the order, which a delivery late by the platform's retries or
// a worker outage lost before (storefront audit 2, S3). Excluded visitors
// (group -1, in the cart or in ClickHouse) are not attributed. The cart's -1 stands over an earlier
// assignment: the buyer was left out of the test when ordering. A cart
// group the test does not have is ignored, and ClickHouse's is used.
func (s *WebhookService) attribute(ctx context.Context, shop *Shop, o *orderPayload, at time.Time) ([]OrderAttribution, error) {
	visitor, session := o.attribute(AttrVisitorID), o.attribute(AttrSessionID)
	pairs := parseAssignments(o.attribute(AttrAssignments))
	if len(pairs) == 0 && visitor == "" {
		return nil, nil
	}
	candidates, err := s.Repo.FindTestsLiveAt(ctx, shop.ID, at)
	if err != nil {
		return nil, err
	}
	tests := make(map[string]*Test, len(candidates))
	for _, t := range candidates {
		if t.LiveAt(at) {
			tests[strconv.FormatInt(t.ID, 10)] = t
		}
	}
	got := map[string]OrderAttribution{}
	excluded := map[string]bool{} // the cart says the buyer was left out
	add := func(exp string, group int16, sess string) {
		t, ok := tests[exp]
		if _, seen := got[exp]; seen || excluded[exp] || !ok || group < 0 || t.Group(int(group)) == nil {
			return
		}
		got[exp] = OrderAttribution{ExperimentID: exp, TestGroup: group, VisitorID: visitor, SessionID: cmp.Or(session, sess)}
	}
	for _, p := range pairs {
		if p.group == -1 {
			excluded[p.experimentID] = true
		}
		add(p.experimentID, p.group, "")
	}
	if visitor != "" && len(got) < len(tests) {
		groups, err := s.Orders.VisitorAssignments(ctx, shop.ID, visitor)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			add(g.ExperimentID, g.TestGroup, g.SessionID)
		}
	}
	out := make([]OrderAttribution, 0, len(got))
	for _, a := range got {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ExperimentID < out[j].ExperimentID })
	return out, nil
}

type assignmentPair struct {
	experimentID string
	group        int16
}

// parseAssignments reads "42:1,57:0"; malformed entries are skipped.
func parseAssignments(s string) []assignmentPair {
	var out []assignmentPair
	for _, part := range strings.Split(s, ",") {
		exp, grp, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			continue
		}
		if _, err := strconv.ParseInt(exp, 10, 64); err != nil {
			continue
		}
		g, err := strconv.ParseInt(strings.TrimSpace(grp), 10, 16)
		if err != nil {
			continue
		}
		out = append(out, assignmentPair{experimentID: exp, group: int16(g)})
	}
	return out
}

// cost is Σ quantity × unit cost over the lines whose variant's cost the
// catalog mirror knows; lines without a known cost add nothing.
func (s *WebhookService) cost(ctx context.Context, shopID int64, lines []orderLine) (decimal.Decimal, error) {
	ids := make([]string, 0, len(lines))
	for _, l := range lines {
		if l.variantID != "" {
			ids = append(ids, l.variantID)
		}
	}
	costs, err := s.Repo.VariantCosts(ctx, shopID, ids)
	if err != nil {
		return decimal.Zero, err
	}
	total := decimal.Zero
	for _, l := range lines {
		if c, ok := costs[l.variantID]; ok {
			total = total.Add(money.FromFloat(c).Mul(decimal.NewFromInt(int64(l.quantity))))
		}
	}
	return money.Stored(total), nil
}

// platformAmount is a money amount sent as a decimal string or a number,
// read exactly (a JSON number is read from its text, never via a float).
type platformAmount struct{ decimal.Decimal }

func (a *platformAmount) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		a.Decimal = decimal.Zero
		return nil
	}
	d, err := money.Parse(s)
	if err != nil {
		return fmt.Errorf("amount %s: %w", b, err)
	}
	a.Decimal = d
	return nil
}

// platformID is a platform id sent as a number, a numeric string or a global
// id (gid://…/Type/123); it holds the numeric part.
type platformID string

var trailingDigits = regexp.MustCompile(`[0-9]+$`)

func (f *platformID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = ""
		return nil
	}
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		s = n.String()
	}
	if strings.HasPrefix(s, "gid://") {
		s = trailingDigits.FindString(s)
	} else if s != "" && !onlyDigits.MatchString(s) {
		// Platform ids are positive integers; "-5", "5.5" or "abc-5" would
		// be stored as ids no other delivery of the same object matches.
		return fmt.Errorf("id %s is not a platform id (digits or gid://…/Type/digits)", b)
	}
	*f = platformID(s)
	return nil
}

var onlyDigits = regexp.MustCompile(`^[0-9]+$`)
