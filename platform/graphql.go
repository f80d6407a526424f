package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The GraphQL Admin API transport (docs/install.md): one POST per
// operation to <shop>/api/<version>/graphql.json with the shop's access
// token. Throttling is cost-based: every answer reports the shop's bucket
// (extensions.cost.throttleStatus: maximumAvailable, currentlyAvailable,
// restoreRate per second) and a query costing more than is available is
// refused with errors[].extensions.code THROTTLED. The client waits for
// the bucket before sending when it knows it is short, and retries
// THROTTLED, 429 (honouring Retry-After) and 5xx with exponential backoff.

// APIVersion is the GraphQL Admin API version Lift speaks.
const APIVersion = "2025-01"

// Retry bounds the retries of one call.
type Retry struct {
	Attempts int           // tries in all; default 4 (waits 0.25 + 0.5 + 1 s: a launch runs inside a 10 s write)
	Base     time.Duration // first backoff; default 250 ms, doubling
	Max      time.Duration // longest single wait; default 10 s
}

func (r Retry) attempts() int {
	if r.Attempts <= 0 {
		return 4
	}
	return r.Attempts
}

// backoff is the wait before try n+1 (n from 0).
func (r Retry) backoff(n int) time.Duration {
	base, max := r.Base, r.Max
	if base <= 0 {
		base = 250 * time.Millisecond
	}
	if max <= 0 {
		max = 10 * time.Second
	}
	d := time.Duration(float64(base) * math.Pow(2, float64(n)))
	return min(d, max)
}

// bucket is the last throttle status a shop's answers reported.
type bucket struct {
	available, restore float64
	cost               float64 // what the shop's last query was asked to cost
	at                 time.Time
}

// throttle remembers each shop's bucket and when its last product query
// ran (part 8: product queries at most one per second).
type throttle struct {
	mu          sync.Mutex
	buckets     map[string]bucket
	lastProduct map[string]time.Time
}

// maxInputArray is the platform's limit on an array argument ("Input
// arguments that accept an array have a maximum size of 250"): longer
// lists go in several calls.
const maxInputArray = 250

// costEstimate is what a query is assumed to cost before the platform
// said what the shop's queries cost.
const costEstimate = 50

// waitBucket is how long to wait until domain's bucket holds the cost of
// its last query again: a THROTTLED answer is waited out here, before the
// retry, and a bucket known to be nearly empty before any send.
func (t *throttle) waitBucket(domain string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.buckets[domain]
	if !ok || b.restore <= 0 {
		return 0
	}
	have := b.available + now.Sub(b.at).Seconds()*b.restore
	if have >= b.cost {
		return 0
	}
	return time.Duration((b.cost - have) / b.restore * float64(time.Second))
}

func (t *throttle) record(domain string, s throttleStatus, cost float64, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buckets == nil {
		t.buckets = map[string]bucket{}
	}
	if cost <= 0 {
		cost = costEstimate
	}
	t.buckets[domain] = bucket{available: s.CurrentlyAvailable, restore: s.RestoreRate, cost: cost, at: now}
}

// productSlot reserves the next product-query slot of domain and returns
// how long to wait for it.
func (t *throttle) productSlot(domain string, every time.Duration, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lastProduct == nil {
		t.lastProduct = map[string]time.Time{}
	}
	next := t.lastProduct[domain].Add(every)
	if next.Before(now) {
		next = now
	}
	t.lastProduct[domain] = next
	return next.Sub(now)
}

type throttleStatus struct {
	MaximumAvailable   float64 `json:"maximumAvailable"`
	CurrentlyAvailable float64 `json:"currentlyAvailable"`
	RestoreRate        float64 `json:"restoreRate"`
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
	Extensions struct {
		Cost struct {
			RequestedQueryCost float64        `json:"requestedQueryCost"`
			ThrottleStatus     throttleStatus `json:"throttleStatus"`
		} `json:"cost"`
	} `json:"extensions"`
}

// shopBase is the shop's admin root: BaseURL with {shop} replaced (a real
// platform, e.g. https://{shop}/admin), or BaseURL/admin/shops/<domain>
// (the fake serves every shop on one host).
func (c *Client) shopBase(domain string) string {
	if strings.Contains(c.BaseURL, "{shop}") {
		return strings.ReplaceAll(c.BaseURL, "{shop}", domain)
	}
	return c.BaseURL + "/admin/shops/" + domain
}

