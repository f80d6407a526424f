package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/liftab/lift/api/install"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/experiment/catalogdata"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/store"
)

// Install wiring (docs/install.md): GET /api/auth and /api/auth/callback
// (api/install), `lift shops create` and APP_UNINSTALLED all run the one
// experiment.InstallService.

// installService is the install lifecycle over this process's stores and
// platform client. Its token sealer's key is platform.token_key, or the
// key kept in <data_dir>/token-key (generated once).
func (a *App) installService() *experiment.InstallService {
	sealer := a.tokenSealer()
	public := a.publicURL()
	return &experiment.InstallService{Repo: store.InstallRepo{DB: a.DB}, Platform: a.PlatformClient, Sealer: sealer,
		APISecret: []byte(a.Config.Platform.APISecret), Scopes: splitList(a.Config.Platform.Scopes),
		RedirectURI: public + "/api/auth/callback", WebhookURL: public + "/api/webhooks", ScriptURL: public + "/lift.js",
		Now: a.Now, Logger: a.Log}
}

// publicURL is http.public_url without its final slash, or in development
// (none set) where this process listens: what the platform calls back.
func (a *App) publicURL() string {
	public := strings.TrimSuffix(a.Config.HTTP.PublicURL, "/")
	if public == "" {
		host, port, _ := net.SplitHostPort(a.Config.HTTP.Addr)
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		public = "http://" + net.JoinHostPort(host, port)
	}
	return public
}

// installAPI is the install surface. A token key that cannot be read
// fails each install that needs it (500, logged), not the server.
func (a *App) installAPI() *install.Handler {
	if a.Config.Platform.TokenKey == "" {
		a.Log.Warn("platform.token_key is not set: shops' platform tokens are sealed with the key in <data_dir>/token-key; set the same key on every node",
			"env", config.EnvName("platform.token_key"))
	}
	return &install.Handler{Service: a.installService(), AppURL: func(shop *experiment.Shop) string {
		return strings.TrimSuffix(a.Config.HTTP.PublicURL, "/") + "/app/?shop=" + url.QueryEscape(shop.Domain)
	}}
}

// uninstallHook is APP_UNINSTALLED's platform side.
func (a *App) uninstallHook() func(ctx context.Context, shop *experiment.Shop) (string, error) {
	return func(ctx context.Context, shop *experiment.Shop) (string, error) {
		return a.installService().Uninstall(ctx, shop)
	}
}

// lazySealer reads (or generates) the token key on first use: commands
// that never seal, or refuse before sealing, leave the data dir alone.
type lazySealer struct {
	cfg  *config.Config
	once sync.Once
	s    *experiment.AESSealer
	err  error
}

func (l *lazySealer) get() (*experiment.AESSealer, error) {
	l.once.Do(func() {
		key, err := tokenKey(l.cfg)
		if err != nil {
			l.err = err
			return
		}
		l.s, l.err = experiment.NewAESSealer(key)
	})
	return l.s, l.err
}

func (l *lazySealer) Seal(p []byte) ([]byte, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	return s.Seal(p)
}

func (l *lazySealer) Open(p []byte) ([]byte, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	return s.Open(p)
}

// shopToken is the platform access token the shop's install stored,
// opened; "" when it has none (a shop made before the install lifecycle,
// or uninstalled), so the client falls back to platform.token.
func (a *App) shopToken(ctx context.Context, shop *experiment.Shop) (string, error) {
	sealed, err := store.InstallRepo{DB: a.DB}.FindAccessToken(ctx, shop.ID)
	if experiment.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	tok, err := a.tokenSealer().Open(sealed)
	return string(tok), err
}

// tokenSealer is this process's one token sealer.
func (a *App) tokenSealer() *lazySealer {
	a.sealerOnce.Do(func() { a.sealer = &lazySealer{cfg: a.Config} })
	return a.sealer
}

