package platform

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/liftab/lift/experiment"
)

// The fake's install side: OAuth (authorize auto-approves, as if the
// merchant clicked Install; access_token exchanges a code once) and the
// GraphQL Admin API operations the Client sends, dispatched on
// operationName, with a cost bucket reported in extensions and
// injectable THROTTLED answers, 5xx and 429s.

// fakeInstall is a shop's install-side state.
type fakeInstall struct {
	Info       experiment.ShopInfo
	Catalog    experiment.CatalogSnapshot
	Webhooks   map[string]fakeSub // topic →
	ScriptTags []string
	scriptSrc  map[string]string // script tag id → src (fake_script.go)
	Metafields []string          // keys in Lift's namespace
	Delivery   map[string]string // delivery customization id → Lift's experiment_id mark ("" for the merchant's)
	Payment    map[string]string // payment customization id → likewise
	// disabledMarkets are markets the merchant turned off (PutDisabledMarket).
	disabledMarkets []experiment.Market
	// ZoneCarriers are the carrier services taking part in each zone.
	ZoneCarriers map[string][]fakeZoneCarrier
	tokens       map[string]string // issued token → the scopes it was granted
	codes        map[string]string // code → granted scope
	calls        map[string]int    // operation → answered calls
	attempts     map[string]int    // operation → every request
	transient    map[string][]int  // operation → statuses to answer next, in order
	throttled    int               // next requests answered THROTTLED
	products     []time.Time       // when each Products query arrived
	oauth        bool              // a token was issued: only issued tokens count from then on
	bulk         *fakeBulk         // the shop's current bulk operation
}

type fakeSub struct{ ID, URL string }

func newFakeInstall(domain string) *fakeInstall {
	return &fakeInstall{Info: experiment.ShopInfo{Name: domain, Currency: "USD", Timezone: "UTC"},
		Webhooks: map[string]fakeSub{}, Delivery: map[string]string{}, Payment: map[string]string{}, ZoneCarriers: map[string][]fakeZoneCarrier{}, scriptSrc: map[string]string{}, tokens: map[string]string{}, codes: map[string]string{},
		calls: map[string]int{}, attempts: map[string]int{}, transient: map[string][]int{}}
}

// FakePageSize is how many nodes one page of the fake holds (variants,
// collections, a collection's products), whatever first asks: a small
// catalog then takes every paging path.
const FakePageSize = 2

func (f *Fake) mountInstall() {
	f.mux.HandleFunc("GET /admin/shops/{shop}/oauth/authorize", f.authorize)
	f.mux.HandleFunc("POST /admin/shops/{shop}/oauth/access_token", f.accessToken)
	f.mux.HandleFunc("POST /admin/shops/{shop}/api/{version}/graphql.json", f.graphQL)
	f.mountBulk()
}

// SetShop sets what the platform says about a shop and its catalog.
func (f *Fake) SetShop(domain string, info experiment.ShopInfo, c experiment.CatalogSnapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.shop(domain).install
	in.Info, in.Catalog = info, c
}

// PutDisabledMarket adds a market the merchant turned off: the platform
// lists it, selling to no one.
func (f *Fake) PutDisabledMarket(domain string, m experiment.Market) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.shop(domain).install
	in.disabledMarkets = append(in.disabledMarkets, m)
}

// PutLiftResources adds a script tag, a metafield and a delivery and a
// payment customization, as a running Lift would have left them.
func (f *Fake) PutLiftResources(domain string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.shop(domain).install
	in.ScriptTags = append(in.ScriptTags, f.id("ScriptTag"))
	in.Metafields = append(in.Metafields, "config-"+strconv.Itoa(len(in.Metafields)+1))
	in.Delivery[f.id("DeliveryCustomization")] = "1"
	in.Payment[f.id("PaymentCustomization")] = "1"
}

// PutMerchantResources adds an automatic discount and a delivery and a
// payment customization of the merchant's own (or another app's): no
// Lift metafield on them, and Lift's cleanup must leave them.
func (f *Fake) PutMerchantResources(domain string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shop(domain)
	s.DiscountFunctions[f.id("DiscountAutomaticNode")] = ""
	s.install.Delivery[f.id("DeliveryCustomization")] = ""
	s.install.Payment[f.id("PaymentCustomization")] = ""
}

// MerchantResources counts what PutMerchantResources put that is still there.
func (f *Fake) MerchantResources(domain string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shop(domain)
	return unmarked(s.DiscountFunctions) + unmarked(s.install.Delivery) + unmarked(s.install.Payment)
}

