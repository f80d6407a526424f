package experiment

import (
	"context"
	"errors"
	"time"
)

// The install lifecycle (issue 13; session document parts 5, 6.2 and 8):
// the types and ports InstallService needs. store implements
// InstallRepository, platform InstallPlatform; the token sealer is
// AESSealer (install_seal.go).

// WebhookTopics are the topics Lift subscribes to at install (part 6.2).
var WebhookTopics = []string{TopicAppUninstalled, TopicOrdersCreate, TopicOrdersEdited,
	TopicInventoryLevelsUpdate, TopicShopUpdate, TopicThemesPublish}

// InstallState is the nonce of one OAuth round trip: issued by Begin,
// consumed once by Complete.
type InstallState struct {
	Nonce     string
	Domain    string
	ExpiresAt time.Time
}

// AccessGrant is what the platform hands over for an approved install.
type AccessGrant struct {
	AccessToken string
	Scopes      []string
}

// ShopInfo is the shop as the platform describes it.
type ShopInfo struct {
	Name     string
	Currency string
	Timezone string // IANA
}

// CatalogSnapshot is the shop's catalog as read from the platform: what the
// catalog mirror is replaced with.
type CatalogSnapshot struct {
	Currency    string
	Products    []CatalogProduct
	Collections []Collection
	Themes      []Theme
	// DeliveryZones are the default delivery profile's zones, Markets the
	// enabled markets (nil: the read could not say, and a refresh keeps
	// the mirror's).
	DeliveryZones []Zone
	Markets       []Market
}

// CatalogProduct is a product with its variants (prices and unit costs).
type CatalogProduct struct {
	Product
	Variants []Variant
}

// WebhookSubscription is one topic Lift is subscribed to on the platform.
type WebhookSubscription struct {
	Topic string
	ID    string // the platform's subscription id
}

// CleanupReport says what uninstall removed from the platform.
type CleanupReport struct {
	ScriptTags        int
	Webhooks          int // subscriptions
	Metafields        int
	DuplicateVariants int
	Functions         int // cart transforms, delivery and payment customizations, discounts
}

// ShopInstall is everything one install writes, in one unit of work.
type ShopInstall struct {
	Domain      string
	Info        ShopInfo
	SealedToken []byte // AES-GCM sealed access token; never the plaintext
	Scopes      []string
	Webhooks    []WebhookSubscription
	// CarrierService: the platform took Lift's carrier service, so the
	// shop has carrier-calculated shipping ("an existing carrier
	// service", which satisfies carrier_service_required). Never cleared
	// by a later install that was refused: support may have set it.
	CarrierService bool
	// Plan attributes for a shop created by this install (development:
	// `lift shops create`); an existing shop keeps its own.
	Features           []string
	RaisedProductLimit bool
	APIEnabled         bool
}

// InstallRepository is where shops, their platform credentials and the
// OAuth nonces live (Postgres).
type InstallRepository interface {
	// Write runs fn in one all-or-nothing unit of work with its audit
	// record. Returns whatever fn returns (nothing kept).
	Write(ctx context.Context, meta WriteMeta, fn func(ctx context.Context, tx InstallTx) (WriteResult, error)) (WriteResult, error)
	// FindShopByDomain returns KindNotFound shop_not_found when absent.
	FindShopByDomain(ctx context.Context, domain string) (*Shop, error)
	// FindAccessToken returns the shop's sealed platform access token;
	// KindNotFound access_token_not_found when none is stored (never
	// installed through the platform, or cleared by an uninstall).
	FindAccessToken(ctx context.Context, shopID int64) ([]byte, error)
}

