package platform

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/liftab/lift/experiment"
)

// Bulk operations (part 8: "queued and throttled"). A catalog larger than
// BulkThreshold products is read with one bulk query instead of pages: the
// platform runs it in the background and hands back a JSONL file. It runs
// one bulk query per shop and app at a time, so the client queues: within
// the process one at a time per shop, and against the platform it waits
// for a running operation (another process's) to finish before starting.

// DefaultBulkThreshold is BulkThreshold when unset.
const DefaultBulkThreshold = 250

// The duplicates Lift made for live price tests come back among their
// product's variants; their source metafield marks them (readBulkFile skips them).
const bulkProductsQuery = `{ products { edges { node { id title handle
  variants { edges { node { id title sku price inventoryItem { unitCost { amount } }
    source: metafield(namespace: "$app:lift", key: "source_variant_id") { value } } } } } } } }`

type bulkOperation struct {
	ID        string `json:"id"`
	Status    string `json:"status"` // CREATED, RUNNING, COMPLETED, FAILED, CANCELED, EXPIRED
	ErrorCode string `json:"errorCode"`
	URL       string `json:"url"`
}

// bulkQueue serialises a process's bulk operations per shop.
type bulkQueue struct {
	mu    sync.Mutex
	shops map[string]*sync.Mutex
}

func (q *bulkQueue) lock(domain string) func() {
	q.mu.Lock()
	if q.shops == nil {
		q.shops = map[string]*sync.Mutex{}
	}
	m, ok := q.shops[domain]
	if !ok {
		m = &sync.Mutex{}
		q.shops[domain] = m
	}
	q.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// productCount is the shop's number of products.
func (c *Client) productCount(ctx context.Context, domain, token string) (int, error) {
	var out struct {
		ProductsCount struct {
			Count int `json:"count"`
		} `json:"productsCount"`
	}
	err := c.graphQL(ctx, domain, token, "ProductsCount", `query ProductsCount { productsCount { count } }`, nil, &out)
	return out.ProductsCount.Count, err
}

// bulkProducts reads every product with one bulk operation.
func (c *Client) bulkProducts(ctx context.Context, domain, token string) ([]experiment.CatalogProduct, error) {
	defer c.bulk.lock(domain)()
	op, err := c.startBulk(ctx, domain, token)
	if err != nil {
		return nil, err
	}
	for running(op.Status) {
		if err := c.sleep(ctx, c.pollInterval()); err != nil {
			return nil, &Error{Op: "bulk products", Message: err.Error()}
		}
		if op, err = c.currentBulk(ctx, domain, token); err != nil {
			return nil, err
		}
	}
	if op.Status != "COMPLETED" {
		return nil, &Error{Op: "bulk products", Status: http.StatusBadGateway, Message: "bulk operation " + op.Status + " " + op.ErrorCode}
	}
	if op.URL == "" {
		return nil, nil // no products
	}
	return c.readBulkFile(ctx, op.URL)
}

// running: the operation still holds the shop's bulk slot. A cancelled
// one does until it reaches CANCELED.
func running(status string) bool {
	return status == "CREATED" || status == "RUNNING" || status == "CANCELING"
}

// startBulk starts the bulk query, first waiting out an operation that is
// already running for the shop.
func (c *Client) startBulk(ctx context.Context, domain, token string) (bulkOperation, error) {
	for {
		cur, err := c.currentBulk(ctx, domain, token)
		if err != nil {
			return cur, err
		}
		if !running(cur.Status) {
			break
		}
		if err := c.sleep(ctx, c.pollInterval()); err != nil {
			return cur, &Error{Op: "bulk products", Message: err.Error()}
		}
	}
	var out struct {
		Run struct {
			Op         bulkOperation `json:"bulkOperation"`
			UserErrors userErrors    `json:"userErrors"`
		} `json:"bulkOperationRunQuery"`
	}
	err := c.graphQL(ctx, domain, token, "BulkOperationRunQuery",
		`mutation BulkOperationRunQuery($query: String!) { bulkOperationRunQuery(query: $query) { bulkOperation { id status } userErrors { field message } } }`,
		map[string]any{"query": bulkProductsQuery}, &out)
	if err != nil {
		return bulkOperation{}, err
	}
	return out.Run.Op, out.Run.UserErrors.err("start bulk products")
}

func (c *Client) currentBulk(ctx context.Context, domain, token string) (bulkOperation, error) {
	var out struct {
		Current *bulkOperation `json:"currentBulkOperation"`
	}
	err := c.graphQL(ctx, domain, token, "CurrentBulkOperation",
		`query CurrentBulkOperation { currentBulkOperation { id status errorCode url } }`, nil, &out)
	if err != nil || out.Current == nil {
		return bulkOperation{}, err
	}
	return *out.Current, nil
}

// readBulkFile parses the JSONL result: product lines, then variant lines
// naming their product in __parentId.
func (c *Client) readBulkFile(ctx context.Context, u string) ([]experiment.CatalogProduct, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &Error{Op: "bulk products", Message: err.Error()}
	}
	resp, err := c.bulkHTTP().Do(req)
	if err != nil {
		return nil, &Error{Op: "bulk products", Message: "platform unreachable: " + err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{Op: "bulk products", Status: resp.StatusCode, Message: "bulk file not readable"}
	}
	var products []experiment.CatalogProduct
	index := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row struct {
			variantNode
			Handle   string `json:"handle"`
			ParentID string `json:"__parentId"`
		}
		if err := json.Unmarshal(line, &row); err != nil {
			return nil, &Error{Op: "bulk products", Message: "unreadable bulk line: " + err.Error()}
		}
		if row.ParentID == "" {
			index[row.ID] = len(products)
			products = append(products, experiment.CatalogProduct{Product: experiment.Product{ID: row.ID, Title: row.Title, Handle: row.Handle}})
			continue
		}
		i, ok := index[row.ParentID]
		v, mine := row.variant(row.ParentID)
		if !ok || !strings.Contains(row.ID, "/ProductVariant/") || !mine {
			continue // not a variant of a product read, or Lift's duplicate of one
		}
		products[i].Variants = append(products[i].Variants, v)
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return nil, &Error{Op: "bulk products", Message: err.Error()}
	}
	return products, nil
}

// bulkHTTP downloads bulk files: they can be large, so without the 4 s
// timeout of API calls (the context bounds it).
func (c *Client) bulkHTTP() *http.Client {
	return &http.Client{Transport: c.HTTP.Transport}
}

func (c *Client) pollInterval() time.Duration {
	if c.BulkPollInterval > 0 {
		return c.BulkPollInterval
	}
	return 2 * time.Second
}
