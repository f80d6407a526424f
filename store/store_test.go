package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/liftab/lift/experiment"
	"github.com/liftab/lift/lifttest"
	"github.com/liftab/lift/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{URL: lifttest.PostgresURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func newShop(t *testing.T, db *store.DB, domain string, apiEnabled bool) *experiment.Shop {
	t.Helper()
	ctx := context.Background()
	s, err := db.CreateShop(ctx, experiment.Shop{Domain: domain, Timezone: "UTC", Currency: "USD", Plan: "growth"})
	if err != nil {
		t.Fatal(err)
	}
	s, err = db.UpdateShop(ctx, s.ID, store.ShopUpdate{APIEnabled: &apiEnabled})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	e, ok := experiment.AsError(err)
	if !ok || e.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := context.Background()

	t.Run("ErrAPIAccessDisabled", func(t *testing.T) {
		s := newShop(t, db, "off.example", false)
		_, _, err := db.CreateToken(ctx, s.ID, experiment.ScopeRead)
		wantCode(t, err, "api_access_disabled")
	})
	t.Run("CreateFindRevoke", func(t *testing.T) {
		s := newShop(t, db, "on.example", true)
		tok, secret, err := db.CreateToken(ctx, s.ID, experiment.ScopeWrite)
		if err != nil {
			t.Fatal(err)
		}
		if !experiment.WellFormedSecret(secret) {
			t.Fatalf("secret %q not well formed", secret)
		}
		got, shop, err := db.FindTokenBySecret(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != tok.ID || shop.Domain != "on.example" || got.Scope != experiment.ScopeWrite || got.RevokedAt != nil {
			t.Fatalf("found %+v of %s", got, shop.Domain)
		}
		if _, err := db.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		got, _, err = db.FindTokenBySecret(ctx, secret)
		if err != nil || got.RevokedAt == nil {
			t.Fatalf("token not revoked: %+v, %v", got, err)
		}
		_, _, err = db.FindTokenBySecret(ctx, secret+"x")
		wantCode(t, err, "token_not_found")
	})
}

func TestIdempotencyClaims(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := context.Background()
	s := newShop(t, db, "idem.example", true)
	claim := func(key, hash string) experiment.ClaimResult {
		t.Helper()
		r, err := db.ClaimIdempotencyKey(ctx, s.ID, key, []byte(hash), time.Minute, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := claim("k1", "a"); r.Outcome != experiment.Claimed {
		t.Fatalf("first claim: %v", r.Outcome)
	}
	if r := claim("k1", "a"); r.Outcome != experiment.InUse {
		t.Fatalf("second claim while running: %v", r.Outcome)
	}
	if r := claim("k1", "b"); r.Outcome != experiment.Mismatch {
		t.Fatalf("claim with other body: %v", r.Outcome)
	}
	c := experiment.IdempotencyClaim{ShopID: s.ID, Key: "k1"}
	_, err := db.Write(experiment.WithIdempotencyClaim(ctx, c), experiment.WriteMeta{ShopID: s.ID, Action: "test.write", ResourceType: "thing"},
		func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
			return experiment.WriteResult{ResourceID: "1", Status: 201, Body: []byte(`{"id":"1"}`)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	r := claim("k1", "a")
	if r.Outcome != experiment.Replay || r.Status != 201 || string(r.Body) != `{"id":"1"}` {
		t.Fatalf("replay: %+v", r)
	}
	if r := claim("k2", "a"); r.Outcome != experiment.Claimed {
		t.Fatal("k2 not claimed")
	}
	if err := db.ReleaseIdempotencyKey(ctx, experiment.IdempotencyClaim{ShopID: s.ID, Key: "k2"}); err != nil {
		t.Fatal(err)
	}
	if r := claim("k2", "b"); r.Outcome != experiment.Claimed {
		t.Fatal("released key not claimable again")
	}
}

func TestWriteIsAllOrNothing(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := experiment.WithActor(context.Background(), experiment.Actor{Name: "token", TokenID: 7, RequestID: "req-1", Method: "POST", Path: "/v1/x"})
	s := newShop(t, db, "audit.example", true)

	t.Run("AuditRecorded", func(t *testing.T) {
		_, err := db.Write(ctx, experiment.WriteMeta{ShopID: s.ID, Action: "thing.create", ResourceType: "thing"},
			func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
				return experiment.WriteResult{ResourceID: "42"}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		entries, err := db.FindAuditEntries(context.Background(), s.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		e := entries[0]
		if e.Action != "thing.create" || e.ResourceID != "42" || e.Actor != "token" || e.TokenID == nil || *e.TokenID != 7 || e.RequestID != "req-1" {
			t.Fatalf("audit entry %+v", e)
		}
	})
	t.Run("ErrFromFnRollsBack", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := db.Write(ctx, experiment.WriteMeta{ShopID: s.ID, Action: "thing.fail", ResourceType: "thing"},
			func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
				return experiment.WriteResult{}, boom
			})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		// A committed write after it proves the lookup sees entries: an empty
		// list must not pass for a rolled-back one.
		if _, err := db.Write(ctx, experiment.WriteMeta{ShopID: s.ID, Action: "thing.after", ResourceType: "thing"},
			func(ctx context.Context, tx *store.Tx) (experiment.WriteResult, error) {
				return experiment.WriteResult{ResourceID: "43"}, nil
			}); err != nil {
			t.Fatal(err)
		}
		entries, err := db.FindAuditEntries(context.Background(), s.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		after := false
		for _, e := range entries {
			if e.Action == "thing.fail" {
				t.Fatal("audit entry of a failed write")
			}
			after = after || e.Action == "thing.after"
		}
		if !after {
			t.Fatalf("the committed write's audit entry is missing: %+v", entries)
		}
	})
}
