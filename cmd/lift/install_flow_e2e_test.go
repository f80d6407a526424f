package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liftab/lift/api/webhooks"
	"github.com/liftab/lift/config"
	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/platform"
	"github.com/liftab/lift/store"
)

// TestInstallPriceTestUninstall is issue 13's must-show 2 over real HTTP,
// real stores and the fake platform: OAuth install, a price test created
// and started through /v1 (its duplicate variant made on the platform), the
// storefront script enabled by the admin tool,
// INVENTORY_LEVELS_UPDATE of the original copied to the duplicate,
// uninstall removing what part 6.2 lists (the duplicate too) and refusing
// the API tokens, and a reinstall restoring them.
func TestInstallPriceTestUninstall(t *testing.T) {
	t.Parallel()
	h := newInstallHarness(t)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})
	shop, token := h.installForPriceTests(ctx)
	const original = "gid://shopify/ProductVariant/101"
	body := fmt.Sprintf(`{"type":"price","name":"Stocked","shared":{"price":{"product_ids":["gid://shopify/Product/101"]}},
		"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,
		"content":{"prices":[{"product_variant_id":%q,"price":{"amount":"22.00","currency":"EUR"}}]}}]}`, original)
	r := h.do("POST", "/v1/experiments", token, body, "Content-Type", "application/json")
	if r.status != 201 && r.status != 200 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id, _ := r.body["id"].(string)
	if r := h.do("POST", "/v1/experiments/"+id+"/start", token, ""); r.status != 200 || r.body["status"] != "active" {
		t.Fatalf("start = %d %s", r.status, r.raw)
	}
	dups := h.fake.Duplicates(h.domain, original)
	if len(dups) != 1 {
		t.Fatalf("duplicates of %s after launch: %v", original, dups)
	}

	// The admin tool puts the storefront script on the shop.
	if r := h.do("GET", "/api/enable-script?shop="+h.domain, "", "", "x-api-key", "install-admin"); r.status != 200 || r.body["status"] != "success" {
		t.Fatalf("enable-script = %d %s", r.status, r.raw)
	}
	if tags := h.fake.ScriptTags(h.domain); len(tags) != 1 || tags[0] != installPublicURL+"/lift.js" {
		t.Fatalf("script tags after enable-script: %v", tags)
	}

	// The original's stock changes at a location: the duplicate follows.
	const location = "gid://shopify/Location/7"
	for i, available := range []int{3, 0} {
		h.deliver(shop, experiment.TopicInventoryLevelsUpdate, fmt.Sprintf("inv-%d", i),
			fmt.Sprintf(`{"inventory_item_id":101,"location_id":7,"available":%d}`, available))
		if n, ok := h.fake.Stock(h.domain, dups[0], location); !ok || n != int64(available) {
			t.Fatalf("duplicate stock after the original's went to %d: %d (set %v)", available, n, ok)
		}
	}
	if _, ok := h.fake.Stock(h.domain, original, location); ok {
		t.Fatal("the sync wrote the original's stock, which the platform owns")
	}
	if got := h.outcome(shop.ID, "inv-1"); !strings.Contains(got, "stock copied to 1 duplicate variants") {
		t.Fatalf("inventory outcome %q", got)
	}

	h.uninstall(shop, "uninstall-1")
	if tags := h.fake.ScriptTags(h.domain); len(tags) != 0 {
		t.Fatalf("script tags after uninstall: %v", tags)
	}
	if n, hooks, left := h.fake.LiftResources(h.domain), h.fake.Webhooks(h.domain), h.fake.Duplicates(h.domain, original); n != 0 || len(hooks) != 0 || len(left) != 0 {
		t.Fatalf("after uninstall: %d Lift resources, webhooks %v, duplicates %v left", n, hooks, left)
	}
	h.wantUninstalled(t, token, shop.ID)

	h.fake.RevokeTokens(h.domain)
	if again := h.install(); again.ID != shop.ID {
		t.Fatalf("reinstall made shop %d, want %d", again.ID, shop.ID)
	}
	// The uninstall ended the test; the restored token reads it.
	if r := h.do("GET", "/v1/experiments/"+id, token, ""); r.status != 200 || r.body["status"] != "ended" {
		t.Fatalf("token after reinstall: %d %s", r.status, r.raw)
	}
	h.wantCatalog(shop.ID, 3)
}

