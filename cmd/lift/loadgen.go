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
		Args:  cobra.NoArgs,
		Short: "Simulate a storefront's visitors against the real tracking endpoints, with known true effects",
		Long: `lift loadgen plays a population of visitors against a running Lift (loopback only): each gets a
session, an assignment to a group of the test, a session of page loads with views of the demo
catalog's products, and (with the group's true probabilities) add-to-carts, checkouts and orders.
Pages are --dwell apart on average (about a third of visitors bounce after one page), so sessions
last minutes, as in a real store. Orders are legacy analytics calls with revenue only, or, with
--webhook-secret, ORDERS_CREATE webhooks whose lines come from the catalog, so the worker prices
their cost and profit is revenue minus cost. It stops sending new visitors after --visitors or
--duration, whichever comes first (visitors still browsing then finish without pauses), and prints
what it sent per group, so results computed from the warehouse can be checked against the truth.

Per-group flags take one value per group, control first: --split 50,50 --conversion 0.03,0.036
--add-to-cart 0.10,0.12 --aov 80,88.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.progress = cmd.OutOrStdout()
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
	f.DurationVar(&o.duration, "duration", 10*time.Minute, "stop after this long even if visitors remain")
	f.DurationVar(&o.dwell, "dwell", time.Minute, "average pause between a visitor's page loads; 0 sends every page at once")
	f.StringVar(&o.webhookSecret, "webhook-secret", "", "the server's platform.webhook_secret: orders are sent as signed ORDERS_CREATE webhooks, so their cost comes from the catalog (needs the api role and a worker); empty sends legacy orders with revenue only")
	f.IntVar(&o.concurrency, "concurrency", 1000, "visitors browsing at once (most of a visitor's time is a pause between pages)")
	f.Float64SliceVar(&o.split, "split", []float64{50, 50}, "traffic split per group, percent")
	f.Float64SliceVar(&o.conversion, "conversion", []float64{0.03, 0.036}, "true purchase probability per visitor, per group")
	f.Float64SliceVar(&o.addToCart, "add-to-cart", []float64{0.10, 0.12}, "true add-to-cart probability per visitor, per group")
	f.Float64SliceVar(&o.aov, "aov", []float64{80, 88}, "true average order value per group")
	f.Float64Var(&o.botShare, "bot-share", 0.02, "share of visitors that are crawlers (stored, marked is_bot; they browse only, and the table counts the others as visitors, as Lift does)")
	f.Uint64Var(&o.seed, "seed", 1, "random seed; the same seed replays the same population")
	return cmd
}

type loadgen struct {
	target, shop, experiment     string
	visitors, concurrency        int
	duration, dwell              time.Duration
	split, conversion, addToCart []float64
	aov                          []float64
	botShare                     float64
	seed                         uint64
	webhookSecret                string
	progress                     io.Writer // a terminal gets a progress line; nil: none

	client   *http.Client
	run_     string
	deadline time.Time
	catalog  []lgVariant
}

// groupTally is what was sent for one group.
type groupTally struct {
	visitors, bots, addToCarts, orders atomic.Int64
	revenueCents, costCents            atomic.Int64 // cost only when orders carry lines (--webhook-secret)
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
	if o.visitors < 1 || o.concurrency < 1 || o.duration <= 0 || o.dwell < 0 {
		return errors.New("loadgen: --visitors, --concurrency and --duration must be positive")
	}
	return nil
}

func (o *loadgen) run() (*loadgenResult, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	o.target = strings.TrimSuffix(o.target, "/")
	catalog, err := demoCatalog()
	if err != nil {
		return nil, err
	}
	o.catalog = catalog
	// Visitors mostly pause between pages, so far fewer connections than
	// visitors are busy at once.
	o.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: min(o.concurrency, 128)}}
	o.run_ = strconv.FormatUint(o.seed, 36) + "-" + strconv.FormatInt(time.Now().Unix()%100000, 36)
	res := &loadgenResult{o: o}
	for range o.split {
		res.groups = append(res.groups, &groupTally{})
	}
	start := time.Now()
	deadline := start.Add(o.duration)
	o.deadline = deadline
	stop := startProgress(o.progress, "loadgen", "visitors", int64(o.visitors), deadline, res.visitorsStarted)
	defer stop()
	next := make(chan int)
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Go(func() {
			for n := range next {
				o.visit(n, res)
			}
		})
	}
	// Paced visitors arrive steadily rather than all at the first second: a
	// visitor browses about 3 dwells, so one every 3·dwell/concurrency keeps
	// about --concurrency browsing.
	var arrival time.Duration
	if o.dwell > 0 {
		arrival = 3 * o.dwell / time.Duration(o.concurrency)
	}
	for n := 0; n < o.visitors && time.Now().Before(deadline); n++ {
		next <- n
		time.Sleep(arrival)
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
	v := &lgVisit{o: o, res: res, rng: rng, n: n, visitor: fmt.Sprintf("lg-%s-%d", o.run_, n)}
	v.group = o.groupOf(v.visitor)
	g := res.groups[v.group]
	g.visitors.Add(1)
	v.bot = rng.Float64() < o.botShare
	v.ua = browserUA
	if v.bot {
		g.bots.Add(1)
		v.ua = crawlerUA
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
	if !o.get(res, v.ua, "/api/get-session", &sess) || sess.SessionID == "" {
		return
	}
	v.session = sess.SessionID
	o.get(res, v.ua, "/api/public/get-country-code", nil)
	o.post(res, v.ua, "/api/track/assignment?shop="+url.QueryEscape(o.shop), map[string]any{
		"sessionId": v.session, "visitorId": v.visitor, "experimentId": o.experiment, "testGroup": v.group,
		"createdAt": time.Now().UnixMilli(), "assignmentReason": "random_split", "country": country,
		"device": device, "visitorType": visitorType, "utmSource": utm, "utmMedium": utmMedium(utm),
	}, nil)
	item := v.browse(url.Values{"shop": {o.shop}, "sessionId": {v.session}, "experimentId": {o.experiment},
		"visitorId": {v.visitor}, "device": {device}, "country": {country}, "visitorType": {visitorType}, "utmSource": {utm}})
	// Crawlers browse and leave: a bot's order would be a purchase Lift
	// rightly leaves out with its visitor (is_bot), and the table below
	// would then count one order more than the results show.
	if !v.bot {
		v.buy(item)
	}
}

// lgVisit is one simulated visitor's session.
type lgVisit struct {
	o                    *loadgen
	res                  *loadgenResult
	rng                  *rand.Rand
	n, group             int
	visitor, session, ua string
	bot                  bool
}

// event sends one tracking event of the visit.
func (v *lgVisit) event(eventType, path string, payload map[string]any) {
	v.o.post(v.res, v.ua, "/api/track/event?shop="+url.QueryEscape(v.o.shop), map[string]any{
		"sessionId": v.session, "visitorId": v.visitor, "eventType": eventType, "source": "webpixel",
		"createdAt": time.Now().UnixMilli(), "experimentIds": []string{v.o.experiment}, "pagePath": path,
		"payload": payload,
	}, nil)
}

// browse views the session's pages, observing each as the tracker does
// (q: the session's observe parameters), and returns the last item seen.
func (v *lgVisit) browse(q url.Values) lgVariant {
	o, rng := v.o, v.rng
	landing := pages[rng.IntN(len(pages))]
	var item lgVariant
	for i := range pagesInSession(rng) {
		if i > 0 {
			o.pause(rng)
		}
		path := landing
		if i > 0 {
			path = pages[rng.IntN(len(pages))]
		}
		item = o.catalog[rng.IntN(len(o.catalog))]
		product := item.product
		isProduct := i > 0 && rng.Float64() < 0.7 || i == 0 && rng.Float64() < 0.5
		if isProduct {
			path = "/products/item-" + product
		}
		q.Set("pagePath", path)
		o.get(v.res, v.ua, "/api/observe/session?"+q.Encode(), nil)
		v.event("page_viewed", path, map[string]any{"pageType": "page"})
		if isProduct {
			pq := url.Values{"shop": {o.shop}, "productId": {product}, "experimentId": {o.experiment},
				"sessionId": {v.session}, "visitorId": {v.visitor}}
			o.get(v.res, v.ua, "/api/observe?"+pq.Encode(), nil)
			v.event("product_viewed", path, map[string]any{"pageType": "product",
				"productIds": []string{product}, "variantIds": []string{item.variant}})
		}
	}
	return item
}

// buy adds item to the cart and, with the group's odds, checks out: the
// order arrives as a signed webhook (or, without a webhook secret, as the
// legacy order call), and is counted in the table.
func (v *lgVisit) buy(item lgVariant) {
	o, rng, g := v.o, v.rng, v.res.groups[v.group]
	// Purchase needs an add-to-cart: P(atc) = addToCart, P(buy | atc) =
	// conversion / addToCart, so P(buy) is the configured conversion.
	pATC := max(o.addToCart[v.group], o.conversion[v.group])
	if rng.Float64() >= pATC {
		return
	}
	g.addToCarts.Add(1)
	qty := 1 + rng.IntN(2)
	v.event("product_added_to_cart", "/products/item-"+item.product, map[string]any{
		"productIds": []string{item.product}, "variantIds": []string{item.variant}, "quantity": qty})
	if rng.Float64() >= o.conversion[v.group]/pATC {
		return
	}
	o.pause(rng) // from the cart to the checkout
	token := fmt.Sprintf("ck-%s-%d", o.run_, v.n)
	orderID := strconv.Itoa(5_000_000 + v.n)
	v.event("checkout_started", "/checkouts/"+token, map[string]any{"checkoutToken": token,
		"productIds": []string{item.product}, "variantIds": []string{item.variant}})
	o.pause(rng) // filling in the checkout
	v.event("checkout_completed", "/checkouts/"+token+"/thank_you", map[string]any{"checkoutToken": token, "orderId": orderID})
	// Order value: log-normal with the group's mean and a 50% spread.
	sigma := 0.5
	target := o.aov[v.group] * math.Exp(sigma*rng.NormFloat64()-sigma*sigma/2)
	if o.webhookSecret != "" {
		lines := basket(rng, o.catalog, item, target)
		if o.sendOrderWebhook(v.res, v.n, orderID, v.visitor, v.session, v.group, lines) {
			g.orders.Add(1)
			g.revenueCents.Add(total(lines, false))
			g.costCents.Add(total(lines, true))
		}
		return
	}
	revenue := math.Round(target*100) / 100
	g.orders.Add(1)
	g.revenueCents.Add(int64(math.Round(revenue * 100)))
	o.post(v.res, v.ua, "/api/analytics/order", map[string]any{"shop": o.shop, "experimentId": o.experiment,
		"orderId": orderID, "testGroup": v.group, "revenue": revenue, "visitorId": v.visitor}, nil)
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

// visitorsStarted counts the visitors sent so far, bots included.
func (r *loadgenResult) visitorsStarted() int64 {
	var n int64
	for _, g := range r.groups {
		n += g.visitors.Load()
	}
	return n
}

func (r *loadgenResult) print(w io.Writer) {
	o := r.o
	fmt.Fprintf(w, "lift loadgen: %s, shop %s, experiment %s, run %s\n", o.target, o.shop, o.experiment, o.run_)
	fmt.Fprintf(w, "%-7s %9s %6s %11s %8s %10s %12s %9s %8s\n", "group", "visitors", "bots", "add-to-cart", "orders", "conv", "revenue", "AOV", "true")
	for i, g := range r.groups {
		// Visitors are the humans, as Lift counts them (sample_size): the
		// bots browse only and are left out.
		v, orders := g.visitors.Load()-g.bots.Load(), g.orders.Load()
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
	for i, g := range r.groups {
		if c := g.costCents.Load(); c > 0 {
			rev := g.revenueCents.Load()
			fmt.Fprintf(w, "group %d: catalog cost %.2f, profit %.2f (%.0f%% margin)\n", i, float64(c)/100, float64(rev-c)/100,
				100*float64(rev-c)/float64(rev))
		}
	}
	slices.Sort(r.lat)
	reqs := r.requests.Load()
	fmt.Fprintf(w, "%d requests in %s (%.0f/s), %d failed, p50 %.2f ms, p99 %.2f ms\n", reqs, r.elapsed.Round(time.Millisecond),
		float64(reqs)/r.elapsed.Seconds(), r.failures.Load(), pct(r.lat, 0.5), pct(r.lat, 0.99))
	if e := r.firstErr.Load(); e != nil {
		fmt.Fprintf(w, "first failure: %v\n", e)
	}
}