// requireTokenKey refuses to start a node whose token key opens none of the
// newest platform tokens Postgres holds: the ops audit started such a node
// (another data_dir, so another generated key), and every launch then
// failed. One shop whose token does not open (sealed by a node with another
// key) only warns: reinstalling that shop mends it, and its launches say so.
func (a *App) requireTokenKey(ctx context.Context) error {
	tokens, err := store.InstallRepo{DB: a.DB}.NewestSealedTokens(ctx, 20)
	if err != nil || len(tokens) == 0 {
		return err
	}
	env := config.EnvName("platform.token_key")
	key := env
	if a.Config.Platform.TokenKey == "" {
		key = filepath.Join(a.Config.DataDir, "token-key")
		if _, err := os.Stat(key); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("postgres holds %d shops' sealed platform tokens, but this node has no token key (%s is unset and %s does not exist): set %s to the key that sealed them, the same on every node",
				len(tokens), env, key, env)
		}
	}
	var unopened []int64
	for id, sealed := range tokens {
		if _, err := a.tokenSealer().Open(sealed); err != nil {
			if !errors.Is(err, experiment.ErrUnsealable) {
				return err
			}
			unopened = append(unopened, id)
		}
	}
	slices.Sort(unopened)
	if len(unopened) == len(tokens) {
		return fmt.Errorf("the token key (%s) opens none of the %d newest shops' platform tokens in Postgres (shops %v): this node has another key than the one that sealed them; set %s to that key, the same on every node",
			key, len(tokens), unopened, env)
	}
	if len(unopened) > 0 {
		a.Log.Warn("some shops' platform tokens do not open with this node's token key: their launches answer launch_blocked until the app is reinstalled on them",
			"shops", unopened, "key", key)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// tokenKey is platform.token_key, or the key in <data_dir>/token-key,
// generated once and linked into place so two processes starting together
// keep the same one.
func tokenKey(cfg *config.Config) ([]byte, error) {
	if cfg.Platform.TokenKey != "" {
		return config.DecodeTokenKey(cfg.Platform.TokenKey)
	}
	path := filepath.Join(cfg.DataDir, "token-key")
	if b, err := os.ReadFile(path); err == nil {
		return config.DecodeTokenKey(string(bytes.TrimSpace(b)))
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("token key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("token key: %w", err)
	}
	tmp, err := os.CreateTemp(cfg.DataDir, "token-key.*.tmp")
	if err != nil {
		return nil, fmt.Errorf("token key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if os.IsExist(err) {
		return tokenKey(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("token key: %w", err)
	}
	return key, nil
}

// fakeOAuth is the built-in fake platform with the app's OAuth
// credentials; without configured ones it gets the key lift-dev and the
// secret kept in <data_dir>/api-secret (generated once), set on cfg so the
// install and session surfaces verify what the fake signs. The secret is
// kept, as dev's signing and webhook secrets are, so `lift shops
// session-token` signs session tokens a running node accepts (a secret of
// each process could sign none: docs audit 2 #4).
func fakeOAuth(cfg *config.Config) (*platform.Fake, error) {
	fake := platform.NewFake()
	if cfg.Platform.APIKey == "" {
		cfg.Platform.APIKey = "lift-dev"
	}
	if cfg.Platform.APISecret == "" {
		secret, err := processSecret(cfg.DataDir, "api-secret")
		if err != nil {
			return nil, err
		}
		cfg.Platform.APISecret = secret
	}
	fake.APIKey, fake.APISecret = cfg.Platform.APIKey, cfg.Platform.APISecret
	return fake, nil
}

// demoPlatformCatalog is what every shop sells on the built-in fake
// platform: the demo catalog `lift seed` loads. An OAuth install or a
// catalog refresh there then reads what the demo shop's mirror already
// holds; with an empty fake it read nothing, and the install replaced the
// demo shop's mirror with an empty one.
func demoPlatformCatalog() (*experiment.CatalogSnapshot, error) {
	f, err := store.ParseCatalog(catalogdata.Demo)
	if err != nil {
		return nil, err
	}
	return f.Snapshot(), nil
}

// processSecret is devSecret's secret in dataDir, or one of this process
// when there is no data directory to keep it in (a test's bare config).
func processSecret(dataDir, name string) (string, error) {
	if dataDir != "" {
		return devSecret(dataDir, name)
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