// InstallTx is an install unit of work in progress.
type InstallTx interface {
	CatalogImporter
	// SaveInstallState keeps a nonce until it expires or is consumed.
	SaveInstallState(ctx context.Context, s InstallState) error
	// ConsumeInstallState deletes the nonce issued for domain. Returns
	// KindNotFound install_state_not_found when it was never issued, was
	// issued for another shop, was used already or expired before now.
	ConsumeInstallState(ctx context.Context, domain, nonce string, now time.Time) error
	// InstallShop creates the shop or reinstalls it (uninstalled_at
	// cleared, so its API tokens work again), storing the sealed token,
	// scopes and webhook subscriptions, and returns it.
	InstallShop(ctx context.Context, in ShopInstall) (*Shop, error)
	// ClearInstall forgets the shop's platform configuration: access
	// token, scopes, webhook subscriptions and the catalog mirror.
	ClearInstall(ctx context.Context, shopID int64) error
	// LockShop locks the shop until the unit of work ends, so installs,
	// uninstalls and catalog refreshes of one shop take turns, and returns
	// it as it is now with whether a platform token is stored for it.
	// KindNotFound shop_not_found when absent.
	LockShop(ctx context.Context, shopID int64) (shop *Shop, hasToken bool, err error)
	// ReadCatalog returns the shop's whole catalog mirror (its Currency is
	// the shop's).
	ReadCatalog(ctx context.Context, shopID int64) (*CatalogSnapshot, error)
	// FindOpenTests lists the shop's tests not ended (draft, preview,
	// active, paused, failed), without the launch lock: a refresh only
	// flags them (zones.go).
	FindOpenTests(ctx context.Context, shopID int64) ([]*Test, error)
	// SetTestWarning raises or restates a standing warning on a test;
	// ClearTestWarning lifts it.
	SetTestWarning(ctx context.Context, shopID, testID int64, w Finding) error
	ClearTestWarning(ctx context.Context, testID int64, code string) error
}

// CatalogImporter replaces a shop's catalog mirror.
type CatalogImporter interface {
	// ImportCatalog replaces the shop's whole catalog mirror and currency
	// with c.
	ImportCatalog(ctx context.Context, shopID int64, c *CatalogSnapshot) error
}

// InstallPlatform is what the install lifecycle needs from the commerce
// platform. Every failure of a platform call is a *PlatformError.
type InstallPlatform interface {
	// AuthorizeURL is where the merchant approves the install.
	AuthorizeURL(domain string, scopes []string, redirectURI, state string) string
	// ExchangeCode trades the authorization code for the permanent access
	// token.
	ExchangeCode(ctx context.Context, domain, code string) (AccessGrant, error)
	// FetchShop reads the shop's name, currency and time zone.
	FetchShop(ctx context.Context, domain, token string) (ShopInfo, error)
	// SubscribeWebhook subscribes callbackURL to topic and returns the
	// subscription id; subscribing again to a topic is not an error.
	SubscribeWebhook(ctx context.Context, domain, token, topic, callbackURL string) (string, error)
	// RegisterCarrier makes sure the shop has Lift's carrier service
	// ("Lift rates"), so the merchant can add it to delivery zones before
	// a shipping test starts; a shop without carrier-calculated shipping
	// refuses.
	RegisterCarrier(ctx context.Context, domain, token string) error
	// FetchCatalog reads products (variants, prices, costs), collections,
	// themes, delivery zones and markets, within the platform's throttles.
	FetchCatalog(ctx context.Context, domain, token string) (*CatalogSnapshot, error)
	// Cleanup removes what Lift put on the shop: script tags, webhook
	// subscriptions, its metafields, duplicated variants and deployed
	// functions.
	Cleanup(ctx context.Context, domain, token string) (CleanupReport, error)
	// SyncDuplicateStock sets the available quantity of every duplicate of
	// the level's variant (its inventory item) at the level's location to
	// the reported one, and returns how many it set.
	SyncDuplicateStock(ctx context.Context, domain, token string, l InventoryLevel) (int, error)
	// EnableScript makes the storefront load the script at src (a script
	// tag) and returns the tag's id; enabling again returns the same tag.
	EnableScript(ctx context.Context, domain, token, src string) (string, error)
	// InstallThemeBlock writes Lift's app block into the theme (its global
	// id); writing it again changes nothing.
	InstallThemeBlock(ctx context.Context, domain, token, themeID string) error
}

// TokenSealer encrypts credentials at rest.
type TokenSealer interface {
	Seal(plaintext []byte) ([]byte, error)
	// Open returns the plaintext; an error wrapping ErrUnsealable when
	// sealed was not sealed with this key or was altered.
	Open(sealed []byte) ([]byte, error)
}

// ErrUnsealable is a sealed credential this key does not open: most often
// a node configured with another platform.token_key than the one that
// sealed it. The shop's install must be redone, or the key fixed; retrying
// does not help.
var ErrUnsealable = errors.New("sealed with another key, or altered")
