package platform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/liftab/lift/experiment"
)

// Fake is an in-process server of the admin API Client calls: OAuth and
// the GraphQL Admin API operations (fake_install.go, fake_graphql.go,
// fake_launch.go, fake_bulk.go). It keeps per-shop state the way the
// platform does (one cart transform per function, duplicated variants get
// new ids) and lets a test make any operation
// fail. Serve it with httptest.NewServer or any listener.
type Fake struct {
	Token string // when set, requests must carry it (or a token issued by OAuth)
	// APIKey and APISecret are the app's OAuth credentials: authorize
	// checks the client id, signs its redirect with the secret, and
	// access_token checks both (fake_install.go).
	APIKey, APISecret string
	// BulkPolls is how many polls a bulk operation answers RUNNING before
	// it completes.
	BulkPolls int
	// Catalog, when set, is what a shop sells until SetShop says
	// otherwise (lift dev's built-in platform: the demo catalog).
	Catalog *experiment.CatalogSnapshot
	// LiftRatesURL is Lift's carrier callback: a catalog zone marked
	// LiftRates offers the carrier service there (fake_delivery.go).
	LiftRatesURL string

	mux      *http.ServeMux
	mu       sync.Mutex
	shops    map[string]*fakeShop
	failures map[string]int // "domain op" → status to answer
	nextID   int64
}

type fakeShop struct {
	CartTransforms map[string]fakeTransform // by id

	DuplicateVariants map[string][]string    // experiment id → new variant ids
	CarrierServices   map[string]fakeCarrier // by id
	AppBlocks         map[string]string      // theme id → Lift's snippet as written
	DiscountFunctions map[string]string      // discount id → experiment id
	install           *fakeInstall
	stock             *fakeStock
}

// NewFake returns an empty fake platform.
func NewFake() *Fake {
	f := &Fake{shops: map[string]*fakeShop{}, failures: map[string]int{}, nextID: 900000, mux: http.NewServeMux()}
	f.mountInstall()
	return f
}

// Fail makes every call to operation op (an Op… constant or any
// operationName) for the shop answer status (or hang, with StatusHang)
// until Heal.
func (f *Fake) Fail(domain, op string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[domain+" "+op] = status
}

// StatusHang makes Fail hold the request until the caller gives up.
const StatusHang = -1

// Heal clears every failure of the shop.
func (f *Fake) Heal(domain string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.failures {
		if len(k) > len(domain) && k[:len(domain)+1] == domain+" " {
			delete(f.failures, k)
		}
	}
}

// fakeCarrier is a carrier service: where the platform asks for rates.
type fakeCarrier struct {
	CallbackURL string
	Active      bool
}

// PutCarrierService registers a carrier service as another app (or an
// earlier install) would have.
func (f *Fake) PutCarrierService(domain, callbackURL string, active bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shop(domain).CarrierServices[f.id("DeliveryCarrierService")] = fakeCarrier{CallbackURL: callbackURL, Active: active}
}

// ActiveCarriers lists the callback URLs of the shop's active carrier
// services, sorted.
func (f *Fake) ActiveCarriers(domain string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, x := range f.shop(domain).CarrierServices {
		if x.Active {
			out = append(out, x.CallbackURL)
		}
	}
	slices.Sort(out)
	return out
}

// fakeTransform is a registered cart transform: its function, and the
// value of Lift's function mark when it has one.
type fakeTransform struct{ Function, Mark string }

// CartTransform returns the id of the cart transform registered for a
// function, if any.
func (f *Fake) CartTransform(domain, functionID string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, x := range f.shop(domain).CartTransforms {
		if x.Function == functionID {
			return id, true
		}
	}
	return "", false
}

// Discounts is how many automatic discounts of a test the shop has.
func (f *Fake) Discounts(domain, experimentID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, exp := range f.shop(domain).DiscountFunctions {
		if exp == experimentID {
			n++
		}
	}
	return n
}

// HasAppBlock reports whether the Lift block is installed in a theme.
func (f *Fake) HasAppBlock(domain, themeID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.shop(domain).AppBlocks[themeID]
	return ok
}

// AppBlock is Lift's snippet as written into a theme ("" when none is).
func (f *Fake) AppBlock(domain, themeID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shop(domain).AppBlocks[themeID]
}

func (f *Fake) shop(domain string) *fakeShop {
	s, ok := f.shops[domain]
	if !ok {
		s = &fakeShop{CartTransforms: map[string]fakeTransform{}, CarrierServices: map[string]fakeCarrier{}, DuplicateVariants: map[string][]string{},
			AppBlocks: map[string]string{}, DiscountFunctions: map[string]string{}, install: newFakeInstall(domain), stock: newFakeStock()}
		if f.Catalog != nil {
			s.install.Catalog = *f.Catalog
		}
		f.shops[domain] = s
	}
	return s
}

func (f *Fake) id(kind string) string {
	f.nextID++
	return fmt.Sprintf("gid://shopify/%s/%d", kind, f.nextID)
}

// ServeHTTP implements http.Handler.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.mux.ServeHTTP(w, r) }

func writeFake(w http.ResponseWriter, status int, v any) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
