package experiment

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// InstallService is the install lifecycle (docs/install.md): the OAuth
// round trip (Begin, Complete), the install itself (Install, also what
// `lift shops create` runs, minus OAuth) and the platform side of an
// uninstall (Uninstall, called by the APP_UNINSTALLED webhook).
type InstallService struct {
	Repo     InstallRepository
	Platform InstallPlatform
	Sealer   TokenSealer
	// APISecret keys the HMAC of the platform's OAuth redirect.
	APISecret []byte
	Scopes    []string
	// RedirectURI is the callback, <public_url>/api/auth/callback;
	// WebhookURL the delivery address, <public_url>/api/webhooks.
	RedirectURI string
	WebhookURL  string
	// ScriptURL is the storefront tracking script GET /api/enable-script
	// installs (install_script.go).
	ScriptURL string
	// StateTTL bounds the OAuth round trip. Default 10 minutes.
	StateTTL time.Duration
	Now      func() time.Time
	Logger   *slog.Logger
}

// Begin issues a state nonce for the shop and returns the platform's
// authorize URL. KindInvalidRequest invalid_shop when domain is not a
// plausible shop host.
func (s *InstallService) Begin(ctx context.Context, domain string) (string, error) {
	domain = NormalizeShopDomain(domain)
	if !platformShopHost.MatchString(domain) {
		return "", Errorf(KindInvalidRequest, "invalid_shop", "The shop parameter must be the shop's domain, e.g. example.myshopify.com.")
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("experiment.InstallService.Begin: %w", err)
	}
	st := InstallState{Nonce: hex.EncodeToString(b), Domain: domain, ExpiresAt: s.now().Add(s.stateTTL())}
	_, err := s.Repo.Write(ctx, WriteMeta{Action: "install.begin", ResourceType: "install_state"},
		func(ctx context.Context, tx InstallTx) (WriteResult, error) {
			return WriteResult{ResourceID: domain}, tx.SaveInstallState(ctx, st)
		})
	if err != nil {
		return "", fmt.Errorf("experiment.InstallService.Begin %s: %w", domain, err)
	}
	return s.Platform.AuthorizeURL(domain, s.Scopes, s.RedirectURI, st.Nonce), nil
}

// Complete handles the platform's redirect after the merchant approved:
// the query's HMAC, then the state nonce (consumed, so a replayed redirect
// is refused), then the code exchange and the install. Returns
// KindUnauthenticated invalid_hmac or invalid_state, KindInvalidRequest
// when shop or code is missing, KindUnavailable platform_unavailable when
// the platform refused or could not be reached.
func (s *InstallService) Complete(ctx context.Context, q url.Values) (*Shop, error) {
	if !VerifyQueryHMAC(q, s.APISecret) {
		return nil, Errorf(KindUnauthenticated, "invalid_hmac", "The request's signature is not valid.")
	}
	domain, code, state := NormalizeShopDomain(q.Get("shop")), q.Get("code"), q.Get("state")
	if !platformShopHost.MatchString(domain) || code == "" || state == "" {
		return nil, Errorf(KindInvalidRequest, "invalid_request", "The shop, code and state parameters are required.")
	}
	_, err := s.Repo.Write(ctx, WriteMeta{Action: "install.consume_state", ResourceType: "install_state"},
		func(ctx context.Context, tx InstallTx) (WriteResult, error) {
			return WriteResult{ResourceID: domain}, tx.ConsumeInstallState(ctx, domain, state, s.now())
		})
	if IsNotFound(err) {
		return nil, Errorf(KindUnauthenticated, "invalid_state", "The install request expired or was already used; start the install again.")
	}
	if err != nil {
		return nil, fmt.Errorf("experiment.InstallService.Complete %s: %w", domain, err)
	}
	grant, err := s.Platform.ExchangeCode(ctx, domain, code)
	if err != nil {
		return nil, platformFailure("exchange the code", err)
	}
	return s.Install(ctx, InstallRequest{Domain: domain, Grant: grant})
}

