package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newLoadgenCmd()) }

func newLoadgenCmd() *cobra.Command {
	var o loadgen
	cmd := &cobra.Command{
		Use:   "loadgen",
		Short: "Simulate a storefront's visitors against the real tracking endpoints, with known true effects",
		Long: `lift loadgen plays a population of visitors against a running Lift (loopback only): each gets a
session, an assignment to a group of the test, sessions of page loads with product views, and
(with the group's true probabilities) add-to-carts, checkouts and orders with revenue. It stops
after --visitors visitors or --duration, whichever comes first, and prints what it sent per group,
so results computed from the warehouse can be checked against the truth.

Per-group flags take one value per group, control first: --split 50,50 --conversion 0.03,0.036
--add-to-cart 0.10,0.12 --aov 80,88.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := o.run()
			if err != nil {
				return err
			}
			res.print(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "http://127.0.0.1:8080", "base URL of the Lift server (loopback only)")
	f.StringVar(&o.shop, "shop", demoDomain, "shop domain")
	f.StringVar(&o.experiment, "experiment", "1", "experiment id the visitors are assigned in")
	f.IntVar(&o.visitors, "visitors", 1000, "visitors to simulate")
	f.DurationVar(&o.duration, "duration", 60*time.Second, "stop after this long even if visitors remain")
	f.IntVar(&o.concurrency, "concurrency", 16, "visitors browsing at once")
	f.Float64SliceVar(&o.split, "split", []float64{50, 50}, "traffic split per group, percent")
	f.Float64SliceVar(&o.conversion, "conversion", []float64{0.03, 0.036}, "true purchase probability per visitor, per group")
	f.Float64SliceVar(&o.addToCart, "add-to-cart", []float64{0.10, 0.12}, "true add-to-cart probability per visitor, per group")
	f.Float64SliceVar(&o.aov, "aov", []float64{80, 88}, "true average order value per group")
	f.Float64Var(&o.botShare, "bot-share", 0.02, "share of visitors that are crawlers (stored, marked is_bot)")
	f.Uint64Var(&o.seed, "seed", 1, "random seed; the same seed replays the same population")
	return cmd
}

type loadgen struct {
	target, shop, experiment     string
	visitors, concurrency        int
	duration                     time.Duration
	split, conversion, addToCart []float64
	aov                          []float64
	botShare                     float64
	seed                         uint64

	client *http.Client
	run_   string
}

// groupTally is what was sent for one group.
type groupTally struct {
	visitors, bots, addToCarts, orders atomic.Int64
	revenueCents                       atomic.Int64
}

type loadgenResult struct {
	groups   []*groupTally
	requests atomic.Int64
	failures atomic.Int64
	elapsed  time.Duration
	latMu    sync.Mutex
	lat      []time.Duration
	firstErr atomic.Value
	o        *loadgen
}

func (o *loadgen) validate() error {
	u, err := url.Parse(o.target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("loadgen: --target %q is not a URL", o.target)
	}
	host := u.Hostname()
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("loadgen: --target must be a loopback address (127.0.0.0/8, ::1, localhost), not %s", host)
		}
	}
	n := len(o.split)
	if n < 2 || len(o.conversion) != n || len(o.addToCart) != n || len(o.aov) != n {
		return errors.New("loadgen: --split, --conversion, --add-to-cart and --aov need one value per group (at least 2)")
	}
	sum := 0.0
	for i := range n {
		sum += o.split[i]
		if o.conversion[i] < 0 || o.conversion[i] > 1 || o.addToCart[i] < 0 || o.addToCart[i] > 1 || o.aov[i] <= 0 {
			return errors.New("loadgen: probabilities must be in [0,1] and AOV positive")
		}
	}
	if math.Abs(sum-100) > 1e-9 {
		return fmt.Errorf("loadgen: --split sums to %g, want 100", sum)
	}
	if o.visitors < 1 || o.concurrency < 1 || o.duration <= 0 {
		return errors.New("loadgen: --visitors, --concurrency and --duration must be positive")
	}
	return nil
}

func (o *loadgen) run() (*loadgenResult, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	o.target = strings.TrimSuffix(o.target, "/")
	o.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency}}
	o.run_ = strconv.FormatUint(o.seed, 36) + "-" + strconv.FormatInt(time.Now().Unix()%100000, 36)
	res := &loadgenResult{o: o}
	for range o.split {
		res.groups = append(res.groups, &groupTally{})
	}
	start := time.Now()
	deadline := start.Add(o.duration)
	next := make(chan int)
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Go(func() {
			for n := range next {
				o.visit(n, res)
			}
		})
	}
	for n := 0; n < o.visitors && time.Now().Before(deadline); n++ {
		next <- n
	}
	close(next)
	wg.Wait()
	res.elapsed = time.Since(start)
	if res.requests.Load() > 0 && res.failures.Load() == res.requests.Load() {
		return res, fmt.Errorf("loadgen: every request failed; first error: %v", res.firstErr.Load())
	}
	return res, nil
}

var (
	devicesW   = []string{"desktop", "mobile", "mobile", "mobile", "desktop", "tablet"}
	countriesW = []string{"US", "US", "US", "GB", "DE", "CA", "FR", "AU", "NL", "US"}
	utmSources = []string{"", "", "", "newsletter", "google", "facebook"}
	pages      = []string{"/", "/collections/all", "/collections/new", "/pages/about", "/search"}
)

const browserUA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15"
const crawlerUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// visit plays one visitor. Its randomness comes from (seed, n), so a run is
// reproducible visitor by visitor.
func (o *loadgen) visit(n int, res *loadgenResult) {
	rng := rand.New(rand.NewPCG(o.seed, uint64(n)))
	visitor := fmt.Sprintf("lg-%s-%d", o.run_, n)
	group := o.groupOf(visitor)
	g := res.groups[group]
	g.visitors.Add(1)
	bot := rng.Float64() < o.botShare
	if bot {
		g.bots.Add(1)
	}
	ua := browserUA
	if bot {
		ua = crawlerUA
	}
	device := devicesW[rng.IntN(len(devicesW))]
	country := countriesW[rng.IntN(len(countriesW))]
	utm := utmSources[rng.IntN(len(utmSources))]
	visitorType := "new"
	if rng.Float64() < 0.3 {
		visitorType = "returning"
	}

	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if !o.get(res, ua, "/api/get-session", &sess) || sess.SessionID == "" {
		return
	}
	o.get(res, ua, "/api/public/get-country-code", nil)
	o.post(res, ua, "/api/track/assignment?shop="+url.QueryEscape(o.shop), map[string]any{
		"sessionId": sess.SessionID, "visitorId": visitor, "experimentId": o.experiment, "testGroup": group,
		"createdAt": time.Now().UnixMilli(), "assignmentReason": "random_split", "country": country,
		"device": device, "visitorType": visitorType, "utmSource": utm, "utmMedium": utmMedium(utm),
	}, nil)

	event := func(eventType, path string, payload map[string]any) {
		o.post(res, ua, "/api/track/event?shop="+url.QueryEscape(o.shop), map[string]any{
			"sessionId": sess.SessionID, "visitorId": visitor, "eventType": eventType, "source": "webpixel",
			"createdAt": time.Now().UnixMilli(), "experimentIds": []string{o.experiment}, "pagePath": path,
			"payload": payload,
		}, nil)
	}
	landing := pages[rng.IntN(len(pages))]
	views := 1 + rng.IntN(5)
	var product int
	for i := range views {
		path := landing
		if i > 0 {
			path = pages[rng.IntN(len(pages))]
		}
		product = 1001 + rng.IntN(20)
		isProduct := i > 0 || rng.Float64() < 0.5
		if isProduct {
			path = fmt.Sprintf("/products/item-%d", product)
		}
		q := url.Values{"shop": {o.shop}, "sessionId": {sess.SessionID}, "experimentId": {o.experiment},
			"visitorId": {visitor}, "pagePath": {path}, "device": {device}, "country": {country},
			"visitorType": {visitorType}, "utmSource": {utm}}
		o.get(res, ua, "/api/observe/session?"+q.Encode(), nil)
		event("page_viewed", path, map[string]any{"pageType": "page"})
		if isProduct {
			pq := url.Values{"shop": {o.shop}, "productId": {strconv.Itoa(product)}, "experimentId": {o.experiment},
				"sessionId": {sess.SessionID}, "visitorId": {visitor}}
			o.get(res, ua, "/api/observe?"+pq.Encode(), nil)
			event("product_viewed", path, map[string]any{"pageType": "product",
				"productIds": []string{strconv.Itoa(product)}, "variantIds": []string{strconv.Itoa(product * 10)}})
		}
	}
	// Purchase needs an add-to-cart: P(atc) = addToCart, P(buy | atc) =
	// conversion / addToCart, so P(buy) is the configured conversion.
	pATC := max(o.addToCart[group], o.conversion[group])
	if rng.Float64() >= pATC {
		return
	}
	g.addToCarts.Add(1)
	qty := 1 + rng.IntN(2)
	event("product_added_to_cart", "/products/item-"+strconv.Itoa(product), map[string]any{
		"productIds": []string{strconv.Itoa(product)}, "variantIds": []string{strconv.Itoa(product * 10)}, "quantity": qty})
	if rng.Float64() >= o.conversion[group]/pATC {
		return
	}
	token := fmt.Sprintf("ck-%s-%d", o.run_, n)
	orderID := strconv.Itoa(5_000_000 + n)
	event("checkout_started", "/checkouts/"+token, map[string]any{"checkoutToken": token,
		"productIds": []string{strconv.Itoa(product)}, "variantIds": []string{strconv.Itoa(product * 10)}})
	event("checkout_completed", "/checkouts/"+token+"/thank_you", map[string]any{"checkoutToken": token, "orderId": orderID})
	// Order value: log-normal with the group's mean and a 50% spread.
	sigma := 0.5
	revenue := math.Round(o.aov[group]*math.Exp(sigma*rng.NormFloat64()-sigma*sigma/2)*100) / 100
	g.orders.Add(1)
	g.revenueCents.Add(int64(math.Round(revenue * 100)))
	o.post(res, ua, "/api/analytics/order", map[string]any{"shop": o.shop, "experimentId": o.experiment,
		"orderId": orderID, "testGroup": group, "revenue": revenue, "visitorId": visitor}, nil)
}

func utmMedium(source string) string {
	switch source {
	case "newsletter":
		return "email"
	case "":
		return ""
	default:
		return "cpc"
	}
}

// groupOf assigns a visitor by a hash of its id, following the split.
func (o *loadgen) groupOf(visitor string) int {
	h := fnv.New64a()
	h.Write([]byte(o.experiment + "/" + visitor))
	point := float64(h.Sum64()%10000) / 100
	acc := 0.0
	for i, s := range o.split {
		acc += s
		if point < acc {
			return i
		}
	}
	return len(o.split) - 1
}

func (o *loadgen) get(res *loadgenResult, ua, path string, into any) bool {
	req, _ := http.NewRequest("GET", o.target+path, nil)
	return o.do(res, req, ua, into)
}

func (o *loadgen) post(res *loadgenResult, ua, path string, body any, into any) bool {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", o.target+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8") // what sendBeacon sends
	return o.do(res, req, ua, into)
}

func (o *loadgen) do(res *loadgenResult, req *http.Request, ua string, into any) bool {
	req.Header.Set("User-Agent", ua)
	res.requests.Add(1)
	t0 := time.Now()
	resp, err := o.client.Do(req)
	if err != nil {
		res.failures.Add(1)
		res.firstErr.CompareAndSwap(nil, err.Error())
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	d := time.Since(t0)
	res.latMu.Lock()
	res.lat = append(res.lat, d)
	res.latMu.Unlock()
	if resp.StatusCode >= 300 {
		res.failures.Add(1)
		res.firstErr.CompareAndSwap(nil, fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, body))
		return false
	}
	if into != nil {
		json.Unmarshal(body, into)
	}
	return true
}

func (r *loadgenResult) print(w io.Writer) {
	o := r.o
	fmt.Fprintf(w, "lift loadgen: %s, shop %s, experiment %s, run %s\n", o.target, o.shop, o.experiment, o.run_)
	fmt.Fprintf(w, "%-7s %9s %6s %11s %8s %10s %12s %9s %8s\n", "group", "visitors", "bots", "add-to-cart", "orders", "conv", "revenue", "AOV", "true")
	for i, g := range r.groups {
		v, orders := g.visitors.Load(), g.orders.Load()
		rev := float64(g.revenueCents.Load()) / 100
		conv, aov := 0.0, 0.0
		if v > 0 {
			conv = float64(orders) / float64(v)
		}
		if orders > 0 {
			aov = rev / float64(orders)
		}
		fmt.Fprintf(w, "%-7d %9d %6d %11d %8d %9.2f%% %12.2f %9.2f %5.1f%%/%g\n", i, v, g.bots.Load(), g.addToCarts.Load(),
			orders, 100*conv, rev, aov, 100*o.conversion[i], o.aov[i])
	}
	slices.Sort(r.lat)
	reqs := r.requests.Load()
	fmt.Fprintf(w, "%d requests in %s (%.0f/s), %d failed, p50 %.2f ms, p99 %.2f ms\n", reqs, r.elapsed.Round(time.Millisecond),
		float64(reqs)/r.elapsed.Seconds(), r.failures.Load(), pct(r.lat, 0.5), pct(r.lat, 0.99))
	if e := r.firstErr.Load(); e != nil {
		fmt.Fprintf(w, "first failure: %v\n", e)
	}
}