// graphQL runs one operation and decodes its data into out. op names the
// operation (operationName) and the failed step in an *Error.
func (c *Client) graphQL(ctx context.Context, domain, token, op, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars, "operationName": op})
	if err != nil {
		return &Error{Op: op, Message: err.Error()}
	}
	u := c.shopBase(domain) + "/api/" + APIVersion + "/graphql.json"
	var last *Error
	for n := 0; n < c.Retry.attempts(); n++ {
		if err := c.sleep(ctx, c.throttle.waitBucket(domain, c.now())); err != nil {
			return &Error{Op: op, Message: err.Error()}
		}
		status, hdr, raw, err := c.post(ctx, u, token, body)
		wait := c.Retry.backoff(n)
		switch {
		case err != nil && (ctx.Err() != nil || isTimeout(err)):
			// A platform that does not answer in time will not answer a
			// retry sooner: give up at once, inside the caller's budget.
			return &Error{Op: op, Message: "platform unreachable: " + err.Error()}
		case err != nil:
			last = &Error{Op: op, Message: "platform unreachable: " + err.Error()}
			if createsOnce[op] && !neverSent(err) {
				return last
			}
		case status == http.StatusTooManyRequests || status >= 500:
			last = &Error{Op: op, Status: status, Message: errorText(raw, status)}
			if createsOnce[op] && status != http.StatusTooManyRequests {
				return last
			}
			if s, err := strconv.ParseFloat(hdr.Get("Retry-After"), 64); err == nil && s >= 0 {
				wait = time.Duration(s * float64(time.Second))
			}
		case status >= 300:
			return &Error{Op: op, Status: status, Message: errorText(raw, status)}
		default:
			var r gqlResponse
			if err := json.Unmarshal(raw, &r); err != nil {
				return &Error{Op: op, Status: status, Message: "unreadable answer: " + err.Error()}
			}
			ts := r.Extensions.Cost.ThrottleStatus
			if ts.RestoreRate > 0 {
				c.throttle.record(domain, ts, r.Extensions.Cost.RequestedQueryCost, c.now())
			}
			if len(r.Errors) > 0 && r.Errors[0].Extensions.Code == "THROTTLED" {
				last = &Error{Op: op, Status: http.StatusTooManyRequests, Message: r.Errors[0].Message}
				if ts.RestoreRate > 0 {
					wait = 0 // the bucket wait before the retry covers it
				}
				break
			}
			if len(r.Errors) > 0 {
				return &Error{Op: op, Status: status, Message: r.Errors[0].Message, Code: r.Errors[0].Extensions.Code}
			}
			if out != nil {
				if err := json.Unmarshal(r.Data, out); err != nil {
					return &Error{Op: op, Status: status, Message: "unreadable data: " + err.Error()}
				}
			}
			return nil
		}
		if n+1 < c.Retry.attempts() {
			if err := c.sleep(ctx, wait); err != nil {
				return last
			}
		}
	}
	return last
}

func (c *Client) post(ctx context.Context, u, token string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Platform-Access-Token", token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	return resp.StatusCode, resp.Header, raw, err
}

func errorText(raw []byte, status int) string {
	var e struct {
		Error  string `json:"error"`
		Errors any    `json:"errors"`
	}
	_ = json.Unmarshal(raw, &e)
	switch {
	case e.Error != "":
		return e.Error
	case e.Errors != nil:
		return fmt.Sprint(e.Errors)
	}
	return http.StatusText(status)
}

// sleep waits d or until ctx ends; tests replace it through Client.Sleep.
func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// createsOnce are the mutations a second send would apply twice: another
// copy of each variant, another discount on every order, another script
// tag or carrier service, a second bulk operation refused as one is
// running. After a 5xx or a lost answer the platform may have run them, so
// they are not sent again; the caller's next attempt (a launch the
// merchant retries) reads what exists first. A 429 or THROTTLED answer
// ran nothing, and is retried.
var createsOnce = map[string]bool{OpDuplicateVariants: true, OpDiscountFunctions: true,
	"ScriptTagCreate": true, "CarrierServiceCreate": true, "BulkOperationRunQuery": true}

// neverSent: the connection was refused, so the platform saw nothing.
func neverSent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