// InstallRequest is one install: OAuth's, or `lift shops create`'s with
// the configured app token and plan attributes for a new shop.
type InstallRequest struct {
	Domain string
	Grant  AccessGrant
	// Overrides of what the platform says (shops create flags); "" keeps it.
	Name, Timezone, Currency string
	Features                 []string
	RaisedProductLimit       bool
	APIEnabled               bool
	// RefuseInstalled makes an installed shop a KindConflict shop_exists
	// instead of a refresh of its token (shops create).
	RefuseInstalled bool
}

// Install subscribes the webhooks and reads the catalog on the platform,
// then, in one unit of work, stores the shop with its sealed token and
// subscriptions, replaces its catalog mirror and marks it installed: a
// failure anywhere leaves no half-installed shop (a retry subscribes again
// harmlessly). Reinstalling an uninstalled shop restores its API tokens.
func (s *InstallService) Install(ctx context.Context, r InstallRequest) (*Shop, error) {
	r.Domain = NormalizeShopDomain(r.Domain)
	if !plausibleShopDomain(r.Domain) {
		return nil, Errorf(KindInvalidRequest, "invalid_shop", "%q is not a shop domain.", r.Domain)
	}
	if r.RefuseInstalled {
		if cur, err := s.Repo.FindShopByDomain(ctx, r.Domain); err == nil && cur.Installed() {
			return nil, Errorf(KindConflict, "shop_exists", "a shop with domain %s exists", r.Domain)
		}
	}
	in, catalog, err := s.gather(ctx, r)
	if err != nil {
		return nil, err
	}
	var shop *Shop
	_, err = s.Repo.Write(ctx, WriteMeta{Action: "shop.install", ResourceType: "shop"},
		func(ctx context.Context, tx InstallTx) (WriteResult, error) {
			var err error
			if shop, err = tx.InstallShop(ctx, in); err != nil {
				return WriteResult{}, err
			}
			if err := tx.ImportCatalog(ctx, shop.ID, catalog); err != nil {
				return WriteResult{}, err
			}
			return WriteResult{ShopID: shop.ID, ResourceID: fmt.Sprint(shop.ID)}, nil
		})
	if err != nil {
		return nil, fmt.Errorf("experiment.InstallService.Install %s: %w", r.Domain, err)
	}
	shop.Currency = catalog.Currency
	s.logger().Info("shop installed", "shop", shop.Domain, "shop_id", shop.ID, "products", len(catalog.Products), "webhooks", len(in.Webhooks))
	return shop, nil
}

// gather makes the platform calls of an install, before anything is stored.
func (s *InstallService) gather(ctx context.Context, r InstallRequest) (ShopInstall, *CatalogSnapshot, error) {
	tok := r.Grant.AccessToken
	info, err := s.Platform.FetchShop(ctx, r.Domain, tok)
	if err != nil {
		return ShopInstall{}, nil, platformFailure("read the shop", err)
	}
	info.Name, info.Timezone, info.Currency = cmp.Or(r.Name, info.Name), cmp.Or(r.Timezone, info.Timezone), cmp.Or(r.Currency, info.Currency)
	in := ShopInstall{Domain: r.Domain, Info: info, Scopes: r.Grant.Scopes, Features: r.Features,
		RaisedProductLimit: r.RaisedProductLimit, APIEnabled: r.APIEnabled}
	for _, topic := range WebhookTopics {
		id, err := s.Platform.SubscribeWebhook(ctx, r.Domain, tok, topic, s.WebhookURL)
		if err != nil {
			return ShopInstall{}, nil, platformFailure("subscribe "+topic, err)
		}
		in.Webhooks = append(in.Webhooks, WebhookSubscription{Topic: topic, ID: id})
	}
	if err := s.Platform.RegisterCarrier(ctx, r.Domain, tok); err != nil {
		// Only shipping tests need it, and their launch registers it too:
		// a shop whose plan lacks carrier-calculated shipping still installs.
		s.logger().Warn("install: Lift rates not registered", "shop", r.Domain, "err", err)
	} else {
		in.CarrierService = true
	}
	catalog, err := s.Platform.FetchCatalog(ctx, r.Domain, tok)
	if err != nil {
		return ShopInstall{}, nil, platformFailure("sync the catalog", err)
	}
	catalog.Currency = cmp.Or(r.Currency, catalog.Currency, info.Currency)
	if in.SealedToken, err = s.Sealer.Seal([]byte(tok)); err != nil {
		return ShopInstall{}, nil, fmt.Errorf("experiment.InstallService.Install: %w", err)
	}
	return in, catalog, nil
}

