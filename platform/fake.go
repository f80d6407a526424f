package platform

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Fake is an in-process server of the admin API endpoints Client calls. It
// keeps per-shop state the way the platform does (a second cart transform
// for a test is refused, duplicated variants get new ids) and lets a test
// make any endpoint fail. Serve it with httptest.NewServer or any listener.
type Fake struct {
	Token string // when set, requests must carry it (or a token issued by OAuth)
	// APIKey and APISecret are the app's OAuth credentials: authorize
	// checks the client id, signs its redirect with the secret, and
	// access_token checks both (fake_install.go).
	APIKey, APISecret string
	// BulkPolls is how many polls a bulk operation answers RUNNING before
	// it completes.
	BulkPolls int

	mux      *http.ServeMux
	mu       sync.Mutex
	shops    map[string]*fakeShop
	failures map[string]int // "domain op" → status to answer
	nextID   int64
}

type fakeShop struct {
	CartTransforms    map[string]string   // experiment id → transform id
	DuplicateVariants map[string][]string // experiment id → new variant ids
	CarrierServices   []string
	AppBlocks         map[string]bool // theme id
	DiscountFunctions map[string]string
	install           *fakeInstall
}

// Fake endpoint names for Fail.
const (
	OpDuplicateVariants = "duplicate_variants"
	OpCartTransform     = "cart_transforms"
	OpCarrierServices   = "carrier_services"
	OpAppBlocks         = "app_blocks"
	OpDiscountFunctions = "discount_functions"
)

// NewFake returns an empty fake platform.
func NewFake() *Fake {
	f := &Fake{shops: map[string]*fakeShop{}, failures: map[string]int{}, nextID: 900000, mux: http.NewServeMux()}
	f.mux.HandleFunc("POST /admin/shops/{shop}/variants/duplicate", f.handle(OpDuplicateVariants, f.duplicate))
	f.mux.HandleFunc("POST /admin/shops/{shop}/cart_transforms", f.handle(OpCartTransform, f.cartTransform))
	f.mux.HandleFunc("GET /admin/shops/{shop}/carrier_services", f.handle(OpCarrierServices, f.listCarriers))
	f.mux.HandleFunc("POST /admin/shops/{shop}/carrier_services", f.handle(OpCarrierServices, f.createCarrier))
	f.mux.HandleFunc("POST /admin/shops/{shop}/themes/{theme}/app_blocks", f.handle(OpAppBlocks, f.appBlock))
	f.mux.HandleFunc("POST /admin/shops/{shop}/discount_functions", f.handle(OpDiscountFunctions, f.discount))
	f.mountInstall()
	return f
}

// Fail makes every call to op for the shop answer status (or hang, with
// StatusHang) until Heal.
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

// CartTransform returns the transform registered for a test, if any.
func (f *Fake) CartTransform(domain, experimentID string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.shop(domain).CartTransforms[experimentID]
	return id, ok
}

// HasAppBlock reports whether the Lift block is installed in a theme.
func (f *Fake) HasAppBlock(domain, themeID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shop(domain).AppBlocks[themeID]
}

func (f *Fake) shop(domain string) *fakeShop {
	s, ok := f.shops[domain]
	if !ok {
		s = &fakeShop{CartTransforms: map[string]string{}, DuplicateVariants: map[string][]string{},
			AppBlocks: map[string]bool{}, DiscountFunctions: map[string]string{}, install: newFakeInstall(domain)}
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

type fakeHandler func(s *fakeShop, r *http.Request, body map[string]any) (int, any)

func (f *Fake) handle(op string, h fakeHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if f.Token != "" && r.Header.Get("X-Platform-Access-Token") != f.Token {
			writeFake(w, http.StatusUnauthorized, map[string]string{"error": "invalid access token"})
			return
		}
		domain := r.PathValue("shop")
		f.mu.Lock()
		defer f.mu.Unlock()
		if status, ok := f.failures[domain+" "+op]; ok {
			if status == StatusHang {
				f.mu.Unlock()
				// Only a fully read request lets the server notice the
				// caller hanging up.
				io.Copy(io.Discard, r.Body)
				<-r.Context().Done()
				f.mu.Lock()
				return
			}
			writeFake(w, status, map[string]string{"error": "injected failure of " + op})
			return
		}
		body := map[string]any{}
		if r.Method == http.MethodPost {
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				writeFake(w, http.StatusBadRequest, map[string]string{"error": "malformed JSON"})
				return
			}
		}
		status, out := h(f.shop(domain), r, body)
		writeFake(w, status, out)
	}
}

func (f *Fake) duplicate(s *fakeShop, _ *http.Request, body map[string]any) (int, any) {
	exp, _ := body["experiment_id"].(string)
	ids, _ := body["variant_ids"].([]any)
	if exp == "" || len(ids) == 0 {
		return http.StatusUnprocessableEntity, map[string]string{"error": "experiment_id and variant_ids are required"}
	}
	var out []map[string]string
	for _, v := range ids {
		nid := f.id("ProductVariant")
		s.DuplicateVariants[exp] = append(s.DuplicateVariants[exp], nid)
		out = append(out, map[string]string{"source_id": fmt.Sprint(v), "id": nid})
	}
	return http.StatusCreated, map[string]any{"variants": out}
}

func (f *Fake) cartTransform(s *fakeShop, _ *http.Request, body map[string]any) (int, any) {
	exp, _ := body["experiment_id"].(string)
	if id, ok := s.CartTransforms[exp]; ok {
		return http.StatusOK, map[string]string{"id": id} // registering again is harmless
	}
	id := f.id("CartTransform")
	s.CartTransforms[exp] = id
	return http.StatusCreated, map[string]string{"id": id}
}

func (f *Fake) listCarriers(s *fakeShop, _ *http.Request, _ map[string]any) (int, any) {
	list := []map[string]any{}
	for _, id := range s.CarrierServices {
		list = append(list, map[string]any{"id": id, "active": true})
	}
	return http.StatusOK, map[string]any{"carrier_services": list}
}

func (f *Fake) createCarrier(s *fakeShop, _ *http.Request, _ map[string]any) (int, any) {
	id := f.id("CarrierService")
	s.CarrierServices = append(s.CarrierServices, id)
	return http.StatusCreated, map[string]string{"id": id}
}

func (f *Fake) appBlock(s *fakeShop, r *http.Request, _ map[string]any) (int, any) {
	s.AppBlocks[r.PathValue("theme")] = true
	return http.StatusCreated, map[string]bool{"installed": true}
}

func (f *Fake) discount(s *fakeShop, _ *http.Request, body map[string]any) (int, any) {
	exp, _ := body["experiment_id"].(string)
	id := f.id("DiscountAutomaticApp")
	s.DiscountFunctions[exp] = id
	return http.StatusCreated, map[string]string{"id": id}
}

func writeFake(w http.ResponseWriter, status int, v any) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