// deliver posts a signed webhook and processes it as the worker does.
func (h *installHarness) deliver(shop *experiment.Shop, topic, id, body string) {
	h.t.Helper()
	r := h.do("POST", "/api/webhooks", "", body, "Content-Type", "application/json",
		webhooks.HeaderTopic, topic, webhooks.HeaderShop, h.domain, webhooks.HeaderID, id,
		webhooks.HeaderSignature, webhooks.Sign([]byte(h.cfg.Platform.WebhookSecret), []byte(body)))
	if r.status != 200 {
		h.t.Fatalf("%s webhook = %d %s", topic, r.status, r.raw)
	}
	if err := h.app.webhookService().Process(context.Background(), shop.ID, id, experiment.WebhookAttempt{Try: 1}); err != nil {
		h.t.Fatal(err)
	}
}

// outcome is what processing a delivery recorded.
func (h *installHarness) outcome(shopID int64, id string) string {
	h.t.Helper()
	d, err := store.WebhookRepo{DB: h.app.DB}.FindDelivery(context.Background(), shopID, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return d.Outcome
}

// TestEndedTestReleasedByHousekeeping: over real HTTP, real stores and the
// fake platform, a price test ended through /v1 keeps its duplicate variant
// while a visitor's cart may still hold it, and the worker's hourly
// housekeeping deletes it jobs.release_after after the end, once, leaving
// the shop's price function for the next price test.
func TestEndedTestReleasedByHousekeeping(t *testing.T) {
	t.Parallel()
	const after = 48 * time.Hour
	h := newInstallHarness(t, func(c *config.Config) { c.Jobs.ReleaseAfter = after })
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "test"})
	_, token := h.installForPriceTests(ctx)
	const original = "gid://shopify/ProductVariant/102"
	r := h.do("POST", "/v1/experiments", token, fmt.Sprintf(`{"type":"price","name":"Ends","shared":{"price":{"product_ids":["gid://shopify/Product/102"]}},
		"test_groups":[{"index":0,"name":"Control","split":50},{"index":1,"name":"Variant","split":50,
		"content":{"prices":[{"product_variant_id":%q,"price":{"amount":"27.00","currency":"EUR"}}]}}]}`, original), "Content-Type", "application/json")
	id, _ := r.body["id"].(string)
	for _, action := range []string{"start", "end"} {
		if r := h.do("POST", "/v1/experiments/"+id+"/"+action, token, ""); r.status != 200 {
			t.Fatalf("%s = %d %s", action, r.status, r.raw)
		}
	}
	if d := h.fake.Duplicates(h.domain, original); len(d) != 1 {
		t.Fatalf("duplicates after the end: %v, want the one a cart may still hold", d)
	}
	if err := h.app.housekeep(ctx, time.Now().Add(after-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if d := h.fake.Duplicates(h.domain, original); len(d) != 1 {
		t.Fatalf("duplicates before %v had passed: %v", after, d)
	}
	for range 2 {
		if err := h.app.housekeep(ctx, time.Now().Add(after+time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if d := h.fake.Duplicates(h.domain, original); len(d) != 0 {
		t.Fatalf("duplicates after the release: %v", d)
	}
	if _, ok := h.fake.CartTransform(h.domain, platform.PriceFunction); !ok {
		t.Fatal("the release took the shop's price function")
	}
	if n := h.countWhere(`SELECT count(*) FROM audit_log WHERE action = 'experiment.release_platform'
		AND resource_id = $1 AND reason LIKE '%2 days ago or more: removed 1 duplicate variants%'`, id); n != 1 {
		t.Fatalf("%d audit records of the release, want 1", n)
	}
}
