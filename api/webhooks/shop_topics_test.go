package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
)

// The shop and catalog topics: uninstall, shop update, theme publish,
// inventory.

func TestAppUninstalled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.newShop(t)
	_, token, err := b.db.CreateToken(ctx, shop.ID, experiment.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	probe := func() (int, string) {
		req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/probe", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(raw)
	}
	if status, raw := probe(); status != http.StatusNoContent {
		t.Fatalf("token before uninstall = %d %s", status, raw)
	}
	active := b.newTest(t, shop, priceBody("a"), experiment.StatusActive)
	paused := b.newTest(t, shop, priceBody("p"), experiment.StatusPaused)
	draft := b.newTest(t, shop, priceBody("d"), experiment.StatusDraft)

	d := b.process(t, shop, experiment.TopicAppUninstalled, "u-1", fmt.Sprintf(`{"id":%d,"domain":%q}`, shop.ID, shop.Domain))
	if d.Outcome != "uninstalled; ended 2 tests" {
		t.Errorf("outcome = %q", d.Outcome)
	}
	for _, c := range []struct {
		name string
		test *experiment.Test
		want experiment.Status
	}{{"active ends", active, experiment.StatusEnded}, {"paused ends", paused, experiment.StatusEnded}, {"draft stays", draft, experiment.StatusDraft}} {
		t.Run(c.name, func(t *testing.T) {
			got, err := b.db.FindTestByID(ctx, shop.ID, c.test.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != c.want {
				t.Fatalf("status = %s, want %s", got.Status, c.want)
			}
		})
	}
	t.Run("shop uninstalled, tokens invalid", func(t *testing.T) {
		s, err := b.db.FindShopByID(ctx, shop.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s.Installed() {
			t.Fatal("shop still installed")
		}
		if status, raw := probe(); status != http.StatusUnauthorized || !strings.Contains(raw, `"invalid_token"`) {
			t.Fatalf("token after uninstall = %d %s", status, raw)
		}
	})
}

func TestShopUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	domain := fmt.Sprintf("renamed-%d.example.com", shop.ID)
	b.process(t, shop, experiment.TopicShopUpdate, "s-1", fmt.Sprintf(`{"id":%d,"name":"After","domain":%q}`, shop.ID, domain))
	got, err := b.db.FindShopByID(context.Background(), shop.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The payload's domain is the storefront's primary one; the shop stays
	// keyed by its platform domain, which tracking and tokens name.
	if got.Name != "After" || got.Domain != shop.Domain {
		t.Fatalf("shop = %q %q, want After %q", got.Name, got.Domain, shop.Domain)
	}
	// Renames processed out of order (concurrent jobs, a retried delivery):
	// the one the platform made last stands, not the one processed last.
	// After the first rename, which had no updated_at (its receipt stands).
	base := time.Now().UTC().Add(time.Hour)
	rename := func(id, name string, after time.Duration) {
		b.process(t, shop, experiment.TopicShopUpdate, id, fmt.Sprintf(`{"id":%d,"name":%q,"updated_at":%q}`, shop.ID, name,
			base.Add(after).Format(time.RFC3339)))
	}
	rename("s-2", "Newer", 5*time.Second)
	rename("s-3", "Older", time.Second)
	if got, err := b.db.FindShopByID(context.Background(), shop.ID); err != nil || got.Name != "Newer" {
		t.Fatalf("after an older rename processed last: %q (%v), want Newer", got.Name, err)
	}
	rename("s-4", "Newest", 9*time.Second)
	if got, err := b.db.FindShopByID(context.Background(), shop.ID); err != nil || got.Name != "Newest" {
		t.Fatalf("after a newer rename: %q (%v), want Newest", got.Name, err)
	}
}

func TestThemesPublish(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shop := b.newShop(t)
	tpl := b.newTest(t, shop, templateBody(), experiment.StatusActive)
	thm := b.newTest(t, shop, themeBody(), experiment.StatusActive)
	ended := b.newTest(t, shop, templateBody(), experiment.StatusEnded)

	warnings := func(test *experiment.Test) map[string]string {
		t.Helper()
		fs, err := b.db.FindTestWarnings(ctx, shop.ID, test.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, f := range fs {
			if f.Severity != experiment.SeverityWarning {
				t.Errorf("finding %s has severity %s", f.Code, f.Severity)
			}
			out[f.Code] = f.Message
		}
		return out
	}
	published := func() string {
		t.Helper()
		view, err := b.db.Catalog().Lookup(ctx, shop.ID, experiment.CatalogRefs{Themes: []string{dawn, holiday, "gid://shopify/OnlineStoreTheme/1203"}})
		if err != nil {
			t.Fatal(err)
		}
		main := ""
		for id, th := range view.Themes {
			if th.Role == "main" {
				if main != "" {
					t.Fatalf("two published themes: %s and %s", main, id)
				}
				main = id
			}
		}
		return main
	}

	steps := []struct {
		name, body    string
		wantPublished string
		tplWarned     bool
		thmMessage    string
	}{
		{"another theme is published", `{"id":1203,"name":"Sense","role":"main"}`, "gid://shopify/OnlineStoreTheme/1203", true, `Theme "Sense" was published`},
		{"an unpublished role changes nothing", `{"id":1202,"name":"Dawn (holiday redesign)","role":"unpublished"}`, "gid://shopify/OnlineStoreTheme/1203", true, `Theme "Sense" was published`},
		{"the template test's theme again", `{"id":"gid://shopify/OnlineStoreTheme/1201","name":"Dawn","role":"main"}`, dawn, false, `Theme "Dawn" was published`},
		{"a variant's theme", `{"id":1202,"name":"Holiday","role":"main"}`, holiday, true, "it is the theme of test group 1"},
	}
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			b.process(t, shop, experiment.TopicThemesPublish, fmt.Sprintf("t-%d", i), s.body)
			if got := published(); got != s.wantPublished {
				t.Errorf("published = %s, want %s", got, s.wantPublished)
			}
			if _, warned := warnings(tpl)[experiment.WarnThemeUnpublished]; warned != s.tplWarned {
				t.Errorf("template test warned = %v, want %v: %v", warned, s.tplWarned, warnings(tpl))
			}
			if msg := warnings(thm)[experiment.WarnPublishedThemeChanged]; !strings.Contains(msg, s.thmMessage) {
				t.Errorf("theme test warning = %q, want it to contain %q", msg, s.thmMessage)
			}
			if w := warnings(ended); len(w) != 0 {
				t.Errorf("an ended test was flagged: %v", w)
			}
		})
	}
}

func TestInventoryLevelsUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	shop := b.newShop(t)
	b.process(t, shop, experiment.TopicInventoryLevelsUpdate, "i-1", `{"inventory_item_id":271878346596884015,"location_id":"gid://shopify/Location/24826418","available":6}`)
	b.process(t, shop, experiment.TopicInventoryLevelsUpdate, "i-2", `{"inventory_item_id":271878346596884015,"location_id":24826418,"available":4}`)
	got, err := b.db.FindInventoryLevel(context.Background(), shop.ID, "271878346596884015", "24826418")
	if err != nil {
		t.Fatal(err)
	}
	if got.Available == nil || *got.Available != 4 {
		t.Fatalf("available = %v, want 4", got.Available)
	}
	t.Run("an older level processed later is ignored", func(t *testing.T) {
		b.process(t, shop, experiment.TopicInventoryLevelsUpdate, "i-new", `{"inventory_item_id":5,"location_id":7,"available":9,"updated_at":"2026-06-01T10:00:05Z"}`)
		d := b.process(t, shop, experiment.TopicInventoryLevelsUpdate, "i-old", `{"inventory_item_id":5,"location_id":7,"available":2,"updated_at":"2026-06-01T10:00:01Z"}`)
		got, err := b.db.FindInventoryLevel(context.Background(), shop.ID, "5", "7")
		if err != nil {
			t.Fatal(err)
		}
		if got.Available == nil || *got.Available != 9 || !strings.HasPrefix(d.Outcome, "ignored: a newer level") {
			t.Fatalf("available = %v after outcome %q, want the newer 9", got.Available, d.Outcome)
		}
	})
	t.Run("unreadable body is recorded, not retried", func(t *testing.T) {
		d := b.process(t, shop, experiment.TopicInventoryLevelsUpdate, "i-3", `{"available":"lots"}`)
		if !strings.HasPrefix(d.Outcome, "unreadable") {
			t.Fatalf("outcome = %q", d.Outcome)
		}
	})
}
