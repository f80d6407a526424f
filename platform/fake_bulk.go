package platform

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The fake's bulk operations: one per shop at a time, RUNNING for
// BulkPolls polls of currentBulkOperation, then COMPLETED with a JSONL file
// served at /admin/shops/{shop}/bulk/{id}.jsonl.

type fakeBulk struct {
	ID        string
	Polls     int // RUNNING (or CANCELING) answers left
	Foreign   bool
	Canceling bool // cancelled: CANCELING while it winds down, then CANCELED
}

func (f *Fake) mountBulk() {
	f.mux.HandleFunc("GET /admin/shops/{shop}/bulk/{file}", f.bulkFile)
}

// StartForeignBulk makes a bulk operation of someone else run on the shop
// for polls polls: Lift's must wait for it.
func (f *Fake) StartForeignBulk(domain string, polls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shop(domain).install.bulk = &fakeBulk{ID: f.id("BulkOperation"), Polls: polls, Foreign: true}
}

// CancelForeignBulk is StartForeignBulk for an operation someone has
// cancelled: it holds the shop's bulk slot, CANCELING, for polls polls.
func (f *Fake) CancelForeignBulk(domain string, polls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shop(domain).install.bulk = &fakeBulk{ID: f.id("BulkOperation"), Polls: polls, Foreign: true, Canceling: true}
}

func (f *Fake) bulkOperation(s *fakeShop, req gqlRequest) any {
	in := s.install
	switch req.OperationName {
	case "ProductsCount":
		return map[string]any{"productsCount": map[string]int{"count": len(in.Catalog.Products)}}
	case "BulkOperationRunQuery":
		payload := func(op any, errs []any) any {
			return map[string]any{"bulkOperationRunQuery": map[string]any{"bulkOperation": op, "userErrors": errs}}
		}
		if in.bulk != nil && in.bulk.Polls > 0 {
			return payload(nil, []any{map[string]any{"field": nil, "message": "A bulk query operation for this app and shop is already in progress: " + in.bulk.ID}})
		}
		in.bulk = &fakeBulk{ID: f.id("BulkOperation"), Polls: max(f.BulkPolls, 0)}
		return payload(map[string]string{"id": in.bulk.ID, "status": "CREATED"}, []any{})
	default: // CurrentBulkOperation
		if in.bulk == nil {
			return map[string]any{"currentBulkOperation": nil}
		}
		op := map[string]any{"id": in.bulk.ID, "status": "COMPLETED", "errorCode": nil, "url": nil}
		if in.bulk.Canceling {
			op["status"] = "CANCELED"
		}
		if in.bulk.Polls > 0 {
			in.bulk.Polls--
			op["status"] = map[bool]string{false: "RUNNING", true: "CANCELING"}[in.bulk.Canceling]
		} else if !in.bulk.Foreign && len(in.Catalog.Products) > 0 {
			op["url"] = "http://" + req.host + "/admin/shops/" + req.domain + "/bulk/" + in.bulk.ID[strings.LastIndex(in.bulk.ID, "/")+1:] + ".jsonl"
		}
		return map[string]any{"currentBulkOperation": op}
	}
}

// bulkFile serves the products as the platform's JSONL: each product, then
// its variants with __parentId.
func (f *Fake) bulkFile(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shop(r.PathValue("shop"))
	w.Header().Set("Content-Type", "application/jsonl")
	enc := json.NewEncoder(w)
	all := s.variantsOf()
	for _, p := range s.install.Catalog.Products {
		_ = enc.Encode(map[string]string{"id": p.ID, "title": p.Title, "handle": p.Handle})
		for _, v := range all {
			if v.product.ID == p.ID {
				row := v.json()
				row["__parentId"] = p.ID
				_ = enc.Encode(row)
			}
		}
	}
}