func unmarked(m map[string]string) int {
	n := 0
	for _, mark := range m {
		if mark == "" {
			n++
		}
	}
	return n
}

// LiftResources counts what Lift has on the shop: script tags,
// metafields, duplicated variants, cart transforms, delivery and payment
// customizations, discount functions.
func (f *Fake) LiftResources(domain string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shop(domain)
	n := len(s.install.ScriptTags) + len(s.install.Metafields) + len(s.CartTransforms)
	for _, v := range s.DuplicateVariants {
		n += len(v)
	}
	for _, m := range []map[string]string{s.DiscountFunctions, s.install.Delivery, s.install.Payment} {
		n += len(m) - unmarked(m)
	}
	return n
}

// Webhooks returns the shop's subscriptions: topic → callback URL.
func (f *Fake) Webhooks(domain string) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for t, s := range f.shop(domain).install.Webhooks {
		out[t] = s.URL
	}
	return out
}

// Calls is how many times operation was answered (not refused) for the shop.
func (f *Fake) Calls(domain, operation string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shop(domain).install.calls[operation]
}

// Attempts is how many requests of operation arrived for the shop.
func (f *Fake) Attempts(domain, operation string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shop(domain).install.attempts[operation]
}

// ProductQueryTimes is when each Products query of the shop arrived.
func (f *Fake) ProductQueryTimes(domain string) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.shop(domain).install.products...)
}

// FailNext answers the next requests of operation with statuses, one each.
func (f *Fake) FailNext(domain, operation string, statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.shop(domain).install
	in.transient[operation] = append(in.transient[operation], statuses...)
}

// ThrottleNext answers the next n GraphQL requests THROTTLED.
func (f *Fake) ThrottleNext(domain string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shop(domain).install.throttled += n
}

// RevokeTokens forgets every access token issued for the shop, as the
// platform does when the app is uninstalled.
func (f *Fake) RevokeTokens(domain string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shop(domain).install.tokens = map[string]string{}
}

func (f *Fake) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if (f.APIKey != "" && q.Get("client_id") != f.APIKey) || q.Get("redirect_uri") == "" {
		writeFake(w, http.StatusBadRequest, map[string]string{"error": "invalid client_id or redirect_uri"})
		return
	}
	domain := r.PathValue("shop")
	code := randomHex(16)
	f.mu.Lock()
	f.shop(domain).install.codes[code] = q.Get("scope")
	f.mu.Unlock()
	back := url.Values{"code": {code}, "shop": {domain}, "state": {q.Get("state")},
		"timestamp": {strconv.FormatInt(time.Now().Unix(), 10)}}
	back.Set("hmac", experiment.QueryHMAC(back, []byte(f.APISecret)))
	http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
}

