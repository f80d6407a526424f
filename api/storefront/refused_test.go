package storefront_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/liftab/lift/api/storefront"
	"github.com/liftab/lift/ingest"
)

// rejections records the ingester's Rejected calls.
type rejections struct {
	mu  sync.Mutex
	got map[string]int // "kind reason"
}

func (r *rejections) Accepted(string, int)         {}
func (r *rejections) Committed(int, time.Duration) {}
func (r *rejections) Flushed(int)                  {}
func (r *rejections) FlushFailed()                 {}
func (r *rejections) Rejected(kind, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[kind+" "+reason]++
}

// TestEveryRefusalIsCounted: a request refused by the surface before the
// ingester sees it (an unknown shop, a body that does not decode) counts in
// lift_ingest_requests_rejected_total like one the ingester refuses; each
// refusal counts once.
func TestEveryRefusalIsCounted(t *testing.T) {
	t.Parallel()
	obs := &rejections{got: map[string]int{}}
	b := buildWith(t, func(a string) string { return a }, func(c *ingest.Config) { c.Observer = obs })
	event := storefront.PathTrackEvent + "?shop=" + shopDomain
	tests := []struct {
		name, target, body, want string
	}{
		{"MalformedJSON", event, `{"sessionId":`, "event invalid_request"},
		{"WrongType", event, `{"sessionId":7}`, "event invalid_request"},
		{"UnknownShop", storefront.PathTrackEvent + "?shop=nobody.myshopify.com", eventBody("e-1", "page_viewed", "101"), "event unknown_shop"},
		{"AssignmentMalformed", storefront.PathTrackAssign + "?shop=" + shopDomain, `[`, "assignment invalid_request"},
		{"LegacyMalformed", storefront.PathAddToCart, `{`, "legacy invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(t, "POST", tc.target, "application/json", tc.body)
			if r.status < 400 || r.status >= 500 {
				t.Fatalf("%s = %d %s, want a 4xx", tc.name, r.status, r.raw)
			}
		})
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	total := 0
	for _, n := range obs.got {
		total += n
	}
	if total != len(tests) {
		t.Errorf("%d rejections counted for %d refused requests: %v", total, len(tests), obs.got)
	}
	for _, tc := range tests {
		if obs.got[tc.want] == 0 {
			t.Errorf("%s: no %q in %s", tc.name, tc.want, fmt.Sprint(obs.got))
		}
	}
}