// Uninstall is the platform side of APP_UNINSTALLED, after the shop's
// tests were ended: it removes what Lift put on the shop and forgets the
// shop's platform configuration (token, scopes, subscriptions, catalog
// mirror). The platform may already have revoked the token (it usually
// has, and removes app-owned resources itself): a refused cleanup is
// reported in the outcome, not retried. Running it twice is harmless.
func (s *InstallService) Uninstall(ctx context.Context, shop *Shop) (string, error) {
	outcome := "no platform token to clean up with"
	sealed, err := s.Repo.FindAccessToken(ctx, shop.ID)
	switch {
	case err == nil:
		outcome = s.cleanup(ctx, shop, sealed)
	case !IsNotFound(err):
		return "", fmt.Errorf("experiment.InstallService.Uninstall %d: %w", shop.ID, err)
	}
	_, err = s.Repo.Write(ctx, WriteMeta{ShopID: shop.ID, Action: "shop.uninstall_cleanup", ResourceType: "shop"},
		func(ctx context.Context, tx InstallTx) (WriteResult, error) {
			return WriteResult{ResourceID: fmt.Sprint(shop.ID)}, tx.ClearInstall(ctx, shop.ID)
		})
	if err != nil {
		return "", fmt.Errorf("experiment.InstallService.Uninstall %d: %w", shop.ID, err)
	}
	return outcome + "; configuration cleared", nil
}

func (s *InstallService) cleanup(ctx context.Context, shop *Shop, sealed []byte) string {
	tok, err := s.Sealer.Open(sealed)
	if err != nil {
		s.logger().Error("uninstall: stored token does not open", "shop_id", shop.ID, "err", err)
		return "stored platform token unreadable; nothing cleaned up"
	}
	rep, err := s.Platform.Cleanup(ctx, shop.Domain, string(tok))
	var pe *PlatformError
	if errors.As(err, &pe) {
		return "platform cleanup refused (" + pe.Error() + ")"
	}
	if err != nil {
		return "platform cleanup failed: " + err.Error()
	}
	return fmt.Sprintf("removed %d script tags, %d webhook subscriptions, %d metafields, %d duplicate variants, %d functions",
		rep.ScriptTags, rep.Webhooks, rep.Metafields, rep.DuplicateVariants, rep.Functions)
}

// platformFailure turns a refused platform call into a 503 the merchant
// can retry; anything else stays an internal error.
func platformFailure(op string, err error) error {
	var pe *PlatformError
	if errors.As(err, &pe) {
		return &Error{Kind: KindUnavailable, Code: "platform_unavailable",
			Message: "The platform refused to " + op + "; try installing again.", Details: map[string]any{"status": pe.Status}}
	}
	return fmt.Errorf("experiment.InstallService: %s: %w", op, err)
}

// platformShopHost is the platform's own host of a shop, the only shop an
// OAuth install may name. Begin answers anyone with a redirect to
// https://{shop}/admin/oauth/authorize carrying the app's client id and a
// valid state, so any other host would make Lift's domain an open
// redirector (session audit 2, S2-8); the platform's guidance is to check
// the parameter against this pattern first.
var platformShopHost = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*\.myshopify\.com$`)

// plausibleShopDomain accepts a host name: letters, digits, dashes, dots.
// The operator's commands and admin tools take any such host (a custom
// domain the operator typed); OAuth takes platformShopHost only.
func plausibleShopDomain(d string) bool {
	if d == "" || len(d) > 255 || !strings.Contains(d, ".") || strings.HasPrefix(d, ".") || strings.HasPrefix(d, "-") {
		return false
	}
	for _, c := range d {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func (s *InstallService) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

func (s *InstallService) stateTTL() time.Duration {
	if s.StateTTL <= 0 {
		return 10 * time.Minute
	}
	return s.StateTTL
}

func (s *InstallService) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
