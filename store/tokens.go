package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/liftab/lift/experiment"
)

// HashSecret is the stored form of a token secret.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// CreateToken issues a token for the shop and returns it with its secret,
// which is never stored and cannot be shown again. Returns KindForbidden
// api_access_disabled when the shop is not enabled for the API.
func (db *DB) CreateToken(ctx context.Context, shopID int64, scope experiment.Scope) (*experiment.Token, string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", fmt.Errorf("store.CreateToken: %w", err)
	}
	secret := experiment.TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	var tok experiment.Token
	_, err := db.Write(ctx, experiment.WriteMeta{ShopID: shopID, Action: "token.create", ResourceType: "api_token"}, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) {
		var enabled bool
		if err := tx.tx.QueryRow(ctx, `SELECT api_enabled FROM shops WHERE id = $1 FOR SHARE`, shopID).Scan(&enabled); err != nil {
			return experiment.WriteResult{}, notFound(err, "shop_not_found", "no shop %d", shopID)
		}
		if !enabled {
			return experiment.WriteResult{}, experiment.Errorf(experiment.KindForbidden, "api_access_disabled",
				"This shop is not enabled for the API; no token can be created until it is.")
		}
		err := tx.tx.QueryRow(ctx, `INSERT INTO api_tokens (shop_id, secret_hash, scope, created_at)
			VALUES ($1, $2, $3, $4) RETURNING id, shop_id, scope, created_at, revoked_at`,
			shopID, HashSecret(secret), string(scope), tx.now).
			Scan(&tok.ID, &tok.ShopID, &tok.Scope, &tok.CreatedAt, &tok.RevokedAt)
		return experiment.WriteResult{ResourceID: strconv.FormatInt(tok.ID, 10)}, err
	})
	if err != nil {
		return nil, "", fmt.Errorf("store.CreateToken shop %d: %w", shopID, err)
	}
	return &tok, secret, nil
}

// FindTokenBySecret returns the token with that secret and its shop, or
// KindNotFound token_not_found.
func (db *DB) FindTokenBySecret(ctx context.Context, secret string) (*experiment.Token, *experiment.Shop, error) {
	row := db.pool.QueryRow(ctx, `SELECT t.id, t.shop_id, t.scope, t.created_at, t.revoked_at, `+prefixed("s.", shopColumns)+`
		FROM api_tokens t JOIN shops s ON s.id = t.shop_id WHERE t.secret_hash = $1`, HashSecret(secret))
	var tok experiment.Token
	var s experiment.Shop
	err := row.Scan(&tok.ID, &tok.ShopID, &tok.Scope, &tok.CreatedAt, &tok.RevokedAt,
		&s.ID, &s.Domain, &s.Name, &s.Timezone, &s.Currency, &s.APIEnabled, &s.Plan, &s.Features,
		&s.SubscriptionActive, &s.BillingCapReached, &s.AllowanceExhausted, &s.AnnualBilling,
		&s.RaisedProductLimit, &s.CarrierService, &s.InstalledAt, &s.UninstalledAt, &s.AnalyticsMeasurementID)
	if err != nil {
		return nil, nil, fmt.Errorf("store.FindTokenBySecret: %w", notFound(err, "token_not_found", "no such token"))
	}
	return &tok, &s, nil
}

// RevokeToken revokes a token; revoking a revoked token changes nothing.
// Returns KindNotFound token_not_found when absent.
func (db *DB) RevokeToken(ctx context.Context, id int64) (*experiment.Token, error) {
	var tok experiment.Token
	_, err := db.Write(ctx, experiment.WriteMeta{Action: "token.revoke", ResourceType: "api_token"}, func(ctx context.Context, tx *Tx) (experiment.WriteResult, error) {
		err := tx.tx.QueryRow(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1
			RETURNING id, shop_id, scope, created_at, revoked_at`, id, tx.now).
			Scan(&tok.ID, &tok.ShopID, &tok.Scope, &tok.CreatedAt, &tok.RevokedAt)
		if err != nil {
			return experiment.WriteResult{}, notFound(err, "token_not_found", "no token %d", id)
		}
		return experiment.WriteResult{ShopID: tok.ShopID, ResourceID: strconv.FormatInt(id, 10)}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store.RevokeToken %d: %w", id, err)
	}
	return &tok, nil
}

func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