func (f *Fake) accessToken(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Code         string `json:"code"`
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeFake(w, http.StatusBadRequest, map[string]string{"error": "malformed JSON"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shop(r.PathValue("shop")).install
	scope, ok := s.codes[in.Code]
	if !ok || in.ClientID != f.APIKey || in.ClientSecret != f.APISecret {
		writeFake(w, http.StatusBadRequest, map[string]string{"error": "invalid_request: code, client_id or client_secret"})
		return
	}
	delete(s.codes, in.Code)
	tok := "shpat_" + randomHex(16)
	s.tokens[tok], s.oauth = scope, true
	writeFake(w, http.StatusOK, map[string]string{"access_token": tok, "scope": scope})
}

// authorized: a token issued to the shop, the fake's app Token, or
// anything while neither exists (a dev shop installed without OAuth).
func (f *Fake) authorized(in *fakeInstall, tok string) bool {
	if _, issued := in.tokens[tok]; issued || (f.Token != "" && tok == f.Token) {
		return true
	}
	return f.Token == "" && !in.oauth
}

// scopeOf is the access scope a read needs, for the reads an install made
// before Lift asked for that scope (a token's grant is fixed until the
// merchant approves the app's new scopes).
var scopeOf = map[string]string{OpDeliveryProfiles: "read_shipping", OpDeliveryZones: "read_shipping", OpZoneCarriers: "read_shipping",
	OpMarkets: "read_markets"}

// granted: an issued token's scopes include need, or write access to the
// same resource (which includes read). The app Token and a dev shop's
// anything have every scope.
func granted(in *fakeInstall, tok, need string) bool {
	scope, issued := in.tokens[tok]
	if !issued {
		return true
	}
	for _, s := range strings.Split(scope, ",") {
		s = strings.TrimSpace(s)
		if s == need || s == "write_"+strings.TrimPrefix(need, "read_") {
			return true
		}
	}
	return false
}

type gqlRequest struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName"`
	host, domain  string         // where the request came in, for URLs the fake hands out
}

const fakeBucketMax, fakeRestore, fakeCost = 1000.0, 50.0, 10.0

func (f *Fake) graphQL(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var req gqlRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeFake(w, http.StatusBadRequest, map[string]string{"error": "malformed JSON"})
		return
	}
	domain := r.PathValue("shop")
	req.host, req.domain = r.Host, domain
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shop(domain)
	in := s.install
	in.attempts[req.OperationName]++
	if !f.authorized(in, r.Header.Get("X-Platform-Access-Token")) {
		writeFake(w, http.StatusUnauthorized, map[string]string{"errors": "[API] Invalid API key or access token"})
		return
	}
	if st := in.transient[req.OperationName]; len(st) > 0 {
		in.transient[req.OperationName] = st[1:]
		if st[0] == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeFake(w, st[0], map[string]string{"errors": "injected failure"})
		return
	}
	if status, ok := f.failures[domain+" "+req.OperationName]; ok {
		if status == StatusHang {
			f.mu.Unlock()
			<-r.Context().Done() // the body was read: the server notices the caller hanging up
			f.mu.Lock()
			return
		}
		writeFake(w, status, map[string]string{"errors": "injected failure of " + req.OperationName})
		return
	}
	if need, ok := scopeOf[req.OperationName]; ok && !granted(in, r.Header.Get("X-Platform-Access-Token"), need) {
		writeFake(w, http.StatusOK, map[string]any{"errors": []map[string]any{{
			"message":    fmt.Sprintf("Access denied for %s field. Required access: `%s` access scope.", req.OperationName, need),
			"extensions": map[string]any{"code": "ACCESS_DENIED"}}}})
		return
	}
	if n := oversizedInput(map[string]any(req.Variables)); n > 0 {
		writeFake(w, http.StatusOK, map[string]any{"errors": []map[string]any{{
			"message":    fmt.Sprintf("The input array size of %d is greater than the maximum allowed of %d.", n, maxInputArray),
			"extensions": map[string]any{"code": "MAX_INPUT_SIZE_EXCEEDED"}}}})
		return
	}
	requested, err := queryCost(req.Query, req.Variables)
	if err != nil {
		writeFake(w, http.StatusOK, map[string]any{"errors": []map[string]string{{"message": err.Error()}}})
		return
	}
	if requested > maxQueryCost {
		writeFake(w, http.StatusOK, map[string]any{"errors": []map[string]any{{
			"message":    fmt.Sprintf("Query cost is %d, which exceeds the single query max cost limit (%d).", requested, maxQueryCost),
			"extensions": map[string]any{"code": "MAX_COST_EXCEEDED", "cost": requested, "maxCost": maxQueryCost}}}})
		return
	}
	// The platform charges the requested cost up front and refunds down to
	// what the answer held; the fake's pages hold a few nodes, so it
	// charges a flat fakeCost and its bucket is full again by the next call.
	cost := map[string]any{"requestedQueryCost": requested, "actualQueryCost": fakeCost,
		"throttleStatus": map[string]float64{"maximumAvailable": fakeBucketMax, "currentlyAvailable": fakeBucketMax - fakeCost, "restoreRate": fakeRestore}}
	if in.throttled > 0 {
		in.throttled--
		cost["throttleStatus"] = map[string]float64{"maximumAvailable": fakeBucketMax, "currentlyAvailable": 0, "restoreRate": fakeRestore}
		writeFake(w, http.StatusOK, map[string]any{"errors": []map[string]any{{"message": "Throttled",
			"extensions": map[string]string{"code": "THROTTLED"}}}, "extensions": map[string]any{"cost": cost}})
		return
	}
	data, errMsg := f.operation(s, req)
	if errMsg != "" {
		writeFake(w, http.StatusOK, map[string]any{"errors": []map[string]string{{"message": errMsg}}})
		return
	}
	in.calls[req.OperationName]++
	writeFake(w, http.StatusOK, map[string]any{"data": data, "extensions": map[string]any{"cost": cost}})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
